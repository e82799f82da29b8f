import { CLOCK_ADMIN, CLOCK_DEMO, parseAdvanceMs } from '../../src/http/clock-advance';
import { InvalidRequest } from '../../src/http/errors';

/** `{"advance_ms": N}` for the admin port's /test/clock and the /demo page's /demo/clock: one parser, two bounds. */
describe('the clock\'s advance', () => {
  const DAY = 86_400_000;

  test('when the admin port is asked for 0 to ten years, then it is taken; the demo page takes 1 ms to 366 days', () => {
    expect(parseAdvanceMs({ advance_ms: 0 }, CLOCK_ADMIN)).toBe(0);
    expect(parseAdvanceMs({ advance_ms: 10 * 366 * DAY }, CLOCK_ADMIN)).toBe(10 * 366 * DAY);
    expect(parseAdvanceMs({ advance_ms: 1 }, CLOCK_DEMO)).toBe(1);
    expect(parseAdvanceMs({ advance_ms: 366 * DAY }, CLOCK_DEMO)).toBe(366 * DAY);
  });

  test('when it is backwards, a fraction, a string, absent or past the bound, then 400 naming body.advance_ms', () => {
    const cases: [unknown, typeof CLOCK_ADMIN | typeof CLOCK_DEMO][] = [
      [{ advance_ms: -1 }, CLOCK_ADMIN], [{ advance_ms: 1.5 }, CLOCK_ADMIN], [{ advance_ms: '5' }, CLOCK_ADMIN], [{}, CLOCK_ADMIN], [undefined, CLOCK_ADMIN],
      [{ advance_ms: 10 * 366 * DAY + 1 }, CLOCK_ADMIN], [{ advance_ms: 0 }, CLOCK_DEMO], [{ advance_ms: 366 * DAY + 1 }, CLOCK_DEMO],
    ];
    for (const [body, bounds] of cases) {
      let thrown: unknown;
      try {
        parseAdvanceMs(body, bounds);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(InvalidRequest);
      expect((thrown as InvalidRequest).details).toEqual([{ path: 'body.advance_ms', rule: bounds.rule }]);
    }
  });
});
