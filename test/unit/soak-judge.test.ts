/**
 * The soak's judge (bench/soak/judge.js) is what makes `npm run soak` fail: these check that it sees a double
 * charge, money beyond its bounds, a void sent twice, a removed card charged, an answer the ledger contradicts, a
 * card number however it is written, and memory that grows, and that it does not cry wolf on a clean ledger.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
interface Entry { key: string; kind: string; state?: string; result_code: string; invoice: string; authorized: string; captured: string; refunded: string; adjusted: string }
interface KeyRecord { key: string; op: string; path?: string; body?: Record<string, unknown>; final?: { status: number; body?: Record<string, unknown> } }
const judge = require('../../bench/soak/judge') as {
  judgeLedger(input: {
    entries: Entry[]; transactions: { pmkey?: string; time: number; result_code: string }[]; operations: { command: string; trankey: string; result_code: string; folded?: boolean }[];
    keys: Map<string, KeyRecord>; invoicePrefix: string; removed: { pmkey: string; at: number }[];
  }): { doubleCharges: number; beyondBounds: number; disagreements: number; followupsTwice: number; refundsTwice: number; removedCharged: number };
  judgeMoneyViews(entries: (Entry & { voided?: boolean })[], views: Map<string, { status: number; body?: { amount_refunded?: string } }>): { disagree: number; judged: number };
  cardPattern(numbers: string[]): RegExp;
  memoryGrowth(series: Record<string, [number, number][][]>, minSpanS: number): { growth: Record<string, number | null> };
};

const entry = (over: Partial<Entry>): Entry => ({ key: 'k1', kind: 'sale', result_code: 'A', invoice: 'abc1', authorized: '10.00', captured: '10.00', refunded: '0.00', adjusted: '0.00', ...over });
const saleKey = (key: string, invoice: string, final: KeyRecord['final']): [string, KeyRecord] => [key, { key, op: 'sale', body: { invoice }, final }];

function judged(over: Partial<Parameters<typeof judge.judgeLedger>[0]>) {
  return judge.judgeLedger({ entries: [], transactions: [], operations: [], keys: new Map(), invoicePrefix: 'abc', removed: [], ...over });
}

describe('the soak judge', () => {
  it('when a clean ledger matches every answer, then every count is zero', () => {
    const r = judged({ entries: [entry({}), entry({ key: 'k2', invoice: 'abc2', result_code: 'D', captured: '0.00' })], keys: new Map([saleKey('i1', 'abc1', { status: 201, body: { key: 'k1' } }), saleKey('i2', 'abc2', { status: 402 })]) });
    expect(r).toMatchObject({ doubleCharges: 0, beyondBounds: 0, disagreements: 0, followupsTwice: 0, refundsTwice: 0, removedCharged: 0 });
  });

  it('when one invoice was charged twice, then it is a double charge, and other merchants\' invoices are not counted', () => {
    const r = judged({ entries: [entry({}), entry({ key: 'k2' }), entry({ key: 'k3', invoice: 'zzz' }), entry({ key: 'k4', invoice: 'zzz' })] });
    expect(r.doubleCharges).toBe(1);
  });

  it('when more was captured than authorized, or refunded than captured, then each is beyond bounds', () => {
    expect(judged({ entries: [entry({ captured: '10.01' }), entry({ key: 'k2', invoice: 'abc2', refunded: '10.01' })] }).beyondBounds).toBe(2);
  });

  it('when a sale was adjusted down and later voided, then it is within bounds (a void moves no money)', () => {
    const adjusted = entry({ authorized: '7.00', captured: '7.00', adjusted: '3.00', refunded: '2.00' });
    expect(judged({ entries: [adjusted, entry({ key: 'k2', invoice: 'abc2', state: 'voided', authorized: '0.00', captured: '26.53', adjusted: '25.11' })] }).beyondBounds).toBe(0);
    expect(judged({ entries: [{ ...adjusted, refunded: '7.01' }] }).beyondBounds).toBe(1);
  });

  it('when a key answered a refusal but the gateway charged its invoice, or 201 named no charge, then the answers disagree with the ledger', () => {
    const keys = new Map([saleKey('i1', 'abc1', { status: 404 }), saleKey('i2', 'abc2', { status: 201, body: { key: 'missing' } })]);
    expect(judged({ entries: [entry({})], keys }).disagreements).toBe(2);
  });

  it('when one transaction was voided twice at the gateway, then a follow-up was sent twice', () => {
    const op = { command: 'cc:void:release', trankey: 'k1', result_code: 'A' };
    expect(judged({ operations: [op, op, { ...op, trankey: 'k2' }] }).followupsTwice).toBe(1);
  });

  it('when a sale was refunded at the gateway more times than refund keys were sent for it, then a refund was sent twice (issue 42)', () => {
    const refundKey = (key: string, sale: string): [string, KeyRecord] => [key, { key, op: 'refund', path: `/v1/sales/${sale}/refunds` }];
    const keys = new Map([refundKey('r1', 'k1'), refundKey('r2', 'k1'), refundKey('r3', 'k2')]);
    const op = (command: string, trankey: string, over = {}) => ({ command, trankey, result_code: 'A', ...over });
    // k1: a part (refund:adjust) and the rest (creditvoid) under two keys; k2: its one key's refund, a folded
    // duplicate and a refused one (neither moves money), then the same key's refund made again.
    const clean = [op('refund:adjust', 'k1'), op('creditvoid', 'k1'), op('refund', 'k2'), op('refund', 'k2', { folded: true }), op('refund', 'k2', { result_code: 'E' })];
    expect(judged({ keys, operations: clean }).refundsTwice).toBe(0);
    expect(judged({ keys, operations: [...clean, op('refund:adjust', 'k2')] }).refundsTwice).toBe(1);
  });

  it('when a removed card is charged after its removal answered, then it counts; a charge before it does not', () => {
    const r = judged({ removed: [{ pmkey: 'pm1', at: 1000 }], transactions: [{ pmkey: 'pm1', time: 999, result_code: 'A' }, { pmkey: 'pm1', time: 1001, result_code: 'A' }] });
    expect(r.removedCharged).toBe(1);
  });

  it('when tokengate\'s view of a standing sale shows another amount refunded than the ledger (a voided refund kept), then the money views disagree; voided and declined sales are not judged', () => {
    const entries = [
      entry({ key: 's1', refunded: '1.00', adjusted: '2.00' }),
      entry({ key: 's2', refunded: '0.00' }),
      { ...entry({ key: 'v1', state: 'voided' }), voided: true },
      entry({ key: 'd1', result_code: 'D' }),
    ];
    const view = (amount: string) => ({ status: 200, body: { amount_refunded: amount } });
    expect(judge.judgeMoneyViews(entries, new Map([['s1', view('3.00')], ['s2', view('0.00')], ['v1', view('5.00')], ['d1', view('1.00')]]))).toMatchObject({ disagree: 0, judged: 2 });
    expect(judge.judgeMoneyViews(entries, new Map([['s1', view('3.00')], ['s2', view('1.00')]]))).toMatchObject({ disagree: 1 });
    expect(judge.judgeMoneyViews(entries, new Map([['s1', { status: 404 }]]))).toMatchObject({ disagree: 1 });
  });

  it('finds a card number plain, spaced, dashed or dotted, and not inside a longer digit run', () => {
    const p = judge.cardPattern(['4000100011112224']);
    for (const text of ['x 4000100011112224 y', '"4000 1000 1111 2224"', '4000-1000-1111-2224', '4000.1000.1111.2224']) expect(text.match(p)).toHaveLength(1);
    expect('94000100011112224'.match(p)).toBeNull();
    expect('4000xxxxxxxx2224'.match(p)).toBeNull();
  });

  it('measures memory growth per hour after warm-up, and none for a process too short-lived to judge', () => {
    const growing = Array.from({ length: 60 }, (_, i) => [i * 30, 100 + i * 0.5] as [number, number]);
    const { growth } = judge.memoryGrowth({ 'replica-1': [growing], 'replica-2': [growing.slice(0, 5)] }, 600);
    expect(growth['replica-1']).toBeCloseTo(60, 0);
    expect(growth['replica-2']).toBeNull();
  });
});
