import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { rawCall, shapeDiff } from '../support/wire-shape';
import ccSale from '../fixtures/wire/cc-sale.json';
import customerGet from '../fixtures/wire/customer-get.json';
import customerList from '../fixtures/wire/customer-list.json';
import paymentMethodList from '../fixtures/wire/payment-method-list.json';
import probes from '../fixtures/wire/probes.json';

/**
 * Fidelity: the request shapes real clients send, replayed over HTTP against the sandbox (port 0), and the
 * answers compared with what the real sandbox answered (test/fixtures/wire: field names, JSON types, string
 * formats). Sources, all in Spire-Recovery-Solutions/UsaEPay.NET at dd210f6 unless said otherwise:
 *   NET-FACTORY  UsaEPay.NET/Factories/UsaEPayRequestFactory.cs (request construction)
 *   NET-REQ      UsaEPay.NET/Models/Classes/UsaEPayRequest.cs (JSON names; decimals as JSON numbers)
 *   NET-CLIENT   UsaEPay.NET/UsaEPayClient.cs (SendRequest: the serialised request as body, GETs too)
 *   NET-IT       UsaEPay.NET.Tests/UsaEPayClientTests.cs, IntegrationTests/*.cs (what passes at the real sandbox)
 *   WIRE         UsaEPay.NET.Tests/UnitTests/WireFormatDeserializationTests.cs (captured JSON)
 *   REF          docs/api-rest.md (the gateway's REST reference)
 *   PHP          bam-bam-bigelow/epay-sdk-php at 81a9fee (the official SDK 2.1.6), lib/API.php runCall
 */

const EXACT = { exact: true };
const AT_LEAST = { exact: false };
const FULL_NUMBER = /\b\d{13,19}\b/;

