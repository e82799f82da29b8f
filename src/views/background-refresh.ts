import type { Logger } from '../observability/logger';

/**
 * A stale view answered at once and refreshed behind the answer (stale-while-revalidate, guarantee 9), the same
 * for every view (sales, customers and their payment methods): one refresh per entry at a time in this process;
 * across replicas the refresh itself claims its entry (one replica refreshes it) and spends spare budget only
 * (REFRESH_CLASS, no wait). Its failures only delay it: the next read past the bound tries again.
 */
export interface BackgroundRefresh {
  start(key: string, refresh: () => Promise<void>): void;
}

export function createBackgroundRefresh(logger: Logger, what: string): BackgroundRefresh {
  const running = new Map<string, Promise<void>>();
  return {
    start(key, refresh) {
      if (running.has(key)) return;
      const run = refresh()
        .catch((err: unknown) => {
          logger.debug(`a stale ${what} view was not refreshed now`, { err });
        })
        .finally(() => running.delete(key));
      running.set(key, run);
    },
  };
}
