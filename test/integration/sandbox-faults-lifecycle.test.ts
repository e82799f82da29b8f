import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import type { FaultKind, FaultWhen } from '../../src/sandbox';
import { eventually } from '../support/wait';

const card = { number: '4000100011112224', expiration: '1230' };

/** Faults on the lifecycle's commands, before and after processing (README, Faults): the reconciler's two cases. */
describe('sandbox over HTTP: faults before and after processing', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ settings: { ratePerMinute: 100_000 } });
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.reset());

  const post = (body: unknown, timeoutMs = 2_000) => callSandbox(sb.baseUrl, 'POST', 'transactions', { body, timeoutMs });
  const sale = async (command = 'cc:sale') => ((await post({ command, amount: '10.00', creditcard: card })).json as { key: string }).key;

  type Case = { kind: Exclude<FaultKind, '429'>; when: FaultWhen; processed: boolean };
  const cases: Case[] = [
    { kind: '5xx', when: 'before', processed: false },
    { kind: '5xx', when: 'after', processed: true },
    { kind: 'reset', when: 'before', processed: false },
    { kind: 'reset', when: 'after', processed: true },
    { kind: 'hang', when: 'before', processed: false },
    { kind: 'hang', when: 'after', processed: true },
    { kind: 'garbage', when: 'before', processed: false },
    { kind: 'garbage', when: 'after', processed: true },
  ];

  it.each(cases)('when a $kind fault strikes a void $when processing, then the ledger records it only after (processed: $processed)', async ({ kind, when, processed }) => {
    const key = await sale();
    sb.faults.next({ kind, when, match: 'void' });
    const r = post({ command: 'void', trankey: key }, 300);
    if (kind === '5xx') expect((await r).status).toBe(503);
    else if (kind === 'garbage') expect((await r).json).toBeUndefined();
    else await expect(r).rejects.toThrow();
    await eventually(() => sb.ledger.operations().every((o) => o.delivery !== 'pending')); // the server sees the client's abort a moment after the client does
    expect(sb.ledger.get(key)).toMatchObject({ state: processed ? 'voided' : 'unsettled' });
    const ops = sb.ledger.operations();
    expect(ops).toHaveLength(processed ? 1 : 0);
    if (processed) expect(ops[0]).toMatchObject({ command: 'void', delivered: false, delivery: kind === 'garbage' ? 'garbled' : 'lost' });
  });

  it('when a 5xx fault strikes a sale after processing, then the sale is charged and recorded lost', async () => {
    sb.faults.next({ kind: '5xx', when: 'after', match: 'sale', status: 502 });
    const r = await post({ command: 'cc:sale', amount: '1.00', creditcard: card });
    expect(r.status).toBe(502);
    expect(sb.transactions()).toMatchObject([{ delivery: 'lost', delivered: false }]);
  });

  it('when faults match one command, then the other commands pass untouched', async () => {
    const key = await sale();
    await callSandbox(sb.baseUrl, 'POST', 'batches/current/close');
    sb.faults.next({ kind: '5xx', match: 'capture' });
    sb.faults.next({ kind: '5xx', match: 'lookup' });
    expect((await post({ command: 'refund', trankey: key, amount: '1.00' })).status).toBe(200);
    expect((await callSandbox(sb.baseUrl, 'GET', 'batches')).status).toBe(200);
    expect((await callSandbox(sb.baseUrl, 'GET', `transactions/${key}`)).status).toBe(503);
    const auth = await sale('authonly');
    expect((await post({ command: 'cc:capture', trankey: auth })).status).toBe(503);
    expect(sb.ledger.get(auth)).toMatchObject({ state: 'authorized' });
  });

  it.each([
    ['authonly', { command: 'authonly', amount: '1.00', creditcard: card }],
    ['refund', { command: 'creditvoid', trankey: 'dnosuchkey0000' }],
    ['refund', { command: 'refund:adjust', trankey: 'dnosuchkey0000', amount: '1.00' }],
    ['void', { command: 'cc:void:release', trankey: 'dnosuchkey0000' }],
  ])('when a fault matches %s, then %j is hit', async (match, body) => {
    sb.faults.next({ kind: '5xx', match: match as 'authonly' });
    expect((await post(body)).status).toBe(503);
  });

  it('when a 429 fault matches refund, then the refund is refused 429/155 before the limiter, not counted and not processed', async () => {
    const key = await sale();
    await callSandbox(sb.baseUrl, 'POST', 'batches/current/close');
    const accepted = sb.stats().endpoints.v2?.accepted;
    sb.faults.next({ kind: '429', match: 'refund' });
    const r = await post({ command: 'refund', trankey: key });
    expect(r.status).toBe(429);
    expect(r.json).toMatchObject({ errorcode: 155 });
    expect(sb.stats().endpoints.v2).toMatchObject({ accepted, injected429: 1 });
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '0.00' });
    expect(sb.ledger.operations()).toHaveLength(0);
  });

  it('when rates say after, then a drawn fault strikes after processing', async () => {
    const key = await sale();
    sb.faults.set({ errorRate: 1, match: 'refund', when: 'after' });
    await callSandbox(sb.baseUrl, 'POST', 'batches/current/close');
    const r = await post({ command: 'refund', trankey: key });
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(sb.ledger.get(key)).toMatchObject({ refunded: '10.00' });
    sb.faults.clear();
  });

  it('when a fault has an unknown when, then the admin route refuses it', async () => {
    const r = await callSandbox(`${sb.url}/_sandbox/`, 'POST', 'faults', { body: { kind: 'hang', when: 'later' }, auth: false });
    expect(r.status).toBe(400);
    const ok = await callSandbox(`${sb.url}/_sandbox/`, 'POST', 'faults', { body: { kind: 'hang', when: 'before', match: 'capture' }, auth: false });
    expect(ok.json).toMatchObject({ pending: [{ kind: 'hang', when: 'before', match: 'capture', count: 1 }] });
    sb.faults.clear();
  });
});
