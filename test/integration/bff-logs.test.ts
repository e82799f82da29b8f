import request from 'supertest';
import { containsPan } from '../../src/card/pan';
import { TEST_CARDS } from '../../src/sandbox';
import { MODES, startBff, token, TEST_JWT_SECRET, type Bff } from '../support/bff';

// Distinctive credentials, so that any leak is unmistakable in the logs.
const API_KEY = 'LeakCheckKey_7f3a9c2e51d04b8a';
const API_PIN = 'pin-Qx7#vZ19';

function forms(pan: string): string[] {
  const groups = pan.match(/.{1,4}/g) as string[];
  return [pan, groups.join(' '), groups.join('-')];
}

/**
 * Guarantee 1: whatever callers send and whatever goes wrong, no card number, PIN, API key, API hash,
 * Authorization value, JWT or JWT secret appears in anything the service logs (at debug level, the most verbose).
 */
describe.each(MODES)('log hygiene (%s)', (mode) => {
  let bff: Bff;
  beforeAll(async () => {
    bff = await startBff({
      mode,
      env: { LOG_LEVEL: 'debug', GATEWAY_API_KEY: API_KEY, GATEWAY_API_PIN: API_PIN },
      sandbox: { apiKey: API_KEY, apiPin: API_PIN },
    });
  });
  afterAll(() => bff.stop());

  it('when requests carry card numbers everywhere and sales succeed, fail and time out, then the logs hold no secret in any form', async () => {
    const cust = bff.sandbox.fixtures.firstCustomer().key;
    const pms = bff.sandbox.fixtures.paymentMethods(cust);
    const jwtUsed = token({ sub: 'leak-user', custkey: cust, scope: 'sales:create payment_methods:read tokens:read' });
    const auth = { Authorization: `Bearer ${jwtUsed}` };
    const pans = [...TEST_CARDS.keys()];
    expect(pans.length).toBeGreaterThan(10);
    const calls: Promise<unknown>[] = [];
    let n = 0;
    for (const pan of pans) {
      for (const form of forms(pan)) {
        const idem = `leak-${n++}`;
        calls.push(
          request(bff.url).post('/v1/sales').set(auth).set('Idempotency-Key', idem).send({ customer: cust, payment_method: pms[0]?.key, amount: '1.00', invoice: form }),
          request(bff.url).post('/v1/sales').set(auth).set('Idempotency-Key', `${idem}b`).send({ customer: cust, payment_method: pms[0]?.key, amount: '1.00', creditcard: { number: form, cvc: '123', expiration: '1230' } }),
          request(bff.url).post('/v1/sales').set(auth).set('Idempotency-Key', `${idem}c`).set('Content-Type', 'application/json').send(`{"customer":"${cust}","note":${pan},`),
          request(bff.url).get(`/v1/customers/${cust}/payment_methods`).query({ q: form }).set(auth),
          request(bff.url).get(`/v1/customers/${encodeURIComponent(form)}/payment_methods`).set(auth),
          request(bff.url).get(`/v1/customers/${cust}/payment_methods`).set(auth).set('X-Card', form).set('X-Request-Id', pan),
        );
      }
    }
    await Promise.all(calls);
    // Real traffic too: approvals, a decline, a timeout (outcome unknown), a 5xx, token reads, bad auth.
    for (const [i, pm] of pms.entries()) {
      await request(bff.url).post('/v1/sales').set(auth).set('Idempotency-Key', `real-${i}`).send({ customer: cust, payment_method: pm.key, amount: '2.00' });
      await request(bff.url).get(`/v1/customers/${cust}/payment_methods/${pm.key}/token`).set(auth);
    }
    bff.sandbox.faults.next({ kind: 'hang', match: 'sale' });
    await request(bff.url).post('/v1/sales').set(auth).set('Idempotency-Key', 'real-hang').send({ customer: cust, payment_method: pms[0]?.key, amount: '3.00' });
    bff.sandbox.faults.next({ kind: '5xx', match: 'sale' });
    await request(bff.url).post('/v1/sales').set(auth).set('Idempotency-Key', 'real-5xx').send({ customer: cust, payment_method: pms[0]?.key, amount: '3.10' });
    await request(bff.url).get(`/v1/customers/${cust}/payment_methods`).set('Authorization', `Bearer ${jwtUsed}x`);
    await request(bff.url).get(`/v1/customers/${cust}/payment_methods`).set('Authorization', `Basic ${Buffer.from(`${API_KEY}:${API_PIN}`).toString('base64')}`);

    const logs = bff.logs();
    expect(logs.length).toBeGreaterThan(1000); // the service did log (debug), so the scan means something
    for (const pan of pans) {
      for (const form of forms(pan)) expect(logs).not.toContain(form);
    }
    expect(containsPan(logs)).toBe(false);
    for (const secret of [API_PIN, API_KEY, TEST_JWT_SECRET, jwtUsed, jwtUsed.split('.')[2] as string, Buffer.from(`${API_KEY}:${API_PIN}`).toString('base64')]) {
      expect(logs).not.toContain(secret);
    }
    expect(logs).not.toMatch(/s2\/[^\s"]*\/[0-9a-f]{64}/);
    expect(logs).not.toMatch(/Basic [A-Za-z0-9+/=]{16,}/);
    expect(logs).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\./);
  });
});
