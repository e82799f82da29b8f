import type { Lifecycle, LifecycleTx } from '../lifecycle';
import type { LifecycleEvent } from '../webhooks/events';
import { nextPacificHour, pacificDate, pacificHourDaysAfter } from './pacific';
import { achEvent } from './webhook-objects';

/** Pacific hours of the sandbox's ACH day (gateway-facts.md, ACH). */
export const SUBMIT_HOUR = 17;
export const SETTLE_HOUR = 8;
/** A return test account comes back on the third day after its submission, at the settle hour. */
export const RETURN_DAYS = 3;

/**
 * The sandbox's ACH clock (gateway-facts.md, ACH), read from the sandbox clock (clock.ts): an approved check is
 * pending (P) until the next 5 pm Pacific, then submitted (B, `ach.submitted`); settled (S, `ach.settled`) at the
 * next 8 am Pacific; a return test account is returned (R, `ach.returned`) at 8 am Pacific on the third day after
 * its submission, after it looked settled. Two things drive it: the clock's `onAdvance` (a jump of three days
 * takes effect at once, each step stamped with its own due time) and a wall-clock timer (a check submitted at a
 * real 5 pm moves without a call). Each step is applied once: a check leaves the clock's list when it is done.
 */
export class AchClock {
  private readonly active = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly life: Lifecycle,
    private readonly announce: (event: LifecycleEvent) => void,
  ) {}

  /** A check that may still move (pending, submitted, or settled with a return due). */
  track(tx: LifecycleTx): void {
    if (tx.check && ['P', 'B', 'S'].includes(tx.check.status)) this.active.add(tx.key);
  }

  /** Applies every step due by `now`, oldest check first. */
  run(now: number): void {
    for (const key of [...this.active]) {
      const tx = this.life.get(key);
      if (!tx?.check || !this.step(tx, now)) this.active.delete(key);
    }
  }

  /** The wall-clock driver: every `everyMs`, unref'd so it never keeps a process alive. */
  start(now: () => number, everyMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.run(now()), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  reset(): void {
    this.active.clear();
  }

  /** Checks still on the clock (tests, stats). */
  get size(): number {
    return this.active.size;
  }

  /** Moves `tx` as far as `now` allows; false when it will never move again. */
  private step(tx: LifecycleTx, now: number): boolean {
    const c = tx.check;
    if (!c) return false;
    for (;;) {
      if (c.status === 'P') {
        const due = nextPacificHour(tx.created, SUBMIT_HOUR);
        if (due > now) return true;
        c.status = 'B';
        c.submittedAt = due;
        this.announce(achEvent(this.life, tx, 'ach.submitted', { status: 'P' }, { status: 'B' }, due));
      } else if (c.status === 'B') {
        const due = nextPacificHour(c.submittedAt ?? tx.created, SETTLE_HOUR);
        if (due > now) return true;
        c.status = 'S';
        c.settledAt = due;
        this.announce(achEvent(this.life, tx, 'ach.settled', { status: 'B' }, { status: 'S' }, due));
        if (!c.returnsWith) return false;
      } else if (c.status === 'S' && c.returnsWith) {
        const due = pacificHourDaysAfter(c.submittedAt ?? tx.created, RETURN_DAYS, SETTLE_HOUR);
        if (due > now) return true;
        if (c.failsInstead) {
          // SANDBOX_CREDIT_RETURNS `failed`: the credit the bank refused is reported as an error.
          c.status = 'E';
          this.announce(achEvent(this.life, tx, 'ach.failed', { status: 'S' }, { status: 'E' }, due));
          return false;
        }
        c.status = 'R';
        c.returnedAt = due;
        const reason = `${c.returnsWith.code}: ${c.returnsWith.text}`;
        this.announce(achEvent(this.life, tx, 'ach.returned', { status: 'S' }, { status: 'R', returned: pacificDate(due), reason }, due));
        return false;
      } else {
        return false;
      }
    }
  }
}
