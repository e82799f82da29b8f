import { apiHash, authorizationHeader, checkAuthorization, parseAuthorization, sha256Hex } from '../../src/sandbox/auth';

const KEY = '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7';
const PIN = '123456';
// gateway-facts.md, Authentication: the documented example header.
const DOCUMENTED =
  'Basic X1Y4N1F0YjUxM0NkM3ZhYk03UkMwVGJ0SldlU284cDc6czIvYWJjZGVmZ2hpamtsbW5vcC9iNzRjMmZhOTFmYjBhMDk3NTVlMzc3ZWU4ZTIwYWE4NmQyYjkyYzNkMmYyNzcyODBkYjU5NWY2MzZiYjE5MGU2';

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('sandbox authentication', () => {
  it('when hashing the documented example, then the digest and header match the test vector', () => {
    expect(sha256Hex(`${KEY}abcdefghijklmnop${PIN}`)).toBe('b74c2fa91fb0a09755e377ee8e20aa86d2b92c3d2f277280db595f636bb190e6');
    expect(authorizationHeader(KEY, PIN, 'abcdefghijklmnop')).toBe(DOCUMENTED);
    expect(checkAuthorization(DOCUMENTED, KEY, PIN)).toEqual({ ok: true });
  });

  it.each([
    ['16 alphanumerics', 'Ab3dEf7hIj1lMn0p'],
    ['25 lowercase hex', '0123456789abcdef012345678'],
    ['32 lowercase hex', '0123456789abcdef0123456789abcdef'],
    ['base64 with + and /', 'q+/Zx9/ab+c/dE=='],
  ])('when the seed is %s, then the seed runs to the LAST slash and the header passes', (_name, seed) => {
    const header = authorizationHeader(KEY, PIN, seed);
    expect(parseAuthorization(header)?.hash?.seed).toBe(seed);
    expect(checkAuthorization(header, KEY, PIN)).toEqual({ ok: true });
  });

  it('when the hex digest is upper case, then it still passes', () => {
    const [prefix, digest] = [apiHash(KEY, 'seed', PIN).slice(0, -64), apiHash(KEY, 'seed', PIN).slice(-64)];
    expect(checkAuthorization(basic(`${KEY}:${prefix}${digest.toUpperCase()}`), KEY, PIN)).toEqual({ ok: true });
  });

  it('when the PIN is wrong, then 21002', () => {
    const result = checkAuthorization(authorizationHeader(KEY, '654321', 'seed'), KEY, PIN);
    expect(result.ok === false && result.error.errorcode).toBe(21002);
  });

  it('when the key is unknown, then 23 "Specified source key not found"', () => {
    const result = checkAuthorization(authorizationHeader('another-key-123', PIN, 'seed'), KEY, PIN);
    expect(result.ok === false && result.error).toMatchObject({ errorcode: 23, error: 'Specified source key not found', status: 401 });
  });

  it.each([
    ['no colon', basic(KEY)],
    ['an empty hash', basic(`${KEY}:`)],
    ['a hash without s2/', basic(`${KEY}:${sha256Hex('x')}`)],
  ])('when the hash part has %s, then 20010 PIN required', (_name, header) => {
    const result = checkAuthorization(header, KEY, PIN);
    expect(result.ok === false && result.error.errorcode).toBe(20010);
  });

  it.each([
    ['a missing header', undefined],
    ['a Bearer header', 'Bearer abc'],
    ['invalid base64', 'Basic !!!notbase64'],
    ['an empty key', basic(':s2/seed/abc')],
    ['no seed', basic(`${KEY}:s2//${sha256Hex('x')}`)],
    ['no digest slash', basic(`${KEY}:s2/${sha256Hex('x')}`)],
    ['a short digest', basic(`${KEY}:s2/seed/abcdef`)],
    ['a non-hex digest', basic(`${KEY}:s2/seed/${'z'.repeat(64)}`)],
  ])('when the header has %s, then 21002 API authentication failed', (_name, header) => {
    const result = checkAuthorization(header, KEY, PIN);
    expect(result.ok === false && result.error).toMatchObject({ errorcode: 21002, error: 'API authentication failed' });
  });
});
