import { randomBytes } from 'node:crypto';
import { createMemorySaleRecords, createRedisSaleRecords, type SaleFields, type SaleRecord, type SaleRecords } from '../../src/sale-records';
import { declaredKeysOnly } from '../support/declared-keys';
import { connectRedis, suiteRedis } from '../support/redis';

/**
 * The sale records' money bounds (guarantee 7), the same on the memory store and on Redis (Lua): reservations
 * are all-or-nothing, settle from the gateway's answer, and a reservation of unknown outcome stays held.
 */
const { prefix, redis } = suiteRedis('sales');
const checked = declaredKeysOnly(connectRedis());
afterAll(() => checked.disconnect());

const captured = (cents: number): SaleRecord => ({ customer: 'c1', state: 'captured', authorizedCents: cents, capturedCents: cents, refundedCents: 0, pendingRefundCents: 0 });
const authorized = (cents: number): SaleRecord => ({ ...captured(cents), state: 'authorized', capturedCents: 0 });
const fields: SaleFields = {
  refnum: '3107222270', result_code: 'P', result: 'Partially Approved', authcode: '314407', amount: '10.00', invoice: 'inv-1', payment_method: 'pm1',
  creditcard: { number: '4000xxxxxxxx2275', category_code: 'A' }, avs: { result_code: 'YYY', result: 'Address: Match & 5 Digit Zip: Match' }, cvc: { result_code: 'M', result: 'Match' },
};

const factories: Array<[string, () => SaleRecords]> = [
  ['memory', () => createMemorySaleRecords()],
  ['redis', () => createRedisSaleRecords({ redis, keyPrefix: prefix })],
  // Every key a script touches named in its KEYS (support/declared-keys.ts): what Redis asks, and does not check.
  ['redis, every key declared', () => createRedisSaleRecords({ redis: checked, keyPrefix: prefix })],
];

