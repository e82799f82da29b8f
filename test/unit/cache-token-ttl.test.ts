import { parseToken, serializeToken, startOfUtcDay, tokenTtlFromConfig, tokenTtlMs } from '../../src/cache';
import type { CardRefToken } from '../../src/gateway/types';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = Date.UTC(2026, 10, 22, 10, 0, 0); // 2026-11-22T10:00Z
const margin = HOUR;
const max = 7 * DAY;

describe('tokenTtlMs', () => {
  test('when the token expires tomorrow, then it is cached until the start of tomorrow (UTC) less the margin', () => {
    expect(tokenTtlMs('2026-11-23', now, margin, max)).toBe(14 * HOUR - margin);
  });

  test('when the token expires today, then it is not cached (its expires day has started)', () => {
    expect(tokenTtlMs('2026-11-22', now, margin, max)).toBeUndefined();
  });

  test('when the token expired yesterday, then it is not cached', () => {
    expect(tokenTtlMs('2026-11-21', now, margin, max)).toBeUndefined();
  });

  test('when the start of the expires day is inside the margin, then it is not cached', () => {
    const late = Date.UTC(2026, 10, 22, 23, 30); // 30 min before 2026-11-23, margin 1 h
    expect(tokenTtlMs('2026-11-23', late, margin, max)).toBeUndefined();
    expect(tokenTtlMs('2026-11-23', Date.UTC(2026, 10, 22, 23) - 1, margin, max)).toBe(1);
  });

  test('when the token expires far in the future, then the TTL is capped', () => {
    expect(tokenTtlMs('2030-01-01', now, margin, max)).toBe(max);
  });

  test.each(['', 'tomorrow', '2026-13-01', '2026-02-30', '2026-11-31', '2026-1-05', '20261122', '2026-11-22T00:00:00Z', ' 2026-11-23', '0099-01-01'])(
    'when expires is %j (not a calendar date), then it is not cached',
    (bad) => expect(tokenTtlMs(bad, now, margin, max)).toBeUndefined(),
  );

  test('when expires is 29 February of a leap year, then it parses', () => {
    expect(startOfUtcDay('2028-02-29')).toBe(Date.UTC(2028, 1, 29));
    expect(startOfUtcDay('2027-02-29')).toBeUndefined();
  });

  test('when the cap is zero, then nothing is cached', () => {
    expect(tokenTtlMs('2030-01-01', now, margin, 0)).toBeUndefined();
  });

  test('when built from config, then it reads the clock at each call', () => {
    let t = now;
    const ttlOf = tokenTtlFromConfig({ tokenExpiryMarginMs: margin, tokenMaxTtlMs: max }, () => t);
    expect(ttlOf({ expires: '2026-11-23' })).toBe(13 * HOUR);
    t += HOUR;
    expect(ttlOf({ expires: '2026-11-23' })).toBe(12 * HOUR);
  });
});

describe('token serialisation', () => {
  const token: CardRefToken = { type: 'token', cardref: 'ref-1', expires: '2027-01-01', ccnumlast4: '2224', cardtype: 'Visa', custkey: 'c1', pmkey: 'pm1' };

  test('when a token object carries extra fields, then only the token fields are serialised', () => {
    const leaky = { ...token, number: '4000100011112224' } as CardRefToken;
    const json = serializeToken(leaky);
    expect(json).not.toContain('4000100011112224');
    expect(parseToken(json)).toEqual(token);
  });

  test.each(['', 'not json', '{}', '{"type":"token"}', 'null', '[]'])('when the stored value is %j, then it reads as a miss', (raw) => {
    expect(parseToken(raw)).toBeUndefined();
  });
});
