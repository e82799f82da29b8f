import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { containsPan } from '../../src/card/pan';
import { callSandbox } from '../../src/sandbox/client';
import { startBff, token, type Bff } from '../support/bff';
import { oracleFlatten } from '../support/pan-oracle';
import { connectRedis, deletePrefix, uniquePrefix, valuesUnder } from '../support/redis';
import { call } from '../support/wallet';

/**
 * A card-shaped number in text a merchant or a clerk typed at the gateway (a customer's phone or notes, a card's
 * name): the gateway client redacts it and keeps the answer (src/gateway/parse-wallet.ts). Before, the whole
 * answer was refused, so the shopper's wallet could not be read at all (a 5xx per read).
 */

const run = randomBytes(3).toString('hex');
const prefix = uniquePrefix('wallet-card-text').replace(/[^A-Za-z0-9:_-]/g, '_');
let bff: Bff;
let redis: Redis;

beforeAll(async () => {
  redis = connectRedis();
  bff = await startBff({ env: { REDIS_KEY_PREFIX: prefix } });
});
afterAll(async () => {
  await bff?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const shopper = (custkey: string) => token({ sub: `card-text-${run}`, custkey, scope: 'customers:read payment_methods:read' });

describe('a card-shaped number in a customer\'s merchant-entered fields', () => {
  it('when a clerk typed one into the notes, the phone and a card\'s name at the gateway, then the wallet still lists its methods, and no answer, Redis value or log line holds it', async () => {
    const c = (bff.sandbox.fixtures.customers[2] as { key: string }).key;
    const methods = bff.sandbox.fixtures.paymentMethods(c).map((m) => m.key).sort();
    expect(methods.length).toBeGreaterThan(0);
    const typed = { notes: 'paid with 4000 1000 1111 2224 by phone', phone: '5555444433332226' };
    expect((await callSandbox(bff.sandbox.baseUrl, 'PUT', `customers/${c}`, { body: typed })).status).toBe(200);
    const renamed = methods[0] as string;
    expect((await callSandbox(bff.sandbox.baseUrl, 'PUT', `customers/${c}/payment_methods/${renamed}`, { body: { method_name: 'card 4000-1000-1111-2224' } })).status).toBe(200);

    const listed = await call(bff.url, 'GET', `/v1/customers/${c}/payment_methods`, shopper(c));
    expect(listed.status).toBe(200);
    const data = listed.body.data as { key: string; method_name: string }[];
    expect(data.map((m) => m.key).sort()).toEqual(methods);
    expect(data.find((m) => m.key === renamed)?.method_name).toBe('card [redacted]');
    const got = await call(bff.url, 'GET', `/v1/customers/${c}`, shopper(c));
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ key: c, notes: 'paid with [redacted] by phone', phone: '[redacted]' });

    const pans = ['4000100011112224', '5555444433332226'];
    const answers = JSON.stringify([listed.body, got.body]);
    const stored = await valuesUnder(redis, prefix);
    expect(stored.length).toBeGreaterThan(0); // the view was kept, so the scan means something
    expect(stored.filter(({ text }) => containsPan(text) || pans.some((p) => oracleFlatten(text).includes(p))).map(({ key }) => key)).toEqual([]);
    const logs = bff.logs();
    for (const text of [answers, logs]) {
      expect(containsPan(text)).toBe(false);
      expect(pans.filter((p) => oracleFlatten(text).includes(p))).toEqual([]);
    }
    // Each redaction is told by the field's name, never its value.
    const told = logs.split('\n').filter((l) => l.includes('a card-shaped number redacted')).map((l) => JSON.parse(l) as { level: string; answer: string; field: string });
    expect(told.map((l) => `${l.level} ${l.answer} ${l.field}`)).toEqual(expect.arrayContaining(['warn customer notes', 'warn customer phone', 'warn payment method method_name']));
  });
});
