import { abaChecksumValid, isRoutingNumber, isRoutingSymbol } from '../../src/bank/aba';
import { containsBankNumbers, isBankLikeName, redactBankNumbers } from '../../src/bank/bank-data';
import { findRawPaymentData } from '../../src/http/card-guard';
import { redactString, redactValue } from '../../src/observability/redact';

/** Real routing numbers (published on their banks' sites) and the gateway's test accounts (gateway-facts.md, ACH). */
const ROUTING = ['021000021', '011000015', '121000358', '322271627', '061000104', '026009593', '111000025', '091000019'];
const ACCOUNTS = ['10178101', '10178116', '4839201', '1234', '12345678901234567', '000123456789'];

const digits = (s: string) => Array.from(s, (c) => Number(c));
/** The same text in full-width digits and spaces, and in Arabic-Indic digits. */
const wide = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d))).replace(/ /g, '\u3000');
const arabic = (s: string) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0x0660 + Number(d)));

describe('ABA routing numbers', () => {
  it('when real routing numbers are checked, then each passes; a digit changed fails the checksum', () => {
    for (const r of ROUTING) expect(isRoutingNumber(r)).toBe(true);
    expect(isRoutingNumber('021000022')).toBe(false);
    expect(isRoutingNumber('987654321')).toBe(false); // the gateway's error test routing number
    expect(isRoutingNumber('02100002')).toBe(false);
  });

  it('when nine digits pass the checksum but start with no Federal Reserve routing symbol, then they are no routing number', () => {
    expect(abaChecksumValid(digits('500000005'))).toBe(true);
    expect(isRoutingNumber('500000005')).toBe(false);
    const symbols = Array.from({ length: 100 }, (_, n) => n).filter(isRoutingSymbol);
    expect(symbols.length).toBe(38);
  });
});

describe('bank account numbers in a value', () => {
  const r = '021000021';
  const a = '10178101';

  it('when a routing number stands beside an account number in any usual form, then the value holds bank data', () => {
    const forms = [
      `${r} ${a}`, `${r} - ${a}`, `${r} / ${a}`, `${r}  ${a}`, `${r}\n${a}`, `${a} ${r}`, `${r}: ${a}`, `${r} #${a}`, `${r}\t${a}`,
      `⑆${r}⑆ ${a}⑈`, `⑈1001⑈ ⑆${r}⑆ ${a}⑈`, `⑆${r}⑆${a}⑈`,
      `routing ${r} account ${a}`, `Routing: ${r}, Account: ${a}`, `RTN ${r} ACCT ${a}`, `ABA# ${r} / Acct No. ${a}`,
      `acct ${a} routing ${r}`, `my account is ${a} and routing ${r}`, `pay from ${r} ${a} please`, `routing=${r}&account=${a}`,
      `{"routing":"${r}","account":"${a}"}`, `ABA${r} ACCT${a}`,
      // other scripts' digits and invisible characters, as the card rule reads them
      wide(`${r} ${a}`), arabic(`${r} ${a}`), `${r}\u200b ${a}`, `021\u200b000021 ${a}`,
    ];
    for (const account of ACCOUNTS) forms.push(`${r} ${account}`);
    for (const routing of ROUTING) forms.push(`${routing} ${a}`);
    expect(forms.filter((f) => !containsBankNumbers(f))).toEqual([]);
  });

  it('when a 9-digit number passing the ABA check stands alone or beside what is no account, then the value is not bank data', () => {
    const clean = [
      r, `order ${r}`, `Order ${r} for 2 items`, `${r}, ${a}`, `${r}; ${a}`, `${r} 123`, `${r} 2026-11-27`, `27/11/2026 ${r}`,
      `${r} 1234.56`, `${r} 12:30`, `ORD-${r}-1234`, `INV${r}-00012345`, `Invoice ${r} PO 12345`, `${r} (12345678)`,
      `${r} ${'1'.repeat(18)}`, `${r}-${a}`, `${r}/${a}`, `${r}:${a}`, `${r}.${a}`, `ref ${r}, qty 1200`, `tracking ${r} parcel 55512`,
    ];
    expect(clean.filter((f) => containsBankNumbers(f))).toEqual([]);
  });

  it('when a value is redacted, then the routing and the account numbers are gone and the rest stays', () => {
    expect(redactBankNumbers(`pay from ${r} ${a} please`)).toBe('pay from [bank] please');
    expect(redactBankNumbers('no bank data here 123456780')).toBe('no bank data here 123456780');
    expect(redactString(`note: routing ${r} account ${a}`)).not.toMatch(/021000021|10178101/);
    expect(JSON.stringify(redactValue({ account_number: a, routing: r, note: `${r} ${a}`, account_type: 'checking' }))).not.toMatch(/021000021|10178101/);
    expect(redactValue({ account_type: 'checking' })).toEqual({ account_type: 'checking' });
  });
});

describe('bank field names', () => {
  it('when a field names bank data in any case or separator style, then it is bank-like', () => {
    for (const name of ['routing', 'Routing_Number', 'routing-number', 'ROUTINGNUMBER', 'account', 'account_number', 'accountNumber', 'bank_account', 'check', 'aba', 'iban', 'acct_no', 'UMrouting', 'us_bank_account', 'sort code']) {
      expect([name, isBankLikeName(name)]).toEqual([name, true]);
    }
  });

  it('when a field only describes an account (the contract\'s bank payment method and request fields), then it is not bank-like', () => {
    for (const name of ['account_type', 'account_last4', 'routing_last4', 'accountholder', 'authorization', 'pay_type', 'payment_key', 'method_name', 'customerid', 'custkey', 'checkout', 'bank_name', 'number', 'description']) {
      expect([name, isBankLikeName(name)]).toEqual([name, false]);
    }
  });
});

describe('the request scan finds card and bank data in one walk', () => {
  const req = (part: object) => ({ headers: {}, originalUrl: '/v1/sales', query: {}, ...part });

  it('when bank data is in a body name, a nested value, the query or a header, then the scan names it bank and where', () => {
    expect(findRawPaymentData(req({ body: { check: { accountholder: 'x' } } }))).toEqual({ location: 'body', kind: 'bank' });
    expect(findRawPaymentData(req({ body: { description: ['a', { note: 'routing 021000021 acct 10178101' }] } }))).toEqual({ location: 'body', kind: 'bank' });
    expect(findRawPaymentData(req({ query: { q: '021000021 10178101' } }))).toEqual({ location: 'query', kind: 'bank' });
    expect(findRawPaymentData(req({ headers: { 'x-routing-number': '1' } }))).toEqual({ location: 'header', kind: 'bank' });
    expect(findRawPaymentData(req({ headers: { 'x-note': '021000021 10178101' } }))).toEqual({ location: 'header', kind: 'bank' });
    expect(findRawPaymentData(req({ originalUrl: '/v1/sales/021000021%2010178101' }))).toEqual({ location: 'path', kind: 'bank' });
  });

  it('when card data is there too or alone, then it is named card; a clean request is not refused', () => {
    expect(findRawPaymentData(req({ body: { invoice: '4000100011112224' } }))).toEqual({ location: 'body', kind: 'card' });
    expect(findRawPaymentData(req({ body: { customer: 'c1', payment_method: 'pm1', amount: '10.00', invoice: '021000021', account_type: 'checking', authorization: { text: 'v1' } } }))).toBeUndefined();
  });
});
