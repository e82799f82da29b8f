/**
 * One command for what a turn of the event loop asks of one key (issue 40, item 1): the sales whose answers
 * arrived in one read of a socket run on in the microtasks of that one callback, and each adds its item here;
 * once they have all run (process.nextTick, queued behind them), each key's items go as one command. Every adder
 * awaits that command, so each still has its own write done (or failed) before it answers.
 */
export function coalescer<T>(send: (key: string, items: T[]) => Promise<unknown>): (key: string, item: T) => Promise<void> {
  interface Batch { items: T[]; done: Promise<void>; resolve: () => void; reject: (err: unknown) => void }
  let pending: Map<string, Batch> | undefined;
  const flush = () => {
    const batches = pending as Map<string, Batch>;
    pending = undefined;
    for (const [key, b] of batches) {
      let sent: Promise<unknown>;
      try {
        sent = send(key, b.items);
      } catch (err) {
        sent = Promise.reject(err);
      }
      sent.then(() => b.resolve(), b.reject);
    }
  };
  return (key, item) => {
    if (!pending) {
      pending = new Map();
      process.nextTick(flush);
    }
    let batch = pending.get(key);
    if (!batch) {
      let resolve: () => void = () => undefined;
      let reject: (err: unknown) => void = () => undefined;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      batch = { items: [], done, resolve, reject };
      pending.set(key, batch);
    }
    batch.items.push(item);
    return batch.done;
  };
}
