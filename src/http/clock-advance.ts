import { InvalidRequest } from './errors';

const DAY_MS = 86_400_000;

/**
 * `{"advance_ms": N}`, the body that moves tokengate's clock forward: the admin port's `/test/clock` (contract,
 * "Subscriptions": 0 to ten years) and the /demo page's `/demo/clock` (1 ms to 366 days: a button's step, never a
 * still clock or a decade). One parser, so both refuse the same way: 400 naming `body.advance_ms`.
 */
export const CLOCK_ADMIN = { min: 0, max: 10 * 366 * DAY_MS, rule: 'integer_0_to_10_years' } as const;
export const CLOCK_DEMO = { min: 1, max: 366 * DAY_MS, rule: 'integer_1_ms_to_366_days' } as const;

export function parseAdvanceMs(body: unknown, bounds: { min: number; max: number; rule: string }): number {
  const advance = (body as { advance_ms?: unknown } | undefined)?.advance_ms;
  if (typeof advance !== 'number' || !Number.isInteger(advance) || advance < bounds.min || advance > bounds.max) {
    throw new InvalidRequest([{ path: 'body.advance_ms', rule: bounds.rule }]);
  }
  return advance;
}
