import { createPublicKey, type KeyObject } from 'node:crypto';
import { InvalidSetting, parser, str, type Parser } from './parse';

const pemHeader = str(/-----BEGIN [A-Z ]*PUBLIC KEY-----/);

/**
 * JWT_PUBLIC_KEY: a PEM public key that Node can actually read. The header alone let a corrupt body through
 * to boot, where createPublicKey threw an OpenSSL stack after Redis had connected. Reasons never quote the key.
 */
export const publicKeyPem: Parser<string> = parser({ text: 'a PEM public key (RSA or EC; never a private key)' }, (raw) => {
  const pem = pemHeader(raw);
  if (/PRIVATE KEY-----/.test(pem)) throw new InvalidSetting('holds a private key: give the public key only');
  try {
    createPublicKey(pem);
  } catch {
    throw new InvalidSetting('is not a readable PEM public key');
  }
  return pem;
});

// jsonwebtoken 9 refuses to verify with a key of another type or curve (lib/validateAsymmetricKey.js).
const CURVES: Record<string, string> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };
const CURVE_NAMES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

function fits(key: KeyObject, algorithm: string): boolean {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (algorithm.startsWith('RS')) return type === 'rsa';
  if (algorithm.startsWith('PS')) {
    if (type === 'rsa') return true;
    // An RSA-PSS key may pin its hash; then only the matching PS* can use it.
    const hash = `sha${algorithm.slice(2)}`;
    return type === 'rsa-pss' && (details.hashAlgorithm === undefined || (details.hashAlgorithm === hash && details.mgf1HashAlgorithm === hash));
  }
  if (algorithm.startsWith('ES')) return type === 'ec' && details.namedCurve === CURVES[algorithm];
  return false;
}

function describe(key: KeyObject): string {
  const type = key.asymmetricKeyType ?? 'unknown';
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown curve';
    return `an EC ${CURVE_NAMES[curve] ?? curve} key`;
  }
  return type === 'rsa' ? 'an RSA key' : type === 'rsa-pss' ? 'an RSA-PSS key' : `a ${type} key`;
}

/**
 * The problem when a public key can verify none of the asymmetric algorithms allowed (an EC key with RS256 only,
 * an RSA key with ES256 only): every token would fail. A list where some algorithm fits is accepted.
 */
export function publicKeyMismatch(pem: string, algorithms: readonly string[]): string | undefined {
  const asymmetric = algorithms.filter((a) => !a.startsWith('HS'));
  if (asymmetric.length === 0) return undefined;
  const key = createPublicKey(pem); // publicKeyPem parsed it already
  if (asymmetric.some((a) => fits(key, a))) return undefined;
  return `JWT_PUBLIC_KEY (jwt.publicKey) is ${describe(key)}: it cannot verify JWT_ALGORITHMS (${asymmetric.join(', ')})`;
}
