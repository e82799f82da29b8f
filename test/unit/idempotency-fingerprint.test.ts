import fc from 'fast-check';
import { canonicalJson, fingerprintRequest } from '../../src/idempotency';

describe('fingerprintRequest', () => {
  const body = { customer: 'c1', payment_method: 'pm1', amount: '10.00', amount_detail: { tax: '1.00', tip: '0.50' } };

  test('when two bodies differ only in key order and spacing, then they fingerprint the same', () => {
    const reordered = JSON.parse('{ "amount_detail": {"tip":"0.50","tax":"1.00"}, "amount":"10.00", "payment_method":"pm1","customer":"c1" }') as unknown;
    expect(fingerprintRequest('POST', '/v1/sales', reordered)).toBe(fingerprintRequest('POST', '/v1/sales', body));
    expect(fingerprintRequest('post', '/v1/sales', body)).toBe(fingerprintRequest('POST', '/v1/sales', body));
  });

  test('when the method, path or any value differs, then the fingerprint differs', () => {
    const base = fingerprintRequest('POST', '/v1/sales', body);
    expect(fingerprintRequest('PUT', '/v1/sales', body)).not.toBe(base);
    expect(fingerprintRequest('POST', '/v1/sales/x', body)).not.toBe(base);
    expect(fingerprintRequest('POST', '/v1/sales', { ...body, amount: '10.0' })).not.toBe(base);
    expect(fingerprintRequest('POST', '/v1/sales', { ...body, invoice: 'i' })).not.toBe(base);
  });

  test('when asked, then the fingerprint is a sha256 hex digest', () => {
    expect(fingerprintRequest('POST', '/v1/sales', body)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when a body is canonicalised, then keys are sorted at every depth, arrays keep order, no whitespace', () => {
    expect(canonicalJson({ b: [3, { z: 1, a: null }], a: 'x y', u: undefined })).toBe('{"a":"x y","b":[3,{"a":null,"z":1}]}');
  });

  test('when any JSON value is re-parsed, then its canonical form is stable (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const once = canonicalJson(v);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
        expect(JSON.parse(once)).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });
});
