import type { Tracing } from '../observability/tracing';
import type { UpstreamScheduler } from './types';

export const BUDGET_WAIT_SPAN = 'tokengate.budget.wait';

/**
 * The budget with a span for each wait: from the request for a slot until the call may start (or the refusal).
 * The gateway call itself runs in the caller's context, so its span is a sibling of the wait, not a child.
 * Without tracing the scheduler is returned as it is: nothing is added to the hot path.
 */
export function traceBudget(budget: UpstreamScheduler, tracing: Tracing | undefined): UpstreamScheduler {
  if (!tracing) return budget;
  const wait = (cls: string) => tracing.startSpan(BUDGET_WAIT_SPAN, { 'tokengate.budget.class': cls });
  return {
    run(cls, call, opts) {
      const span = wait(cls);
      const started = () => {
        span.end();
        return call();
      };
      return budget.run(cls, started, opts).catch((err: unknown) => {
        span.end(err); // a no-op when the wait already ended and the call failed
        throw err;
      });
    },
    acquire(cls, opts) {
      const span = wait(cls);
      return budget.acquire(cls, opts).then(
        () => span.end(),
        (err: unknown) => {
          span.end(err);
          throw err;
        },
      );
    },
    // The wait is measured where the slot is used: run() with `ahead` opens its span as any run() does.
    reserveAhead: (cls, opts) => budget.reserveAhead(cls, opts),
    close: () => budget.close(),
  };
}
