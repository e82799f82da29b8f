import { REFERENCE_CARDS, TEST_CARDS, brandOf, isCardNumber, maskCardNumber, outcomeFor } from '../../src/sandbox/cards';
import { FixtureStore, lastDayOfExpiry, loadFixtures } from '../../src/sandbox/fixtures';
import { DUPLICATE_WINDOW_MS, Ledger } from '../../src/sandbox/ledger';
import { expirationState, formatCents, parseSale, toCents, type SaleInput } from '../../src/sandbox/sale-request';

const NOW = new Date('2026-06-15T12:00:00Z');
const card = (number: string, expiration = '1230') => ({ command: 'cc:sale', amount: '10.00', invoice: 'inv-1', creditcard: { number, expiration, cvc: '123' } });
const ctx = { endpointKey: 'v2', clientIp: '127.0.0.1', now: NOW.getTime(), duplicateFolding: false, slowCardScale: 1 };

function sale(body: unknown): SaleInput {
  const parsed = parseSale(body, NOW);
  if (!parsed.ok) throw new Error(`not a sale: ${JSON.stringify(parsed)}`);
  return parsed.sale;
}

describe('sandbox sale parsing', () => {
  it('when amounts are decimal strings, then cents are exact', () => {
    expect(toCents('10')).toBe(1000);
    expect(toCents('0.5')).toBe(50);
    expect(toCents('19.99')).toBe(1999);
    expect(formatCents(1999)).toBe('19.99');
    expect(formatCents(5)).toBe('0.05');
  });

  it.each([
    ['a non-object body', [], 40001],
    ['no command', { amount: '1.00' }, 40002],
    ['a real command the sandbox does not carry out', { command: 'check:sale', amount: '1.00' }, 40003],
    ['no amount', { command: 'cc:sale' }, 40004],
    ['a boolean amount', { command: 'cc:sale', amount: true }, 40005],
    ['a numeric amount with three decimals', { command: 'cc:sale', amount: 1.001 }, 40005],
    ['a negative numeric amount', { command: 'cc:sale', amount: -1 }, 40005],
    ['an amount in exponent notation', { command: 'cc:sale', amount: '1e3' }, 40005],
    ['a numeric tax with three decimals', { command: 'cc:sale', amount: 10, amount_detail: { tax: 0.125 }, UMCardRef: 'abcd-efgh-ijkl-mnop' }, 40007],
    ['a zero amount', { command: 'cc:sale', amount: '0.00' }, 40005],
    ['three decimals', { command: 'cc:sale', amount: '1.001' }, 40005],
    ['a negative amount', { command: 'cc:sale', amount: '-1.00' }, 40005],
    ['tax above the amount', { command: 'cc:sale', amount: '1.00', amount_detail: { tax: '2.00' }, UMCardRef: 'abcd-efgh-ijkl-mnop' }, 40007],
    ['a non-decimal tip', { command: 'cc:sale', amount: '1.00', amount_detail: { tip: 'lots' }, UMCardRef: 'abcd-efgh-ijkl-mnop' }, 40007],
    ['no card', { command: 'cc:sale', amount: '1.00' }, 40006],
    ['both token and card', { ...card('4000100011112224'), UMCardRef: 'abcd-efgh-ijkl-mnop' }, 40009],
    ['a numeric invoice', { ...card('4000100011112224'), invoice: 5 }, 40008],
  ])('when the body has %s, then it is rejected with the listed 400 errorcode', (_name, body, code) => {
    const parsed = parseSale(body, NOW);
    expect(!parsed.ok && 'reject' in parsed && parsed.reject.errorcode).toBe(code);
  });

  it.each([
    ['fails Luhn', card('4000100011112225'), 'invalidCardNumber'],
    ['is too short', card('400010001111'), 'invalidCardNumber'],
    ['has a month 13', card('4000100011112224', '1330'), 'invalidExpiration'],
    ['has no expiration', { ...card('4000100011112224'), creditcard: { number: '4000100011112224' } }, 'invalidExpiration'],
    ['expired last month', card('4000100011112224', '0526'), 'cardExpired'],
  ])('when the card %s, then it is a transaction error (HTTP 200, result E)', (_name, body, name) => {
    const parsed = parseSale(body, NOW);
    expect(!parsed.ok && 'saleError' in parsed && parsed.saleError).toBe(name);
  });

  it('when the expiration is this month, then it is still valid', () => {
    expect(expirationState('0626', NOW)).toBe('ok');
    expect(expirationState('0526', NOW)).toBe('expired');
  });

  it('when the token comes as UMCardRef or as creditcard.number with expiration 0000, then both are tokens', () => {
    expect(sale({ command: 'cc:sale', amount: '1.00', UMCardRef: 'abcd-efgh-ijkl-mnop' }).card).toEqual({ kind: 'token', cardref: 'abcd-efgh-ijkl-mnop', via: 'UMCardRef' });
    expect(sale({ command: 'cc:sale', amount: '1.00', creditcard: { number: 'abcd-efgh-ijkl-mnop', expiration: '0000' } }).card).toEqual({ kind: 'token', cardref: 'abcd-efgh-ijkl-mnop', via: 'creditcard.number' });
  });

  it('when the token is in creditcard.number with only a cvc (reference "Token Sale", .NET TokenSaleRequest), then it is a token', () => {
    expect(sale({ command: 'sale', amount: '17.99', creditcard: { number: 'abcd-efgh-ijkl-mnop', cvc: '123' } }).card).toEqual({ kind: 'token', cardref: 'abcd-efgh-ijkl-mnop', via: 'creditcard.number' });
    expect(sale({ command: 'sale', amount: '17.99', creditcard: { number: 'dx0c3ns6xips28h3', cvc: '123' } }).card).toMatchObject({ kind: 'token', cardref: 'dx0c3ns6xips28h3' });
  });

  it.each([
    ['10', 10, '10.00'],
    ['10.0 (a PHP float)', 10.0, '10.00'],
    ['29.99', 29.99, '29.99'],
    ['0.07', 0.07, '0.07'],
    ['the string "5.5"', '5.5', '5.5'],
  ])('when the amount is %s, then it is accepted as that many cents', (_name, amount, kept) => {
    const s = sale({ command: 'cc:sale', amount, UMCardRef: 'abcd-efgh-ijkl-mnop' });
    expect(s.amount).toBe(kept);
    expect(s.amountCents).toBe(toCents(kept));
  });

  it.each([['sale'], ['cc:sale']])('when the command is spelled %s, then it is a sale', (command) => {
    expect(sale({ command, amount: '1.00', UMCardRef: 'abcd-efgh-ijkl-mnop' }).amountCents).toBe(100);
  });

  it('when the command is not a gateway command, then it is the transaction-shaped unknown-command answer', () => {
    for (const command of ['cc:teleport', 'SALE', 7]) expect(parseSale({ command, amount: '1.00' }, NOW)).toEqual({ ok: false, unknownCommand: true });
  });

  it('when amount_detail carries numbers and the echoed parts, then they are kept as decimal strings', () => {
    const s = sale({ command: 'cc:sale', amount: 29.99, amount_detail: { tip: '1.50', tax: 2.5, shipping: '1.00', subtotal: 24.99, enable_partialauth: true }, UMCardRef: 'abcd-efgh-ijkl-mnop' });
    expect(s.amountDetail).toEqual({ tip: '1.50', tax: '2.50', shipping: '1.00', subtotal: '24.99' });
  });
});

