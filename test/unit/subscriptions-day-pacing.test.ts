import { DAY_MS, dayStartOf, passAllowance, passStep } from '../../src/subscriptions/day-pacing';

/** Issue 37, item 2: a day's renewals are spread over what is left of the day, not sent at its first minute. */
describe('a renewal pass\'s allowance', () => {
  const first = Date.parse('2026-12-01T00:00:00Z');

  test('when 3,000 renewals fall due at midnight, then a pass of one second takes a day\'s share of them, not its whole batch', () => {
    expect(passAllowance(3000, first, 1000, 50)).toBe(1);
    expect(passAllowance(3000, first, 60_000, 50)).toBe(3); // ceil(3000 / 1440)
  });

  test('when the day is nearly over, then what is left is taken at once, up to the batch', () => {
    expect(passAllowance(100, first + DAY_MS - 1000, 1000, 50)).toBe(50);
    expect(passAllowance(20, first + DAY_MS - 500, 1000, 50)).toBe(20);
  });

  test('when little is due, then a pass still takes one (renewals never stall)', () => {
    expect(passAllowance(1, first + 1, 25, 50)).toBe(1);
    expect(passAllowance(0, first + 1, 25, 50)).toBe(1);
  });

  test('when tokengate\'s clock moved further than a poll since the pass before (a late pass, a test clock running fast), then the pass takes that time\'s share', () => {
    // A month in minutes: the clock moves 36 minutes between passes a second apart; 3,000 due at midnight.
    const step = passStep(first + 36 * 60_000, first, 1000);
    expect(step).toBe(36 * 60_000);
    expect(passAllowance(3000, first + 36 * 60_000, step, 500)).toBe(77); // ceil(3000 × 36 / (1440 - 36))
    expect(passStep(first + 500, first, 1000)).toBe(1000);
    expect(passStep(first, undefined, 1000)).toBe(1000);
    expect(passStep(first + 40 * DAY_MS, first, 1000)).toBe(DAY_MS);
  });

  test('a day is a UTC day of tokengate\'s clock', () => {
    expect(dayStartOf(first + 13 * 3_600_000)).toBe(first);
    expect(dayStartOf(first - 1)).toBe(first - DAY_MS);
  });
});
