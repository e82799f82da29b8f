import { createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import jwt, { type Algorithm } from 'jsonwebtoken';
import { signatureMatches } from '../../src/http/token-signature';

/**
 * The signature check auth.ts runs before jsonwebtoken's: it must agree with jsonwebtoken on every algorithm
 * the config allows (a disagreement would refuse every token of a deployment), and refuse what jsonwebtoken refuses.
 */
const secret = createSecretKey(Buffer.from('token-signature-test-secret-0123456789abcdef'));
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec: Record<string, { publicKey: KeyObject; privateKey: KeyObject }> = {
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  ES384: generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  ES512: generateKeyPairSync('ec', { namedCurve: 'P-521' }),
};
const keysOf = (alg: string): { sign: KeyObject; verify: KeyObject } => {
  if (alg.startsWith('HS')) return { sign: secret, verify: secret };
  if (alg.startsWith('ES')) return { sign: (ec[alg] as { privateKey: KeyObject }).privateKey, verify: (ec[alg] as { publicKey: KeyObject }).publicKey };
  return { sign: rsa.privateKey, verify: rsa.publicKey };
};
const parts = (token: string) => ({ input: token.slice(0, token.lastIndexOf('.')), signature: token.slice(token.lastIndexOf('.') + 1) });
const ALGORITHMS: Algorithm[] = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

describe('JWS signature check', () => {
  it.each(ALGORITHMS)('when a %s token is signed by jsonwebtoken with the key, then it matches; another payload, a flipped signature or another key do not', (alg) => {
    const { sign, verify } = keysOf(alg);
    const token = jwt.sign({ sub: 'u', exp: 2_000_000_000 }, sign, { algorithm: alg });
    const { input, signature } = parts(token);
    expect(signatureMatches(alg, input, signature, verify)).toBe(true);
    const other = parts(jwt.sign({ sub: 'v', exp: 2_000_000_000 }, sign, { algorithm: alg }));
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    const otherKey = alg.startsWith('HS') ? createSecretKey(Buffer.from('another-secret-0123456789abcdefghijkl')) : alg.startsWith('ES') ? generateKeyPairSync('ec', { namedCurve: alg === 'ES256' ? 'P-256' : alg === 'ES384' ? 'P-384' : 'P-521' }).publicKey : generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect([
      signatureMatches(alg, other.input, signature, verify),
      signatureMatches(alg, input, flipped, verify),
      signatureMatches(alg, input, signature, otherKey),
    ]).toEqual([false, false, false]);
  });

  it('when the signature is empty, truncated or for another hash, or the algorithm is unknown, then it does not match (and nothing throws)', () => {
    const { input, signature } = parts(jwt.sign({ sub: 'u' }, secret, { algorithm: 'HS256' }));
    const es = parts(jwt.sign({ sub: 'u' }, (ec.ES256 as { privateKey: KeyObject }).privateKey, { algorithm: 'ES256' }));
    expect([
      signatureMatches('HS256', input, '', secret),
      signatureMatches('HS256', input, signature.slice(0, 20), secret),
      signatureMatches('HS384', input, signature, secret),
      signatureMatches('ES256', es.input, es.signature.slice(0, 40), (ec.ES256 as { publicKey: KeyObject }).publicKey),
      signatureMatches('RS256', input, signature, secret),
      signatureMatches('none', input, signature, secret),
      signatureMatches('HS999', input, signature, secret),
    ]).toEqual([false, false, false, false, false, false, false]);
  });
});
