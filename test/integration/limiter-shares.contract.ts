import { performance } from 'node:perf_hooks';
import { maxInAnyWindow, RateLimitExceededError, type UpstreamScheduler } from '../../src/limiter';
import { counterValue, GUARANTEED, recorder, setup, sleep, SPAN, type Fired, type SchedulerBackend, type Setup } from './limiter-harness';

/**
 * Who gets the budget when it runs short, held by BOTH implementations (run by limiter-suite.test.ts and
 * cluster-limiter.test.ts): the day's pacing (issue 25: reads and background work give way to money), the
 * background class, honest and spread Retry-After (issue 25, item 4), and each caller's fair share of the
 * reads (issue 30, guarantee 11). Windows of limiter-harness.ts: 500 ms + 200 ms margin.
 */
const refusal = (c: Fired) => c.error as RateLimitExceededError;
const waitOf = (c: Fired) => (c.attempts[0] as number) - c.arrivedAt;

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
      // Reads may hold half of what the money classes leave of the day: 20 of 40 while no sale ran.
      expect(rec.starts('read')).toHaveLength(20);
      const refused = rec.calls.filter((c) => c.error);
      expect(refused.every((c) => c.error instanceof RateLimitExceededError)).toBe(true);
      // Told to come back when the day frees (a day span on), not in a second.
      expect(Math.min(...refused.map((c) => refusal(c).retryAfterMs))).toBeGreaterThan(50_000);
      const sales = await Promise.all(Array.from({ length: 10 }, (_, i) => rec.fire(at(i), 'sale')));
      expect(sales.filter((c) => c.error)).toEqual([]);
      for (const c of sales) expect(waitOf(c)).toBeLessThan(SPAN + 150 + s.stallMs());
      // Once money used 10, reads may hold half of 30: still 20 in, so a read is refused at once.
      const late = await rec.fire(at(0), 'read');
      expect(late.error).toBeInstanceOf(RateLimitExceededError);
      // The gauges read the shared day at scrape time.
      expect(await gauge(s, 'tokengate_budget_day_remaining', { endpoint: 'v2' })).toBe(10);
      expect(await gauge(s, 'tokengate_budget_day_used', { class: 'read' })).toBe(20);
      expect(await gauge(s, 'tokengate_budget_day_used', { class: 'other' })).toBe(10);
    });

    it('when background work asks, then it starts only in the slots reads leave it, is refused at once rather than queued, and never delays a read or a sale', async () => {
      // N = 5, R = 3: reads may hold 2 entries of any window, background round(4·3/3) = 4 less, so 1.
      s = await setup(backend, 2, {}, { saleReservedSlots: 3 });
      const at = (i: number) => s?.replicas[i % 2] as UpstreamScheduler;
      const rec = recorder();
      const queued = Array.from({ length: 3 }, (_, i) => rec.fire(at(i), 'background', { maxWaitMs: 3000 }));
      await sleep(20);
      const now = await rec.fire(at(0), 'background'); // its default maximum wait is 0
      expect(now.error).toBeInstanceOf(RateLimitExceededError);
      expect(performance.now() - now.arrivedAt).toBeLessThan(150 + s.stallMs());
      // The background call of this window and this read are the reads' 2; background queued in later windows
      // is not in the read's way (reads do not queue behind it).
      const reads = [await rec.fire(at(1), 'read')];
      const sale = await rec.fire(at(1), 'sale');
      await Promise.all(queued);
      expect(rec.calls.filter((c) => c.error && c !== now)).toEqual([]);
      expect(maxInAnyWindow(rec.starts('background'), GUARANTEED)).toBeLessThanOrEqual(1);
      for (const c of [...reads, sale]) expect(waitOf(c)).toBeLessThan(150 + s.stallMs());
    });

    it('when a burst is refused, then each refused caller is told a later start than the one before, a slot apart', async () => {
      s = await setup(backend, 2, {}, { saleReservedSlots: 0 });
      const at = (i: number) => s?.replicas[i % 2] as UpstreamScheduler;
      const rec = recorder();
      await Promise.all(Array.from({ length: 5 }, (_, i) => rec.fire(at(i), 'sale'))); // the window is full
      const refused = await Promise.all(Array.from({ length: 6 }, (_, i) => rec.fire(at(i), 'sale', { maxWaitMs: 100 })));
      expect(refused.every((c) => c.error instanceof RateLimitExceededError && c.attempts.length === 0)).toBe(true);
      const told = refused.map((c) => c.arrivedAt + refusal(c).retryAfterMs).sort((a, b) => a - b);
      // The first could start when the window frees; each next one a slot (span / 5) later, not all together.
      expect((told[0] as number) - Math.min(...rec.starts())).toBeGreaterThan(SPAN - 60);
      for (let i = 1; i < told.length; i++) expect((told[i] as number) - (told[i - 1] as number)).toBeGreaterThan(SPAN / 5 - 40);
      expect((told[5] as number) - (told[0] as number)).toBeLessThan(5 * (SPAN / 5) + 60 + s.stallMs());
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
      const [others, sales] = await Promise.all([
        Promise.all(Array.from({ length: 4 }, (_, i) => steady(500, () => rec.fire(at(i), 'read', { caller: `shopper-${i}` })))).then((r) => r.flat()),
        steady(500, () => rec.fire(at(2), 'sale')),
        ...Array.from({ length: 8 }, (_, i) => loop(i)),
      ]);
      const lateWakes = await counterValue(s.registry, 'tokengate_limiter_late_wakes_total');
      const slack = 150 + s.stallMs() + lateWakes * SPAN;
      expect([...others, ...sales].filter((c) => c.error)).toEqual([]);
      expect(Math.max(...others.map(waitOf))).toBeLessThan(slack);
      expect(Math.max(...sales.map(waitOf))).toBeLessThan(slack);
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
