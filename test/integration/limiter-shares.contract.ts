import { performance } from 'node:perf_hooks';
import { maxInAnyWindow, RateLimitExceededError, type UpstreamScheduler } from '../../src/limiter';
import { counterValue, GUARANTEED, LIMITS, recorder, setup, sleep, SPAN, TOL, type Fired, type SchedulerBackend, type Setup } from './limiter-harness';

/**
 * Who gets the budget when it runs short, held by BOTH implementations (run by limiter-suite.test.ts and
 * cluster-limiter.test.ts): the day's pacing (issue 25: reads and background work give way to money), the
 * background class, honest and spread Retry-After (issue 25, item 4), and each caller's fair share of the
 * reads (issue 30, guarantee 11). Windows of limiter-harness.ts: 500 ms + 200 ms margin.
 */
const refusal = (c: Fired) => c.error as RateLimitExceededError;

async function gauge(s: Setup, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = await s.registry.metrics();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

export function describeSharesContract(name: string, backend: SchedulerBackend): void {
  describe(`upstream budget shares (${name})`, () => {
    let s: Setup | undefined;
    afterEach(async () => {
      await s?.close();
      s = undefined;
    });

    it('when reads storm a day budget of 40 and then 10 sales arrive, then reads stop at half the day and all 10 sales start', async () => {
      s = await setup(backend, 2, { perWindow: 20, perDay: 40, dayWindowMs: 60_000 }, { saleReservedSlots: 2, readMaxWaitMs: 3000 });
      const at = (i: number) => s?.replicas[i % 2] as UpstreamScheduler;
      const rec = recorder();
      await Promise.all(Array.from({ length: 50 }, (_, i) => rec.fire(at(i), 'read')));
      // Reads may hold half of what the money classes leave of the day: 20 of 40 while no sale ran. A caller that
      // woke late (a busy box's pause: counted) leaves its slot used, unstarted: the 20 are starts and those.
      const lateWakes = () => counterValue(s?.registry as Setup['registry'], 'tokengate_limiter_late_wakes_total');
      const readLate = await lateWakes();
      expect(rec.starts('read').length + readLate).toBe(20);
      const refused = rec.calls.filter((c) => c.error);
      expect(refused.every((c) => c.error instanceof RateLimitExceededError)).toBe(true);
      // Told to come back when the day frees (a day span on), not in a second.
      expect(Math.min(...refused.map((c) => refusal(c).retryAfterMs))).toBeGreaterThan(50_000);
      // All start: a sale waits at most 5 s (its class's maximum wait), and the day frees a minute on, so had reads
      // taken the day, every sale would be refused. How soon each starts is the limiter's to say, not our clock's.
      const sales = await Promise.all(Array.from({ length: 10 }, (_, i) => rec.fire(at(i), 'sale')));
      expect(sales.filter((c) => c.error)).toEqual([]);
      const saleLate = (await lateWakes()) - readLate;
      // Once money used 10, reads may hold half of 30: still 20 in, so a read is refused at once.
      const late = await rec.fire(at(0), 'read');
      expect(late.error).toBeInstanceOf(RateLimitExceededError);
      // The gauges read the shared day at scrape time.
      expect(await gauge(s, 'tokengate_budget_day_remaining', { endpoint: 'v2' })).toBe(10 - saleLate);
      expect(await gauge(s, 'tokengate_budget_day_used', { class: 'read' })).toBe(20);
      expect(await gauge(s, 'tokengate_budget_day_used', { class: 'other' })).toBe(10 + saleLate);
    });

    it('when background work asks, then it starts only in the slots reads leave it, is refused at once rather than queued, and never delays a read or a sale', async () => {
      // N = 5, R = 3: reads may hold 2 entries of any window, background round(4·3/3) = 4 less, so 1.
      s = await setup(backend, 2, {}, { saleReservedSlots: 3 });
      const at = (i: number) => s?.replicas[i % 2] as UpstreamScheduler;
      const rec = recorder();
      const queued = Array.from({ length: 3 }, (_, i) => rec.fire(at(i), 'background', { maxWaitMs: 3000 }));
      await sleep(20);
      // Refused, not queued: its default maximum wait is 0, so its first reservation decides, with no sleep before it
      // (issue 41: judged by that, not by elapsed ms; withoutTimers() cannot be used here, the queued calls sleep).
      const now = await rec.fire(at(0), 'background');
      expect(now.error).toBeInstanceOf(RateLimitExceededError);
      expect(refusal(now).reason).toBe('max_wait');
      expect(now.attempts).toHaveLength(0);
      // The background call of this window and this read are the reads' 2; background queued in later windows
      // is not in the read's way (reads do not queue behind it): asked to start now or never, the read and the sale
      // start (the limiter judges "now"; only a caller that woke late, counted, may be refused).
      const read = await rec.fire(at(1), 'read', { maxWaitMs: 0 });
      const sale = await rec.fire(at(1), 'sale', { maxWaitMs: 0 });
      await Promise.all(queued);
      expect(rec.calls.filter((c) => c.error && ![now, read, sale].includes(c))).toEqual([]);
      expect([read, sale].filter((c) => c.error).length).toBeLessThanOrEqual(await counterValue(s.registry, 'tokengate_limiter_late_wakes_total'));
      expect(maxInAnyWindow(rec.starts('background'), GUARANTEED)).toBeLessThanOrEqual(1);
    });

    it('when a burst is refused, then each refused caller is told a later start than the one before, a slot apart', async () => {
      // A 5 s window, never waited out (a slot is then 1,040 ms): the refusals are asked one after another, each
      // bracketed by when the test asked and heard, and the window stays full however slowly a busy box asks.
      s = await setup(backend, 2, { windowMs: 5000 }, { saleReservedSlots: 0 });
      const span = 5000 + LIMITS.marginMs;
      const slot = span / LIMITS.perWindow;
      const at = (i: number) => s?.replicas[i % 2] as UpstreamScheduler;
      const rec = recorder();
      // The window is full: five slots used, now (start now or never: a late wake on a busy box refuses its caller
      // but leaves its slot used, so the window is the same).
      const filled = await Promise.all(Array.from({ length: 5 }, (_, i) => rec.fire(at(i), 'sale', { maxWaitMs: 0 })));
      const filledAt = performance.now();
      // Each refusal is told "retry after" from the limiter's clock at the moment it decided, somewhere between when
      // the test asked and when it heard: so the start it was told lies between asked + retryAfter and heard + retryAfter.
      const told: { lo: number; hi: number }[] = [];
      for (let i = 0; i < 6; i++) {
        const c = await rec.fire(at(i), 'sale', { maxWaitMs: 100 });
        const heard = performance.now();
        expect(c.error).toBeInstanceOf(RateLimitExceededError);
        expect(c.attempts).toHaveLength(0);
        told.push({ lo: c.arrivedAt + refusal(c).retryAfterMs, hi: heard + refusal(c).retryAfterMs });
      }
      // The first could start when the window frees: a span after the first of the five was reserved, which was
      // between asking for them and hearing the last (Redis's clock against ours: TOL).
      const firstAsked = Math.min(...filled.map((c) => c.arrivedAt));
      expect((told[0] as { hi: number }).hi - firstAsked).toBeGreaterThanOrEqual(span - TOL);
      expect((told[0] as { lo: number }).lo - filledAt).toBeLessThanOrEqual(span + TOL);
      // Each next one a slot (span / 5) later, not all together: the gap between two told starts is a slot, within
      // what the brackets allow.
      for (let i = 1; i < told.length; i++) {
        const [prev, next] = [told[i - 1] as { lo: number; hi: number }, told[i] as { lo: number; hi: number }];
        expect(next.hi - prev.lo).toBeGreaterThanOrEqual(slot - 1);
        expect(next.lo - prev.hi).toBeLessThanOrEqual(slot + 1);
      }
    });

    it('when one caller loops on reads beside other callers\' reads and sales, then that caller alone is refused, at once, and the others start without waiting', async () => {
      // N = 16, R = 2: reads may hold 14 entries of any window; one caller at most a quarter of that (3). Four
      // shoppers every 500 ms (2 each in any span), the looper's 3 and a sale every 500 ms (2) fit in 14.
      s = await setup(backend, 3, { perWindow: 16 }, { saleReservedSlots: 2, readMaxWaitMs: 3000 });
      const at = (i: number) => s?.replicas[i % 3] as UpstreamScheduler;
      const rec = recorder();
      const until = performance.now() + 2100;
      const looper: Fired[] = [];
      const loop = async (i: number) => {
        while (performance.now() < until) {
          const c = await rec.fire(at(i), 'read', { caller: 'looper' });
          looper.push(c);
          if (c.error) await sleep(20);
        }
      };
      const steady = async (every: number, fire: () => Promise<Fired>) => {
        const mine: Promise<Fired>[] = [];
        while (performance.now() < until) {
          mine.push(fire());
          await sleep(every);
        }
        return Promise.all(mine);
      };
      // The others ask to start now or never (maxWaitMs 0): the limiter itself says whether a slot was free at once,
      // on its own clock, so a busy box cannot make a start look late (issue 41); only a caller that woke late
      // (counted) may be refused.
      const [others, sales] = await Promise.all([
        Promise.all(Array.from({ length: 4 }, (_, i) => steady(500, () => rec.fire(at(i), 'read', { caller: `shopper-${i}`, maxWaitMs: 0 })))).then((r) => r.flat()),
        steady(500, () => rec.fire(at(2), 'sale', { maxWaitMs: 0 })),
        ...Array.from({ length: 8 }, (_, i) => loop(i)),
      ]);
      const lateWakes = await counterValue(s.registry, 'tokengate_limiter_late_wakes_total');
      expect([...others, ...sales].filter((c) => c.error).length).toBeLessThanOrEqual(lateWakes);
      // The looper: its share and no more, every other try refused for its share, told when that frees.
      const started = looper.filter((c) => !c.error).map((c) => c.attempts[0] as number);
      expect(maxInAnyWindow(started, GUARANTEED)).toBeLessThanOrEqual(3);
      const refused = looper.filter((c) => c.error);
      expect(refused.length).toBeGreaterThan(20);
      expect(refused.every((c) => refusal(c).reason === 'caller_share' && refusal(c).retryAfterMs <= SPAN + 1)).toBe(true);
      const text = await s.registry.metrics();
      expect(text).toMatch(/tokengate_limiter_refusals_total\{[^}]*class="read"[^}]*reason="caller_share"[^}]*\} [1-9]/);
    });

    it('when a caller has spent its share of the day, then it is refused until that frees while another caller still starts', async () => {
      // Day 40, reads half of it (20), one caller a tenth of that (2); the minute share is no limit here.
      s = await setup(backend, 2, { perWindow: 20, perDay: 40 }, { saleReservedSlots: 2, callerShare: 1 });
      const at = (i: number) => s?.replicas[i % 2] as UpstreamScheduler;
      const rec = recorder();
      const mine = await Promise.all(Array.from({ length: 3 }, (_, i) => rec.fire(at(i), 'read', { caller: 'a' })));
      expect(mine.filter((c) => !c.error)).toHaveLength(2);
      const over = mine.find((c) => c.error) as Fired;
      expect(refusal(over).reason).toBe('caller_share');
      expect(refusal(over).retryAfterMs).toBeGreaterThan(50_000);
      expect((await rec.fire(at(1), 'read', { caller: 'b' })).error).toBeUndefined();
    });
  });
}