describe('sandbox test-card outcomes', () => {
  it('when a number is masked, then the first four and last four stay', () => {
    expect(maskCardNumber('4000100011112224')).toBe('4000xxxxxxxx2224');
    expect(maskCardNumber('371122223332225')).toBe('3711xxxxxxx2225');
  });

  it('when a card is not in the table, then it is approved with full matches', () => {
    expect(outcomeFor('4111111111111111')).toMatchObject({ kind: 'approved', avs: 'YYY', cvc: 'M' });
    expect(brandOf('371122223332225')).toBe('American Express');
    expect(brandOf('5555444433332226')).toBe('MasterCard');
    expect(brandOf('6011222233332224')).toBe('Discover');
  });

  it.each([
    ['4000000011112275', '10.01', 'P', '5.00'],
    ['4000000011112283', '10.01', 'P', '7.50'],
    ['4000000011112283', '0.03', 'P', '0.02'],
    ['4000100011112224', '10.01', 'A', '10.01'],
    ['4000300011112220', '10.01', 'D', '0.00'],
  ])('when %s is charged %s, then result %s with auth_amount %s (rounded down)', (number, amount, code, auth) => {
    const ledger = new Ledger(new FixtureStore([]));
    const { response } = ledger.sale({ ...sale(card(number)), amount, amountCents: toCents(amount) }, ctx);
    expect(response).toMatchObject({ result_code: code, auth_amount: auth });
  });

  it('when every declining test card is charged, then HTTP-200-style declines carry error and a string error_code', () => {
    const ledger = new Ledger(new FixtureStore([]));
    for (const [number, outcome] of TEST_CARDS) {
      if (outcome.kind !== 'declined') continue;
      const { response } = ledger.sale(sale(card(number)), ctx);
      expect(response).toMatchObject({ result_code: 'D', result: 'Declined', authcode: '', error: outcome.decline?.error, error_code: outcome.decline?.error_code });
      expect(typeof response.error_code).toBe('string');
    }
  });

  it('when folding is on and the same card, amount and invoice come again within 15 minutes, then the original answer returns with is_duplicate Y', () => {
    const ledger = new Ledger(new FixtureStore([]));
    const on = { ...ctx, duplicateFolding: true };
    const first = ledger.sale(sale(card('4000100011112224')), on);
    const again = ledger.sale(sale(card('4000100011112224')), { ...on, now: on.now + 14 * 60_000 });
    expect(again.folded).toBe(true);
    expect(again.response).toEqual({ ...first.response, is_duplicate: 'Y' });
    expect(ledger.transactions()).toHaveLength(1);
    expect(ledger.transactions()[0]?.foldedDuplicates).toBe(1);
    const late = ledger.sale(sale(card('4000100011112224')), { ...on, now: on.now + 16 * 60_000 });
    expect(late.folded).toBe(false);
    const otherInvoice = ledger.sale(sale({ ...card('4000100011112224'), invoice: 'inv-2' }), on);
    expect(otherInvoice.folded).toBe(false);
  });

  it('when sales keep coming for longer than the folding window, then the duplicate memory holds only the window and recent sales still fold', () => {
    const ledger = new Ledger(new FixtureStore([]));
    const on = { ...ctx, duplicateFolding: true };
    const step = 100; // one sale every 100 ms for 20 minutes: 12,000 sales, 9,000 of them inside any 15 minutes
    for (let i = 0; i < 12_000; i++) ledger.sale(sale({ ...card('4000100011112224'), invoice: `inv-${i}` }), { ...on, now: on.now + i * step });
    const end = on.now + 11_999 * step;
    expect(ledger.duplicateMemorySize).toBe(DUPLICATE_WINDOW_MS / step + 1);
    expect(ledger.sale(sale({ ...card('4000100011112224'), invoice: 'inv-11999' }), { ...on, now: end + 1 }).folded).toBe(true);
    // The first sale left the window long ago: the same card, amount and invoice is a new charge.
    expect(ledger.sale(sale({ ...card('4000100011112224'), invoice: 'inv-0' }), { ...on, now: end + 1 }).folded).toBe(false);
  });

  it('when refnums are issued, then they are numeric strings and strictly increasing', () => {
    const ledger = new Ledger(new FixtureStore([]));
    const refnums = [1, 2, 3].map(() => Number(ledger.sale(sale(card('4000100011112224')), ctx).response.refnum));
    expect(refnums[1]).toBeGreaterThan(refnums[0] as number);
    expect(refnums[2]).toBeGreaterThan(refnums[1] as number);
  });
});

