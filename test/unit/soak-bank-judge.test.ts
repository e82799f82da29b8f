/**
 * The soak's judge of bank payments (bench/soak/bank.js, issue 38): from the sandbox's ledger, a returned payment
 * whose sale.returned never reached the merchant, a refund of a returned payment that reached the gateway, and a
 * return test account's payment the ACH clock never returned are each seen; a clean run counts nothing.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
interface BankLedgerEntry { key: string; ach?: { status: string; returned_at?: number; return_code?: string } }
interface BankOperation { command: string; trankey: string; result_code: string; time: number }
const bank = require('../../bench/soak/bank') as {
  judgeReturns(input: { entries: BankLedgerEntry[]; operations: BankOperation[]; bankSales: Map<string, { returns: boolean }>; seenSaleEvents: Set<string> }): {
    returned: string[]; expectedReturns: number; eventsMissing: string[]; refundsAfterReturn: string[]; byStatus: Record<string, number>;
  };
  RETURN_ACCOUNTS: string[];
  ordinaryAccount(): string;
};

const RETURNED_AT = Date.parse('2026-12-02T16:00:00Z');
const sales = new Map([['r1', { returns: true }], ['s1', { returns: false }]]);
const entries: BankLedgerEntry[] = [
  { key: 'r1', ach: { status: 'R', returned_at: RETURNED_AT, return_code: 'R01' } },
  { key: 's1', ach: { status: 'S' } },
  { key: 'card', ach: undefined },
];

describe('the soak judge of bank payments', () => {
  it('when every return was heard and no refund of it reached the gateway, then nothing is counted', () => {
    const r = bank.judgeReturns({ entries, operations: [{ command: 'refund', trankey: 's1', result_code: 'A', time: RETURNED_AT + 1000 }], bankSales: sales, seenSaleEvents: new Set(['sale.returned:r1']) });
    expect(r).toMatchObject({ returned: ['r1'], expectedReturns: 1, eventsMissing: [], refundsAfterReturn: [], byStatus: { R: 1, S: 1 } });
  });

  it('when a returned payment has no sale.returned at the receiver, then it is missing', () => {
    const r = bank.judgeReturns({ entries, operations: [], bankSales: sales, seenSaleEvents: new Set(['sale.succeeded:r1']) });
    expect(r.eventsMissing).toEqual(['r1']);
  });

  it('when a refund of a returned payment reached the gateway after its return, refused there or not, then it is counted; one before the return is not', () => {
    const operations: BankOperation[] = [
      { command: 'refund', trankey: 'r1', result_code: 'E', time: RETURNED_AT + 5000 },
      { command: 'refund:adjust', trankey: 'r1', result_code: 'A', time: RETURNED_AT - 86_400_000 },
    ];
    const r = bank.judgeReturns({ entries, operations, bankSales: sales, seenSaleEvents: new Set(['sale.returned:r1']) });
    expect(r.refundsAfterReturn).toEqual(['r1 refund E']);
  });

  it('when a return test account\'s payment is still settled at the end, then it is not among the returned (the clock did not move it)', () => {
    const r = bank.judgeReturns({ entries: [{ key: 'r1', ach: { status: 'S' } }, entries[1] as BankLedgerEntry], operations: [], bankSales: sales, seenSaleEvents: new Set() });
    expect(r.expectedReturns - r.returned.length).toBe(1);
  });

  it('when an ordinary account is drawn, then it is never a return test account', () => {
    for (let i = 0; i < 1000; i++) expect(bank.RETURN_ACCOUNTS).not.toContain(bank.ordinaryAccount());
  });
});
