import { createVerifiedTokens } from '../../src/http/verified-tokens';
import type { AuthContext } from '../../src/http/types';

const auth = (sub: string): AuthContext => Object.freeze({ sub, scopes: new Set(['sales:create']), anyCustomer: false });

describe('verified-token memory', () => {
  it('when a token was verified, then the same token is known until its expiry, and then forgotten', () => {
    let t = 1_000_000;
    const v = createVerifiedTokens({ now: () => t });
    v.set('tok-a', auth('a'), t + 5_000);
    expect(v.get('tok-a')?.sub).toBe('a');
    t += 4_999;
    expect(v.get('tok-a')?.sub).toBe('a');
    t += 1;
    expect(v.get('tok-a')).toBeUndefined();
  });

  it('when the token lives longer than the maximum age, then it must be verified again after that age', () => {
    let t = 0;
    const v = createVerifiedTokens({ now: () => t, maxAgeMs: 60_000 });
    v.set('tok-a', auth('a'), 3_600_000);
    t = 59_999;
    expect(v.get('tok-a')).toBeDefined();
    t = 60_000;
    expect(v.get('tok-a')).toBeUndefined();
  });

  it('when another token is asked (one character off), or the memory is off, then nothing is known', () => {
    const v = createVerifiedTokens();
    v.set('header.payload.signature', auth('a'), Date.now() + 60_000);
    expect(v.get('header.payload.signaturf')).toBeUndefined();
    const off = createVerifiedTokens({ maxAgeMs: 0 });
    off.set('tok', auth('a'), Date.now() + 60_000);
    expect(off.get('tok')).toBeUndefined();
  });

  it('when the memory is full, then the oldest entry goes first', () => {
    const v = createVerifiedTokens({ maxEntries: 2 });
    const until = Date.now() + 60_000;
    v.set('one', auth('1'), until);
    v.set('two', auth('2'), until);
    v.set('three', auth('3'), until);
    expect([v.get('one'), v.get('two')?.sub, v.get('three')?.sub]).toEqual([undefined, '2', '3']);
  });
});
