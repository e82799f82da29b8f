import { createHash } from 'node:crypto';
import { Secret } from '../../src/config/secret';
import { apiHash, authorizationHeader, createSigner, randomSeed } from '../../src/gateway/signer';

// gateway-facts.md, "Authentication": the documented example is a public test vector.
const KEY = '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7';
const PIN = '123456';
const SEED = 'abcdefghijklmnop';
const DIGEST = 'b74c2fa91fb0a09755e377ee8e20aa86d2b92c3d2f277280db595f636bb190e6';
const HEADER =
  'Basic X1Y4N1F0YjUxM0NkM3ZhYk03UkMwVGJ0SldlU284cDc6czIvYWJjZGVmZ2hpamtsbW5vcC9iNzRjMmZhOTFmYjBhMDk3NTVlMzc3ZWU4ZTIwYWE4NmQyYjkyYzNkMmYyNzcyODBkYjU5NWY2MzZiYjE5MGU2';

describe('gateway signer', () => {
  it('when given the documented key, PIN and seed, then the hash and header match the documentation', () => {
    expect(apiHash(KEY, SEED, PIN)).toBe(`s2/${SEED}/${DIGEST}`);
    expect(authorizationHeader(KEY, SEED, PIN)).toBe(HEADER);
  });

  it('when signing twice, then each call gets a fresh seed and a hash that verifies', () => {
    const sign = createSigner(new Secret(KEY), new Secret(PIN));
    const [a, b] = [sign(), sign()];
    expect(a).not.toBe(b);
    for (const header of [a, b]) {
      const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8');
      const [key, hash] = [decoded.slice(0, decoded.indexOf(':')), decoded.slice(decoded.indexOf(':') + 1)];
      expect(key).toBe(KEY);
      const m = /^s2\/(.+)\/([0-9a-f]{64})$/.exec(hash);
      expect(m).not.toBeNull();
      const [, seed, digest] = m as RegExpExecArray;
      expect(createHash('sha256').update(KEY + seed + PIN).digest('hex')).toBe(digest);
    }
  });

  it('when generating seeds, then they are 32 lowercase hex and not repeated', () => {
    const seeds = new Set(Array.from({ length: 200 }, randomSeed));
    expect(seeds.size).toBe(200);
    for (const s of seeds) expect(s).toMatch(/^[0-9a-f]{32}$/);
  });
});
