import { GatewayBadRequestError, GatewayNotFoundError } from '../../src/gateway/errors';
import { containsPan } from '../../src/card/pan';
import { REDACTED, ShapeError, parseCustomer, parseDeleted, parseList, parsePaymentMethod, parsePaymentMethods } from '../../src/gateway/parse';
import { interpret } from '../../src/gateway/transport';
import customerGet from '../fixtures/wire/customer-get.json';
import paymentMethodList from '../fixtures/wire/payment-method-list.json';

// The REST reference's Create Customer answer (Spire-Recovery-Solutions/UsaEPay.NET docs/api-rest.md), with
// custid as the JSON number gateway-facts.md says the create answer carries.
const created = {
  key: '6sddgs2m179ykp7b', type: 'customer', customerid: '234545', custid: 10450020, company: 'Company Men Inc', first_name: 'Robert', last_name: 'Durst',
  street: '1222 Verdugo Cir', street2: '#303', city: 'Los Angeles', state: 'CA', postalcode: '90038', country: 'USA', phone: '8888888888', fax: '7777777777',
  email: 'johndoe@anon.com', url: 'www.google.com', notes: 'Signed up during January 2018 Promotion', description: 'Gold Level Customer', payment_methods: null, billing_schedules: null,
};

// The sandbox's add answer (wire captures' field set; sortord a number in POST answers).
const added = {
  key: 'an02pc6wdjfsr7mv8', type: 'customerpaymentmethod', method_name: 'Visa', expires: '0929', cardholder: 'Test User', card_type: 'Visa', ccnum4last: '2224',
  avs_street: '123 Main', avs_postalcode: '90001', sortord: 0, added: '2026-03-26 13:02:26', updated: '2026-03-26 13:02:26', pay_type: 'cc',
};

describe('wallet answers: customers', () => {
  it('when a create answer carries custid as a number and null lists, then custid is a string and payment_methods is absent (null is not "none")', () => {
    const c = parseCustomer(created);
    expect(c).toMatchObject({ type: 'customer', key: '6sddgs2m179ykp7b', custid: '10450020', first_name: 'Robert', postalcode: '90038', description: 'Gold Level Customer' });
    expect(c).not.toHaveProperty('payment_methods');
    expect(c).not.toHaveProperty('billing_schedules');
  });

  it('when the captured GET is read, then its methods are a typed empty list and custom_fields are not carried', () => {
    const c = parseCustomer(customerGet.capture);
    expect(c).toMatchObject({ key: 'dsddpf0skjps3rvh', custid: '20625189', customerid: 'CUST-001', payment_methods: [] });
    expect(c).not.toHaveProperty('custom_fields');
  });

  it('when a customer uses the spec\'s firstname/lastname or omits fields, then the wire names are filled and the rest are empty text', () => {
    expect(parseCustomer({ key: 'k1', type: 'customer', firstname: 'Ada', lastname: 'Byron', postalcode: 90038 })).toMatchObject({ first_name: 'Ada', last_name: 'Byron', postalcode: '90038', company: '', custid: '' });
  });

  it('when a customer answer is of another type, has no key or a card-shaped one, or an odd methods field, then it is refused', () => {
    for (const bad of [{ ...created, type: 'transaction' }, { ...created, key: '' }, { ...created, key: undefined }, { ...created, key: '4000100011112224' }, { ...created, payment_methods: {} }, [created]]) {
      expect(() => parseCustomer(bad)).toThrow(ShapeError);
    }
  });

  it('when merchant-entered fields hold a card-shaped number, then the customer is kept with the number redacted and each field named, never its value', () => {
    const told: [string, string][] = [];
    const c = parseCustomer({
      ...created, notes: 'card 4000 1000 1111 2224 on file', phone: '4000100011112224', customerid: '5555-4444-3333-2226', fax: 4000100011112224, description: 'Gold',
      payment_methods: [{ ...added, method_name: 'my card 5555_4444_3333_2226' }],
    }, (answer, field) => told.push([answer, field]));
    expect(c).toMatchObject({ key: '6sddgs2m179ykp7b', notes: `card ${REDACTED} on file`, phone: REDACTED, customerid: REDACTED, fax: REDACTED, description: 'Gold' });
    expect(c.payment_methods?.[0]).toMatchObject({ key: 'an02pc6wdjfsr7mv8', method_name: `my card ${REDACTED}`, ccnum4last: '2224' });
    expect(containsPan(JSON.stringify(c))).toBe(false);
    expect(told.sort()).toEqual([['customer', 'customerid'], ['customer', 'fax'], ['customer', 'notes'], ['customer', 'phone'], ['payment method', 'method_name']]);
  });
});

