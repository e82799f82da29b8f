/**
 * The sandbox's own clock: what its dates are read from (a transaction's created time, a batch's close, and the
 * ACH clock's cut-offs). It is the wall clock plus an offset that only ever grows, moved by
 * `POST /_sandbox/clock` `{"advance_ms": N}` (contract, "Subscriptions") and, for the sandbox tokengate embeds, by
 * tokengate's own `POST /test/clock`. The rate counter, the webhook retries and a payment key's life stay on the wall
 * clock: they mirror the gateway's real windows, real deliveries and the real minutes between a shopper's form and
 * the merchant's call, which no test clock moves.
 *
 * Whatever waits on a date (the batch that closes at a set time, a check that submits at the evening cut-off) is
 * told at once when the clock moves (`onAdvance`), so a jump of three days takes effect, webhooks included, without
 * waiting for the next call.
 */
export class SandboxClock {
  private offset = 0;
  private readonly listeners = new Set<(now: number) => void>();

  now(): number {
    return Date.now() + this.offset;
  }

  /** How far ahead of the wall clock this clock is (ms). */
  get offsetMs(): number {
    return this.offset;
  }

  /** Moves the clock forward by `ms` (a non-negative integer) and answers the new time. */
  advance(ms: number): number {
    if (!Number.isInteger(ms) || ms < 0) throw new RangeError('advance_ms must be a non-negative integer');
    this.offset += ms;
    const now = this.now();
    for (const listener of this.listeners) listener(now);
    return now;
  }

  /** Moves the clock to at least `offsetMs` ahead of the wall clock (never back); answers the new time. */
  catchUp(offsetMs: number): number {
    return this.advance(Math.max(0, Math.floor(offsetMs) - this.offset));
  }

  /** Called with the new time after every advance; returns a function that unsubscribes. */
  onAdvance(listener: (now: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