describe.each(factories)('sale records (%s)', (_name, make) => {
  let records: SaleRecords;
  let sale: string;
  beforeEach(() => {
    records = make();
    sale = `tx${randomBytes(5).toString('hex')}`;
  });

  it('when a record is made by a write, then it names the write (the reconciler knows it as that key\'s own), and a second create changes nothing', async () => {
    await records.create(sale, { ...captured(1000), writer: 'w-1' });
    expect(await records.get(sale)).toMatchObject({ capturedCents: 1000, writer: 'w-1' });
    expect((await records.view(sale))?.record).toMatchObject({ writer: 'w-1' });
    await records.create(sale, { ...captured(500), writer: 'w-2' });
    expect(await records.get(sale)).toMatchObject({ capturedCents: 1000, writer: 'w-1' });
    const seeded = `${sale}-seeded`;
    await records.create(seeded, captured(1000));
    expect(await records.get(seeded)).not.toHaveProperty('writer');
  });

  it('when a seeded record (made by no write) meets writes, then exactly one write claims it, adding only what it lacked; one kept before writer was is claimed by none', async () => {
    const bare = { refnum: '1', result_code: 'A', result: 'Approved', authcode: '', amount: '10.00', invoice: 'inv-1' };
    expect(await records.create(sale, { ...captured(1000), customer: '', fields: bare, seeded: true })).toBe(true);
    expect(await records.get(sale)).toMatchObject({ seeded: true });
    expect(await records.get(sale)).not.toHaveProperty('writer');
    // A second seed changes nothing.
    expect(await records.create(sale, { ...captured(500), seeded: true })).toBe(false);
    // Two writes claim it at once: one gets it.
    const claims = await Promise.all(['w-1', 'w-2'].map((writer) => records.create(sale, { ...captured(999), fields, writer })));
    expect(claims.filter(Boolean)).toHaveLength(1);
    const winner = claims[0] ? 'w-1' : 'w-2';
    const got = await records.get(sale);
    expect(got).toMatchObject({ writer: winner, customer: 'c1', capturedCents: 1000, fields: { refnum: '1', authcode: '314407', payment_method: 'pm1', invoice: 'inv-1' } });
    expect(got).not.toHaveProperty('seeded');
    // The winner again: its own; the loser again: refused.
    expect(await records.create(sale, { ...captured(1000), writer: winner })).toBe(true);
    expect(await records.create(sale, { ...captured(1000), writer: winner === 'w-1' ? 'w-2' : 'w-1' })).toBe(false);
    expect((await records.get(sale))?.writer).toBe(winner);
    // Neither writer nor seeded (a record kept before `writer` was): another's, never claimed.
    const legacy = `${sale}-legacy`;
    await records.create(legacy, captured(1000));
    expect(await records.create(legacy, { ...captured(1000), writer: 'w-3' })).toBe(false);
    expect(await records.get(legacy)).not.toHaveProperty('writer');
  });

  it('when refunds are reserved, then their total never passes what was captured, and a refused one reserves nothing', async () => {
    await records.create(sale, captured(1000));
    expect(await records.reserve(sale, 'refund', 'r1', 600)).toEqual({ ok: true, amountCents: 600, whole: false });
    expect(await records.reserve(sale, 'refund', 'r2', 401)).toEqual({ ok: false, reason: 'exceeds', availableCents: 400 });
    expect(await records.reserve(sale, 'refund', 'r3', undefined)).toEqual({ ok: true, amountCents: 400, whole: true });
    expect(await records.get(sale)).toMatchObject({ refundedCents: 0, pendingRefundCents: 1000 });
  });

  it('when a refund settles applied, released or unknown, then it moves to refunded, comes back, or stays held', async () => {
    await records.create(sale, captured(1000));
    await records.reserve(sale, 'refund', 'a', 300);
    await records.reserve(sale, 'refund', 'b', 300);
    await records.reserve(sale, 'refund', 'c', 300);
    await records.settle(sale, 'refund', 'a', 'applied');
    await records.settle(sale, 'refund', 'b', 'released');
    await records.settle(sale, 'refund', 'c', 'unknown');
    expect(await records.get(sale)).toMatchObject({ refundedCents: 300, pendingRefundCents: 300 });
    // Settling twice changes nothing; the unknown one can still be settled later (the reconciler's job).
    await records.settle(sale, 'refund', 'a', 'applied');
    await records.settle(sale, 'refund', 'c', 'applied');
    expect(await records.get(sale)).toMatchObject({ refundedCents: 600, pendingRefundCents: 0 });
    expect(await records.reserve(sale, 'refund', 'd', undefined)).toMatchObject({ ok: true, amountCents: 400 });
  });

  it('when a refund settles applied with its gateway key, then the key is credited (once, not for a release), and the unknown ones are listed with their time', async () => {
    await records.create(sale, captured(1000));
    for (const id of ['a', 'b', 'c']) await records.reserve(sale, 'refund', id, 200);
    await records.settle(sale, 'refund', 'a', 'applied', undefined, 'gw-refund-1');
    await records.settle(sale, 'refund', 'b', 'released', undefined, 'gw-refund-2');
    await records.settle(sale, 'refund', 'c', 'unknown');
    await records.settle(sale, 'refund', 'a', 'applied', undefined, 'gw-refund-3'); // already settled: nothing changes
    const moves = await records.moves(sale);
    expect([...moves.creditedRefunds]).toEqual(['gw-refund-1']);
    expect(moves.reservations).toEqual([{ id: 'c', op: 'refund', cents: 200, unknown: true, unknownSinceMs: expect.any(Number) }]);
    expect(await records.get(sale)).toMatchObject({ refundedCents: 200, pendingRefundCents: 200 });
  });

  it('when a refund settles applied with its answer, then its moves keep that answer by reservation id (the reconciler finds a refund whose answer was lost there), and a release keeps none', async () => {
    await records.create(sale, captured(1000));
    for (const id of ['a', 'b']) await records.reserve(sale, 'refund', id, 200);
    await records.settle(sale, 'refund', 'a', 'applied', undefined, 'gw-refund-1', { key: 'gw-refund-1', refnum: '11', cents: 200, method: 'refund' });
    await records.settle(sale, 'refund', 'b', 'released', undefined, undefined, { key: sale, refnum: '12', cents: 200, method: 'void' });
    const moves = await records.moves(sale);
    expect([...moves.applied]).toEqual([['a', { key: 'gw-refund-1', refnum: '11', cents: 200, method: 'refund' }]]);
  });

  it('when the gateway tells the sale\'s adjusted amount after a later credit, then only the sale\'s own adjustments are compared: the credit stays refunded', async () => {
    await records.create(sale, captured(2000));
    // refund:adjust of the unsettled sale (its answer names the sale), then a credit of the rest (a key of its own).
    await records.reserve(sale, 'refund', 'adj', 500);
    await records.settle(sale, 'refund', 'adj', 'applied', undefined, undefined, { key: sale, refnum: '1', cents: 500, method: 'refund' });
    await records.reserve(sale, 'refund', 'credit', 1500);
    await records.settle(sale, 'refund', 'credit', 'applied', undefined, 'credit-key', { key: 'credit-key', refnum: '2', cents: 1500, method: 'refund' });
    expect(await records.hear(sale, { kind: 'adjusted', leftCents: 1500 })).toBe('known');
    expect(await records.get(sale)).toMatchObject({ refundedCents: 2000, capturedCents: 2000 });
    // An adjustment made elsewhere (the console gives 3.00 of the sale's own 5.00 back: 18.00) moves only its part.
    expect(await records.hear(sale, { kind: 'adjusted', leftCents: 1800 })).toBe('applied');
    expect(await records.get(sale)).toMatchObject({ refundedCents: 1700, capturedCents: 2000 });
    // The credit voided at the gateway is no credit any more: what is left refunded is the sale's own 2.00.
    expect(await records.hear(sale, { kind: 'refund_voided', refundKey: 'credit-key' })).toBe('applied');
    expect(await records.get(sale)).toMatchObject({ refundedCents: 200 });
  });

  it('when an authorization is captured, then one capture at a time, never over the authorization; a release makes it capturable again', async () => {
    await records.create(sale, authorized(500));
    expect(await records.reserve(sale, 'refund', 'r', 1)).toMatchObject({ ok: false, reason: 'exceeds' });
    expect(await records.reserve(sale, 'capture', 'x', 501)).toMatchObject({ ok: false, reason: 'not_capturable' });
    expect(await records.reserve(sale, 'capture', 'c1', 400)).toMatchObject({ ok: true, amountCents: 400 });
    expect(await records.reserve(sale, 'capture', 'c2', 100)).toMatchObject({ ok: false, reason: 'not_capturable' });
    await records.settle(sale, 'capture', 'c1', 'released');
    expect(await records.get(sale)).toMatchObject({ state: 'authorized' });
    expect(await records.reserve(sale, 'capture', 'c3', undefined)).toMatchObject({ ok: true, amountCents: 500 });
    await records.settle(sale, 'capture', 'c3', 'applied', 450);
    expect(await records.get(sale)).toMatchObject({ state: 'captured', capturedCents: 450 });
    expect(await records.reserve(sale, 'refund', 'r2', 451)).toMatchObject({ ok: false, availableCents: 450 });
  });

  it('when a capture\'s outcome is unknown, then the authorization stays blocked for other captures', async () => {
    await records.create(sale, authorized(500));
    await records.reserve(sale, 'capture', 'c1', undefined);
    await records.settle(sale, 'capture', 'c1', 'unknown');
    expect(await records.get(sale)).toMatchObject({ state: 'capturing' });
    expect(await records.reserve(sale, 'capture', 'c2', 100)).toMatchObject({ ok: false, reason: 'not_capturable' });
  });

  it('when a record exists, then create leaves it (and its reservations) alone; a voided or unknown sale refunds nothing', async () => {
    await records.create(sale, captured(1000));
    await records.reserve(sale, 'refund', 'r', 700);
    await records.create(sale, captured(5000));
    expect(await records.get(sale)).toMatchObject({ capturedCents: 1000, pendingRefundCents: 700 });
    await records.markVoided(sale);
    expect(await records.reserve(sale, 'refund', 'r2', 1)).toMatchObject({ ok: false, reason: 'exceeds', availableCents: 0 });
    expect(await records.reserve('nosuch', 'refund', 'r3', 1)).toMatchObject({ ok: false, reason: 'absent' });
    await records.markVoided('nosuch');
    expect(await records.get('nosuch')).toBeUndefined();
  });

  it('when a record is created with the sale\'s fields, then it gives them back; one created without has none', async () => {
    await records.create(sale, { ...authorized(500), fields });
    expect(await records.get(sale)).toEqual({ ...authorized(500), fields });
    await records.create(`${sale}b`, authorized(500));
    expect((await records.get(`${sale}b`))?.fields).toBeUndefined();
  });

  it('when fields are described, then fill sets them only on a record without, update sets those given, and no record is ever created', async () => {
    await records.create(sale, authorized(500));
    await records.describe(sale, fields, 'fill');
    expect((await records.get(sale))?.fields).toEqual(fields);
    await records.describe(sale, { ...fields, refnum: 'other' }, 'fill');
    expect((await records.get(sale))?.fields?.refnum).toBe('3107222270');
    const batch = { type: 'batch' as const, key: 'b1', sequence: '7', batchrefnum: '42' };
    await records.describe(sale, { ...fields, batch }, 'update');
    expect(await records.get(sale)).toEqual({ ...authorized(500), fields: { ...fields, batch } });
    await records.describe('nosuch', fields, 'fill');
    await records.describe('nosuch', fields, 'update');
    expect(await records.get('nosuch')).toBeUndefined();
  });

  it('when the gateway shows money refunded or the sale voided outside tokengate, then the record follows only while nothing moves and only toward less', async () => {
    await records.create(sale, captured(4000));
    // Refunded 2500 elsewhere: folded in; a later refund of all that is left asks for 1500.
    expect(await records.observe(sale, 0, { refundedCents: 2500, voided: false })).toBe(true);
    expect(await records.reserve(sale, 'refund', 'r1', undefined)).toEqual({ ok: true, amountCents: 1500, whole: true });
    // A refund in flight: the record is left alone.
    expect(await records.observe(sale, 2500, { refundedCents: 3000, voided: false })).toBe(false);
    await records.settle(sale, 'refund', 'r1', 'released');
    // Read before something settled (compare-and-set), or lower than the record: left alone.
    expect(await records.observe(sale, 0, { refundedCents: 3000, voided: false })).toBe(false);
    expect(await records.observe(sale, 2500, { refundedCents: 1000, voided: false })).toBe(false);
    expect(await records.get(sale)).toMatchObject({ state: 'captured', refundedCents: 2500, pendingRefundCents: 0 });
    // Voided elsewhere: nothing is refundable any more.
    expect(await records.observe(sale, 2500, { refundedCents: 2500, voided: true })).toBe(true);
    expect(await records.reserve(sale, 'refund', 'r2', undefined)).toMatchObject({ ok: false, reason: 'exceeds' });
    expect(await records.observe('nosuch', 0, { refundedCents: 1, voided: true })).toBe(false);
    expect(await records.get('nosuch')).toBeUndefined();
  });

  it('when an authorization is voided outside tokengate, then it is no longer capturable; one being captured is left alone', async () => {
    await records.create(sale, authorized(1000));
    expect(await records.observe(sale, 0, { refundedCents: 0, voided: true })).toBe(true);
    expect(await records.reserve(sale, 'capture', 'c1', undefined)).toMatchObject({ ok: false, reason: 'not_capturable' });
    const other = `${sale}b`;
    await records.create(other, authorized(1000));
    expect((await records.reserve(other, 'capture', 'c2', undefined)).ok).toBe(true);
    expect(await records.observe(other, 0, { refundedCents: 0, voided: true })).toBe(false);
    expect((await records.get(other))?.state).toBe('capturing');
  });

  it('when a field holds a card number, then it is never kept', async () => {
    await records.create(sale, { ...captured(100), fields: { ...fields, creditcard: { number: '4000100011112224' }, invoice: '4000-1000-1111-2224' } });
    const kept = (await records.get(sale))?.fields;
    expect(kept).toMatchObject({ refnum: '3107222270', payment_method: 'pm1' });
    expect(kept?.creditcard).toBeUndefined();
    expect(kept?.invoice).toBeUndefined();
  });
});