describe('wallet answers: payment methods', () => {
  it('when sortord is 0 (a number or a string), then the method is the default; any other order is not; none means not default', () => {
    expect(parsePaymentMethod(added)).toMatchObject({ sortord: 0, default: true });
    expect(parsePaymentMethod({ ...added, sortord: '0' })).toMatchObject({ sortord: 0, default: true });
    expect(parsePaymentMethod({ ...added, sortord: '2' })).toMatchObject({ sortord: 2, default: false });
    const unsorted = parsePaymentMethod({ ...added, sortord: undefined });
    expect(unsorted.default).toBe(false);
    expect(unsorted).not.toHaveProperty('sortord');
    expect(() => parsePaymentMethod({ ...added, sortord: 'first' })).toThrow(ShapeError);
  });

  it('when expires is the reference\'s date form or a check\'s zero date, then it reads as MMYY or empty; anything else is refused', () => {
    expect(parsePaymentMethod({ ...added, expires: '2022-09-30' }).expires).toBe('0922');
    expect(parsePaymentMethod({ ...added, expires: '0000-00-00' }).expires).toBe('');
    expect(() => parsePaymentMethod({ ...added, expires: 'soon' })).toThrow(ShapeError);
  });

  it('when a method carries the emulator\'s pmid or fields tokengate does not use, then they are not carried on', () => {
    const m = parsePaymentMethod({ ...added, pmid: '2000001', account_number: '3210' });
    expect(Object.keys(m).sort()).toEqual(['added', 'avs_postalcode', 'avs_street', 'card_type', 'cardholder', 'ccnum4last', 'default', 'expires', 'key', 'method_name', 'pay_type', 'sortord', 'type', 'updated']);
  });

  it('when the captured list (a card and a check) is read, then both parse, the check keeps its pay_type', () => {
    const list = parseList(paymentMethodList.capture, parsePaymentMethod);
    expect(list.data.map((m) => [m.pay_type, m.sortord, m.default, m.expires])).toEqual([['cc', 1, false, '0929'], ['check', 1, false, '']]);
  });

  it('when an add answer is not an array, or an item is of another type, then it is refused; a card-shaped method_name is redacted, the method kept', () => {
    expect(parsePaymentMethods([added, { ...added, key: 'second00000000000' }]).map((m) => m.key)).toEqual(['an02pc6wdjfsr7mv8', 'second00000000000']);
    expect(() => parsePaymentMethods(added)).toThrow(ShapeError);
    expect(() => parsePaymentMethods([{ ...added, type: 'customer' }])).toThrow(ShapeError);
    const told: string[] = [];
    expect(parsePaymentMethods([{ ...added, method_name: '4000100011112224' }], (_answer, field) => told.push(field))).toMatchObject([{ key: 'an02pc6wdjfsr7mv8', method_name: REDACTED }]);
    expect(told).toEqual(['method_name']);
  });

  it('when a delete answers {"status":"success"}, then it is read; anything else is not proof of the removal', () => {
    expect(parseDeleted({ status: 'success' })).toBeUndefined();
    for (const bad of [{ status: 'error' }, {}, 'success', null]) expect(() => parseDeleted(bad)).toThrow(ShapeError);
  });
});

describe('wallet errors', () => {
  const answer = (status: number, body: unknown) => ({ status, text: JSON.stringify(body), rateLimit: undefined, host: 'gw' });

  it('when the gateway names a missing customer (99999) or payment method (40453), then it is not found at any status', () => {
    for (const [status, errorcode] of [[404, 99999], [404, 40453], [400, 40453], [200, 99999], [200, 40453]] as const) {
      const err = (() => {
        try {
          interpret(answer(status, { error: 'not found', errorcode }), parseCustomer);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(GatewayNotFoundError);
      expect(err).toMatchObject({ errorcode, outcome: 'not_processed' });
    }
  });

  it('when an error object comes with a success status, then it is a refusal with its code, not an unreadable answer', () => {
    expect(() => interpret(answer(200, { error: 'Invalid expiration date', errorcode: 40452 }), parsePaymentMethod)).toThrow(GatewayBadRequestError);
    expect(() => interpret(answer(400, { error: 'Invalid expiration date', errorcode: 40452 }), parsePaymentMethod)).toThrow(GatewayBadRequestError);
  });
});