/** The .NET client's serialisation of CreditCardSaleRequest (NET-FACTORY lines 12-52, NET-REQ): amount a JSON number. */
function dotnetCardSale(number: string, amount: string, extra: Record<string, unknown> = {}): string {
  const body = {
    command: 'cc:sale',
    email: 'john@example.com',
    description: 'fidelity',
    creditcard: { cardholder: 'John Doe', number, expiration: '0930', cvc: '123' },
    billing_address: { first_name: 'John', last_name: 'Doe', street: '555 Test Street', city: 'Testington', state: 'OK', postalcode: '33242' },
    invoice: 'INV-001',
    ...extra,
  };
  // A C# decimal keeps its scale on the wire (10.00m → 10.00), which JSON.stringify cannot write: splice it in.
  return JSON.stringify(body).replace(/^\{/, `{"amount":${amount},`);
}

describe('sandbox fidelity: real clients against the sandbox, answers against captures of the real one', () => {
  let wire: RunningSandbox;
  let spec: RunningSandbox;
  beforeAll(async () => {
    [wire, spec] = await Promise.all([
      startSandbox({ settings: { ratePerMinute: 10_000, wireFormat: 'wire' } }),
      startSandbox({ settings: { ratePerMinute: 10_000 } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([wire.close(), spec.close()]);
  });
  beforeEach(() => {
    wire.reset();
    spec.reset();
  });

  // WIRE CcSaleJson; the request: NET-FACTORY CreditCardSaleRequest + AmountDetail + SaveCard, decimal amount.
  it('when the .NET client sells 29.99 with amount_detail, save_card and a receipt, then the answer has the captured sale fields', async () => {
    const body = dotnetCardSale('4000100011112224', '29.99', {
      send_receipt: true,
      save_card: true,
      amount_detail: { subtotal: '24.99', tax: '2.50', tip: '1.50', shipping: '1.00' },
    });
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', body);
    expect(r.status).toBe(200);
    expect(shapeDiff(r.json, ccSale.capture, EXACT)).toEqual([]);
    expect(r.json).toMatchObject({
      result_code: 'A',
      auth_amount: '29.99',
      trantype: 'Credit Card Sale',
      creditcard: { type: 'V', number: '4000xxxxxxxx2224', entry_mode: 'Card Not Present, Manually Keyed' },
      amount_detail: { tip: '1.50', tax: '2.50', shipping: '1.00', subtotal: '24.99' },
      savedcard: { type: 'Visa', cardnumber: '4000xxxxxxxx2224', expiration: '0930' },
      batch: { batchrefnum: expect.any(Number) },
    });
    expect(r.text).not.toMatch(FULL_NUMBER);
  });

  // NET-IT TokenizeCard → TokenSale_ReturnsApproved (token in creditcard.number, cvc only, Amount = 10);
  // REF "Token Sale" (command "sale", amount "17.99"). The answer: WIRE CcSaleJson less what was not asked for.
  it('when the saved card token is charged in creditcard.number with only a cvc, then it is approved with the sale fields', async () => {
    const saved = await rawCall(wire.baseUrl, 'POST', 'transactions', dotnetCardSale('4000100011112224', '10', { save_card: true }));
    const token = (saved.json as { savedcard: { key: string } }).savedcard.key;
    expect(token).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);

    const dotnet = await rawCall(wire.baseUrl, 'POST', 'transactions', `{"command":"cc:sale","amount":10,"creditcard":{"number":"${token}","cvc":"123"},"billing_address":{"first_name":"John","last_name":"Doe"},"invoice":"INV-002"}`);
    const reference = await rawCall(wire.baseUrl, 'POST', 'transactions', JSON.stringify({ ...probes.tokenSaleReference.request, creditcard: { number: token, cvc: '123' } }));
    const { amount_detail: _d, savedcard: _s, receipts: _r, ...plainSale } = ccSale.capture;
    for (const [r, invoice] of [[dotnet, 'INV-002'], [reference, '101']] as const) {
      expect(r.status).toBe(200);
      expect(shapeDiff(r.json, { ...plainSale, invoice }, EXACT)).toEqual([]); // the invoice is the request's echo
      expect(r.json).toMatchObject({ result_code: 'A', invoice, creditcard: { number: '4000xxxxxxxx2224' } });
    }
    expect(reference.json).toMatchObject({ auth_amount: '17.99' });
    expect(wire.transactions().map((t) => t.cardSource)).toEqual(['card', 'creditcard.number', 'creditcard.number']);
  });

  // REF "Create Token" (cc:save; the example's expiration 0919 moved to the future) and NET-FACTORY
  // TokenizeCardRequest, then NET-IT TokenSale_ReturnsApproved with the savedcard key.
  it('when the .NET client tokenises a card with cc:save, then the reference\'s answer comes back, nothing is charged, and the token sells', async () => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', JSON.stringify(probes.createTokenReference.request));
    expect(r.status).toBe(200);
    expect(shapeDiff(r.json, probes.createTokenReference.response, AT_LEAST)).toEqual([]);
    expect(r.json).toMatchObject({ result_code: 'A', key: '', refnum: '', savedcard: { type: 'Visa', cardnumber: '4000xxxxxxxx2224', expiration: '0930' } });
    expect(wire.transactions()).toHaveLength(0);
    const token = (r.json as { savedcard: { key: string } }).savedcard.key;
    const sale = await rawCall(wire.baseUrl, 'POST', 'transactions', `{"command":"cc:sale","amount":10,"creditcard":{"number":"${token}","cvc":"123"}}`);
    expect(sale.json).toMatchObject({ result_code: 'A', creditcard: { number: '4000xxxxxxxx2224' } });
    const bad = await rawCall(wire.baseUrl, 'POST', 'transactions', '{"command":"cc:save","creditcard":{"number":"4000100011112225","expiration":"0930"}}');
    expect(bad.json).toMatchObject({ result_code: 'E', error_code: '10004', key: '' });
  });

  // REF "Token Sale": its example token (16 alphanumerics) is not one this sandbox issued.
  it('when a token of the reference\'s form is unknown, then the answer is the card-reference error, not a bad request', async () => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', JSON.stringify(probes.tokenSaleReference.request));
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ result_code: 'E', error_code: '10142' });
  });

  // Probes of commit 7513e85 (declines, error_code a string); request: NET-IT DeclineTests (Amount = 10, cvc 999).
  it.each(probes.declines.cards)('when the .NET client charges declining card $number, then error_code "$error_code" and "$error" as probed', async ({ number, error_code, error }) => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', dotnetCardSale(number, '10', { creditcard: { cardholder: 'Test Decline', number, expiration: '0929', cvc: '999' } }));
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ result_code: 'D', result: 'Declined', error, error_code });
    expect(typeof (r.json as { error_code: unknown }).error_code).toBe(probes.declines.errorCodeType);
    // No decline was captured whole: the approved sale's fields less the batch, with an empty authcode (our choice).
    const { batch: _b, amount_detail: _d, savedcard: _s, receipts: _r, ...declineFields } = ccSale.capture;
    expect(shapeDiff(r.json, { ...declineFields, authcode: '' }, AT_LEAST)).toEqual([]);
  });

  // NET-IT PartialAuthTests: Amount = 100.00m (JSON 100.00), amount_detail { enable_partialauth: true }.
  it.each([
    ['4000000011112275', '50.00'],
    ['4000000011112283', '75.00'],
  ])('when the .NET client charges partial card %s 100.00 with enable_partialauth, then result P and auth_amount %s', async (number, auth) => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', dotnetCardSale(number, '100.00', { amount_detail: { enable_partialauth: true } }));
    expect(r.json).toMatchObject({ result_code: 'P', result: 'Partially Approved', auth_amount: auth });
  });

  // UsaEPay.NET.Tests/IntegrationTests/AvsTests.cs (passes at the real sandbox): cards of docs/developer-reference-testcards.md.
  it.each([
    ['4000100011112224', '123', 'YYY'],
    ['4000100211112222', '999', 'NYZ'],
    ['4000100411112220', '999', 'YNA'],
    ['4000100511112229', '999', 'NNN'],
    ['4000100811112226', '999', 'XXR'],
    ['4000100911112225', '999', 'XXS'],
  ])('when the .NET AVS test charges %s (cvc %s), then it is approved with AVS %s', async (number, cvc, avs) => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', dotnetCardSale(number, '10', { creditcard: { cardholder: 'John Doe', number, expiration: '0929', cvc } }));
    expect(r.json).toMatchObject({ result_code: 'A', avs: { result_code: avs, result: expect.stringMatching(/\S/) } });
  });

  // PHP: runCall json_encode()s the caller's array, so a float amount goes out as 10.0; REF uses "command": "sale".
  it.each([
    ['a PHP float', '{"command":"sale","amount":10.0,"creditcard":{"number":"4000100011112224","expiration":"0930","cvc":"123"}}', '10.00'],
    ['a PHP string', '{"command":"cc:sale","amount":"10.00","creditcard":{"number":"4000100011112224","expiration":"0930","cvc":"123"}}', '10.00'],
    ['a JSON integer (the .NET client\'s Amount = 10)', '{"command":"cc:sale","amount":10,"creditcard":{"number":"4000100011112224","expiration":"0930","cvc":"123"}}', '10.00'],
  ])('when the amount comes as %s, then the sale is approved for that amount', async (_name, body, amount) => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', body);
    expect(r.json).toMatchObject({ result_code: 'A', auth_amount: amount });
  });

  // docs/ENDPOINT-VALIDATION-CHECKLIST.md row 103: a bad command gets error_code 20019 as a NUMBER.
  it('when the command is unknown, then a transaction-shaped error with error_code 20019 as a number, and nothing charged', async () => {
    const r = await rawCall(wire.baseUrl, 'POST', 'transactions', '{"command":"cc:teleport","amount":"1.00"}');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ type: 'transaction', result_code: 'E', result: 'Error', error: probes.unknownCommand.error, error_code: probes.unknownCommand.error_code });
    expect(wire.transactions()).toHaveLength(0);
  });

  // WIRE CustomerGetJson; request: NET-FACTORY RetrieveCustomerRequest via NET-CLIENT (body "{}" on a GET); PHP Customers::get(custkey).
  it('when one customer is read (with a {} body, as the .NET client sends), then it has the captured customer fields', async () => {
    const c = wire.fixtures.firstCustomer();
    const r = await rawCall(wire.baseUrl, 'GET', `customers/${c.key}`, '{}');
    expect(r.status).toBe(200);
    expect(shapeDiff(r.json, customerGet.capture, EXACT)).toEqual([]);
    const got = r.json as { custom_fields: Record<string, unknown>; payment_methods: unknown[] };
    expect(Object.keys(got.custom_fields)).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    expect(got.payment_methods).toHaveLength(c.payment_methods.length);
    expect(shapeDiff(got.payment_methods[0], paymentMethodList.capture.data[0], EXACT)).toEqual([]);
    expect(r.text).not.toMatch(FULL_NUMBER);
    expect((await rawCall(wire.baseUrl, 'GET', `customers/${c.custid}`)).json).toMatchObject({ key: c.key });
    expect((await rawCall(wire.baseUrl, 'GET', 'customers/nosuchcustomer00')).json).toEqual({ error: 'Customer Not Found', errorcode: 99999 });
  });

  // WIRE CustomerListJson; request: NET-FACTORY RetrieveCustomerListRequest(limit 2) with its {} body.
  it('when customers are listed, then the envelope and items have the captured fields, total a string on the wire', async () => {
    const r = await rawCall(wire.baseUrl, 'GET', 'customers?limit=2&offset=0', '{}');
    expect(shapeDiff(r.json, customerList.capture, EXACT)).toEqual([]);
    expect(r.json).toMatchObject({ type: 'list', limit: 2, offset: 0, total: '21' });
  });

  // WIRE PaymentMethodListJson (the card method); NET-FACTORY RetrievePaymentMethodListRequest / RetrievePaymentMethodRequest.
  it('when payment methods are listed or read one by one, then they have the captured fields: expires MMYY, sortord, 17-character keys', async () => {
    const c = wire.fixtures.firstCustomer();
    const list = await rawCall(wire.baseUrl, 'GET', `customers/${c.key}/payment_methods?limit=20&offset=0`, '{}');
    const { data: capturedData, ...capturedEnvelope } = paymentMethodList.capture;
    const { data, ...envelope } = list.json as { data: Record<string, unknown>[] };
    expect(shapeDiff(envelope, capturedEnvelope, EXACT)).toEqual([]);
    for (const m of data) expect(shapeDiff(m, capturedData[0], EXACT)).toEqual([]);
    const pm = c.payment_methods[1]!;
    const one = await rawCall(wire.baseUrl, 'GET', `customers/${c.key}/payment_methods/${pm.key}`, '{}');
    expect(shapeDiff(one.json, capturedData[0], EXACT)).toEqual([]);
    expect(one.json).toMatchObject({ key: pm.key, expires: pm.expiration, ccnum4last: pm.number.slice(-4) });
    expect(pm.key).toHaveLength(17);
    expect((await rawCall(wire.baseUrl, 'GET', `customers/${c.key}/payment_methods/${pm.pmid}`)).json).toMatchObject({ key: pm.key });
    expect((await rawCall(wire.baseUrl, 'GET', `customers/${c.key}/payment_methods/nosuchmethod00000`)).json).toEqual({ error: 'Payment Method Not Found', errorcode: 40453 });
  });

  // REF Create Customer / Payment Methods (the .NET client's AddPaymentMethodRequest and PHP Payment_methods::post
  // send these bodies); what is then read back must have the captured GET shapes (WIRE CustomerGetJson,
  // PaymentMethodListJson), and the write answers differ only where gateway-facts.md says they do.
  it('when a customer and a card are created through the API, then reading them gives the captured shapes; the answers differ only in custid, sortord and null lists', async () => {
    const { custom_fields: _cf, billing_schedules: _bs, payment_methods: _pm, ...capturedCustomer } = customerGet.capture;
    const { key: _k, type: _t, custid: _c, ...fields } = capturedCustomer;
    const created = await rawCall(wire.baseUrl, 'POST', 'customers', JSON.stringify({ ...fields, postalcode: Number(fields.postalcode) }));
    expect(shapeDiff(created.json, { ...capturedCustomer, custid: 0, payment_methods: null, billing_schedules: null }, EXACT)).toEqual([]);
    const key = (created.json as { key: string }).key;
    const added = await rawCall(wire.baseUrl, 'POST', `customers/${key}/payment_methods`, JSON.stringify([{ pay_type: 'cc', number: '4000100011112224', expiration: '0929', cardholder: 'Test User', method_name: 'Visa', avs_street: '123 Main', avs_postalcode: '90001' }]));
    const capturedCard = paymentMethodList.capture.data[0]!;
    expect(Array.isArray(added.json)).toBe(true);
    expect(shapeDiff((added.json as unknown[])[0], { ...capturedCard, sortord: 1 }, EXACT)).toEqual([]);
    const got = await rawCall(wire.baseUrl, 'GET', `customers/${key}`, '{}');
    expect(shapeDiff(got.json, customerGet.capture, EXACT)).toEqual([]);
    expect(shapeDiff((got.json as { payment_methods: unknown[] }).payment_methods[0], capturedCard, EXACT)).toEqual([]);
    expect(added.text).not.toMatch(FULL_NUMBER);
  });

  it('when the format is switched at run time through the admin route, then the next list answers in it; a bad value is refused', async () => {
    const set = (wireFormat: unknown) => rawCall(spec.url, 'POST', '/_sandbox/settings', JSON.stringify({ wireFormat }));
    expect((await set('wire')).status).toBeLessThan(300);
    expect((await rawCall(spec.baseUrl, 'GET', 'customers?limit=1')).json).toMatchObject({ total: '21' });
    expect((await set('xml')).status).toBe(400);
    expect((await set('spec')).status).toBeLessThan(300);
    expect((await rawCall(spec.baseUrl, 'GET', 'customers?limit=1')).json).toMatchObject({ total: 21 });
  });

  // The spec's forms stay the default (gateway-api-v2.md: total an integer, firstname/lastname) beside the wire's.
  it('when the sandbox runs in the default spec format, then total is an integer and the spec names ride beside the captured fields', async () => {
    const r = await rawCall(spec.baseUrl, 'GET', 'customers?limit=2', '{}');
    expect(shapeDiff(r.json, { ...customerList.capture, total: 3 }, AT_LEAST)).toEqual([]);
    expect(r.json).toMatchObject({ total: 21 });
    expect((r.json as { data: unknown[] }).data[0]).toMatchObject({ firstname: expect.any(String), first_name: expect.any(String) });
    const c = spec.fixtures.firstCustomer();
    const one = await rawCall(spec.baseUrl, 'GET', `customers/${c.key}`);
    expect(shapeDiff(one.json, customerGet.capture, AT_LEAST)).toEqual([]);
    expect(one.json).toMatchObject({ firstname: c.firstname, lastname: c.lastname });
  });
});