describe('sandbox reference test cards (the gateway\'s test-card page)', () => {
  it('when a reference AVS/CVC card is looked up, then it is a valid card, approved with its listed AVS and CVC, and not a gateway-facts card', () => {
    for (const [number, outcome] of REFERENCE_CARDS) {
      expect(isCardNumber(number)).toBe(true);
      expect(TEST_CARDS.has(number)).toBe(false);
      expect(outcomeFor(number)).toBe(outcome);
      expect(outcome.kind).toBe('approved');
    }
    expect(outcomeFor('4000100411112220')).toMatchObject({ avs: 'YNA', cvc: 'M' });
    expect(outcomeFor('5555444433332275')).toMatchObject({ avs: 'YYY', cvc: 'X' });
  });
});

describe('sandbox fixtures file', () => {
  const customers = loadFixtures();

  it('when loaded, then it holds exactly 21 customers and the first has the approved, declined and 50 % cards', () => {
    expect(customers).toHaveLength(21);
    expect(customers[0]?.payment_methods.map((m) => m.number)).toEqual(['4000100011112224', '4000300011112220', '4000000011112275']);
  });

  it('when loaded, then every test card of gateway-facts.md appears at least once', () => {
    const numbers = new Set(customers.flatMap((c) => c.payment_methods.map((m) => m.number)));
    for (const number of TEST_CARDS.keys()) expect(numbers).toContain(number);
  });

  it('when loaded, then keys look like the gateway\'s and tokens expire in the future', () => {
    for (const c of customers) {
      expect(c.key).toMatch(/^[a-z0-9]{16}$/);
      for (const m of c.payment_methods) {
        expect(m.key).toMatch(/^[a-z0-9]{17}$/); // 17 as captured (UsaEPay.NET WireFormatDeserializationTests, PaymentMethodList)
        expect(lastDayOfExpiry(m.expiration) > new Date().toISOString().slice(0, 10)).toBe(true);
      }
    }
    expect(lastDayOfExpiry('0228')).toBe('2028-02-29');
  });
});
