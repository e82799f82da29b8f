import { AchClock } from '../../src/sandbox/ach/ach-clock';
import { nextPacificHour, pacificHourDaysAfter } from '../../src/sandbox/ach/pacific';
import { Lifecycle, type LifecycleTx } from '../../src/sandbox/lifecycle';
import type { LifecycleEvent } from '../../src/sandbox/webhooks/events';
import { eventually } from '../support/wait';

/** The ACH clock's Pacific cut-offs and its wall-clock driver (src/sandbox/ach/; gateway-facts.md, ACH). */
const check = (key: string, created: number, account?: string): LifecycleTx => ({
  key, refnum: '1', kind: 'sale', resultCode: 'A', state: 'unsettled', created, amountCents: 100, authCents: 100, capturedCents: 100,
  refundedCents: 0, adjustedCents: 0, refunds: [], invoice: '', authcode: '1',
  check: { accountholder: 'A', accountLast4: '1234', routingLast4: '0015', accountType: 'checking', format: 'WEB', trackingcode: 't', status: 'P', ...(account ? { returnsWith: { code: 'R01', text: 'Insufficient Funds' } } : {}) },
});

describe('the ACH clock', () => {
  it('when it is 2 pm Pacific in winter, then the cut-off is 5 pm PST (01:00 UTC) and settlement 8 am PST the next day; in summer the hours follow PDT', () => {
    const winter = Date.UTC(2026, 10, 27, 22, 0);
    expect(new Date(nextPacificHour(winter, 17)).toISOString()).toBe('2026-11-28T01:00:00.000Z');
    expect(new Date(nextPacificHour(nextPacificHour(winter, 17), 8)).toISOString()).toBe('2026-11-28T16:00:00.000Z');
    const summer = Date.UTC(2026, 6, 1, 1, 0); // 6 pm PDT, after the cut-off
    expect(new Date(nextPacificHour(summer, 17)).toISOString()).toBe('2026-07-02T00:00:00.000Z');
    // The day daylight saving starts: 8 am PDT.
    expect(new Date(pacificHourDaysAfter(Date.UTC(2026, 2, 7, 20, 0), 1, 8)).toISOString()).toBe('2026-03-08T15:00:00.000Z');
  });

  it('when the wall clock alone passes the cut-offs (no clock jump, no call), then its timer moves the check and says so, each step once', async () => {
    const life = new Lifecycle();
    const created = Date.UTC(2026, 10, 27, 22, 0);
    const tx = check('dach1', created, '10178101');
    life.add(tx);
    const events: LifecycleEvent[] = [];
    let now = created;
    const clock = new AchClock(life, (e) => events.push(e));
    clock.track(tx);
    clock.start(() => now, 10);
    try {
      now = created + 5 * 86_400_000;
      await eventually(() => events.length === 3);
      expect(events.map((e) => e.type)).toEqual(['ach.submitted', 'ach.settled', 'ach.returned']);
      expect(events[2]?.changes.new).toMatchObject({ status: 'R', returned: '2026-11-30', reason: 'R01: Insufficient Funds' });
      expect(clock.size).toBe(0);
    } finally {
      clock.stop();
    }
  });
});
