import openapi from '../../src/http/openapi.json';
import { ApiError, type ErrorDetail } from '../../src/http/errors';
import { parseEmptyBody, parseIdempotencyKey, parseListQuery, parsePathKey, parseSaleRequest, toCents } from '../../src/http/validation';

function detailsOf(fn: () => unknown): readonly ErrorDetail[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const api = err as ApiError;
    expect(api.status).toBe(400);
    expect(api.code).toBe('invalid_request');
    return api.details ?? [];
  }
  throw new Error('expected InvalidRequest');
}

const base = { customer: 'cust_1', payment_method: 'pm-1', amount: '10.00' };

describe('parseSaleRequest', () => {
  it('when the body is complete and valid, then a typed SaleInput comes back with integer cents and two-decimal amounts', () => {
    expect(parseSaleRequest({ ...base, amount: '12.3', amount_detail: { tax: '1.00', tip: '0' }, invoice: 'INV-42/a' })).toEqual({
      customer: 'cust_1', paymentMethod: 'pm-1', amount: '12.30', amountCents: 1230, amountDetail: { tax: '1.00', tip: '0.00' }, invoice: 'INV-42/a', capture: true,
    });
    expect(parseSaleRequest(base)).toEqual({ customer: 'cust_1', paymentMethod: 'pm-1', amount: '10.00', amountCents: 1000, capture: true });
    expect(parseSaleRequest({ ...base, capture: false })).toMatchObject({ capture: false });
  });

  it.each([['1', '1.00'], ['0.01', '0.01'], ['1.5', '1.50'], ['99999999.99', '99999999.99']])('when the amount is %s, then it is accepted as %s', (amount, canonical) => {
    expect(parseSaleRequest({ ...base, amount }).amount).toBe(canonical);
  });

  it.each(['0', '0.00', '-1', '1.234', '.5', '5.', '01.00', '1,00', '1e2', ' 1', '100000000', '100000000.00', 'NaN', ''])(
    'when the amount is "%s", then 400 with a rule on body.amount',
    (amount) => {
      const details = detailsOf(() => parseSaleRequest({ ...base, amount }));
      expect(details.length).toBeGreaterThan(0);
      expect(details.every((d) => d.path === 'body.amount')).toBe(true);
    },
  );

  it('when the amount is a JSON number, then 400 type (decimals must be strings)', () => {
    expect(detailsOf(() => parseSaleRequest({ ...base, amount: 10 }))).toContainEqual({ path: 'body.amount', rule: 'type' });
  });

  it('when the amount is zero, then the rule is positive', () => {
    expect(detailsOf(() => parseSaleRequest({ ...base, amount: '0.00' }))).toEqual([{ path: 'body.amount', rule: 'positive' }]);
  });

  it('when tax + tip exceed the amount in cents, then 400 exceeds_amount; equal is fine', () => {
    expect(detailsOf(() => parseSaleRequest({ ...base, amount: '10.00', amount_detail: { tax: '5.01', tip: '5' } }))).toEqual([
      { path: 'body.amount_detail', rule: 'exceeds_amount' },
    ]);
    expect(parseSaleRequest({ ...base, amount: '0.30', amount_detail: { tax: '0.1', tip: '0.2' } }).amountCents).toBe(30);
  });

  it('when amount_detail is empty or has a bad part or an extra field, then 400', () => {
    expect(detailsOf(() => parseSaleRequest({ ...base, amount_detail: {} }))).toContainEqual({ path: 'body.amount_detail', rule: 'minProperties' });
    expect(detailsOf(() => parseSaleRequest({ ...base, amount_detail: { tax: '1.001' } }))).toContainEqual({ path: 'body.amount_detail.tax', rule: 'pattern' });
    expect(detailsOf(() => parseSaleRequest({ ...base, amount_detail: { tax: '1', shipping: '2' } }))).toContainEqual({ path: 'body.amount_detail.shipping', rule: 'unknown_field' });
  });

  it('when required fields are missing, then each is named', () => {
    const details = detailsOf(() => parseSaleRequest({}));
    expect(details).toEqual(expect.arrayContaining([
      { path: 'body.customer', rule: 'required' }, { path: 'body.payment_method', rule: 'required' }, { path: 'body.amount', rule: 'required' },
    ]));
  });

  it('when an unknown field is sent, then 400 unknown_field names it (issue 41), and a nested one by its whole path', () => {
    expect(detailsOf(() => parseSaleRequest({ ...base, surprise_field_name: 1 }))).toEqual([{ path: 'body.surprise_field_name', rule: 'unknown_field' }]);
    expect(detailsOf(() => parseSaleRequest({ ...base, amount_detail: { tax: '1', shipping: '2' } }))).toContainEqual({ path: 'body.amount_detail.shipping', rule: 'unknown_field' });
    expect(detailsOf(() => parseEmptyBody({ reason: 'x' }))).toEqual([{ path: 'body.reason', rule: 'unknown_field' }]);
  });

  it.each(['4000100011112224', 'n4000100011112224', 'pan_400010', 'a b', '<script>', 'x'.repeat(65), 'ünknown', '__proto__x\n'])('when an unknown field\'s name is %p (could carry card data or markup), then it is reported at its parent, never echoed', (name) => {
    const details = detailsOf(() => parseSaleRequest({ ...base, [name]: 1 }));
    expect(details).toEqual([{ path: 'body', rule: 'unknown_field' }]);
    expect(detailsOf(() => parseEmptyBody({ [name]: 1 }))).toEqual([{ path: 'body', rule: 'unknown_field' }]);
  });

  it('when a value is wrong, then the details never contain it', () => {
    const details = detailsOf(() => parseSaleRequest({ ...base, customer: '<script>marker</script>' }));
    expect(details).toEqual([{ path: 'body.customer', rule: 'pattern' }]);
  });

  it('when __proto__, constructor or prototype appear as keys, then 400 forbidden_key', () => {
    for (const text of ['{"__proto__": {"x": 1}}', '{"amount_detail": {"constructor": {}}}', '{"prototype": 1}']) {
      const body: unknown = JSON.parse(text);
      expect(detailsOf(() => parseSaleRequest({ ...base, ...(body as object) }))).toEqual([{ path: 'body', rule: 'forbidden_key' }]);
    }
  });

  it('when the body is not an object, then 400', () => {
    for (const body of [null, [], 'x', 3, undefined]) expect(detailsOf(() => parseSaleRequest(body))).toEqual([{ path: 'body', rule: 'type' }]);
  });

  it('when the invoice is empty, too long or has unsafe characters, then 400 on body.invoice', () => {
    for (const invoice of ['', 'x'.repeat(65), 'a b', 'a?b', 'a%2F', 'ü']) {
      expect(detailsOf(() => parseSaleRequest({ ...base, invoice }))).toEqual([{ path: 'body.invoice', rule: 'pattern' }]);
    }
    expect(parseSaleRequest({ ...base, invoice: 'x'.repeat(64) }).invoice).toHaveLength(64);
  });
});

describe('toCents', () => {
  it('when amounts have 0, 1 or 2 decimals, then cents are exact integers', () => {
    expect([toCents('0.1'), toCents('0.29'), toCents('99999999.99'), toCents('7')]).toEqual([10, 29, 9999999999, 700]);
  });
});

describe('parseListQuery', () => {
  it('when nothing is given, then limit 20 and offset 0', () => {
    expect(parseListQuery({})).toEqual({ limit: 20, offset: 0 });
  });
  it('when limit is at its bounds, then it is accepted', () => {
    expect(parseListQuery({ limit: '1', offset: '0' })).toEqual({ limit: 1, offset: 0 });
    expect(parseListQuery({ limit: '100', offset: '40' })).toEqual({ limit: 100, offset: 40 });
  });
  it.each([
    [{ limit: '0' }, 'query.limit', 'too_small'],
    [{ limit: '101' }, 'query.limit', 'too_large'],
    [{ limit: '-1' }, 'query.limit', 'integer'],
    [{ limit: '1.5' }, 'query.limit', 'integer'],
    [{ limit: '1e2' }, 'query.limit', 'integer'],
    [{ limit: '0x10' }, 'query.limit', 'integer'],
    [{ limit: '' }, 'query.limit', 'integer'],
    [{ limit: ['1', '2'] }, 'query.limit', 'integer'],
    [{ offset: '-5' }, 'query.offset', 'integer'],
    [{ offset: 'abc' }, 'query.offset', 'integer'],
    [{ sort: 'name' }, 'query.sort', 'unknown_field'],
    [{ '4000100011112224': 'x' }, 'query', 'unknown_field'],
  ])('when the query is %p, then 400 %s %s', (query, path, rule) => {
    expect(detailsOf(() => parseListQuery(query))).toContainEqual({ path, rule });
  });
});

describe('parsePathKey', () => {
  it('when the key is plain, then it comes back', () => {
    expect(parsePathKey('nsds9yd1h5kb9y5d', 'custkey')).toBe('nsds9yd1h5kb9y5d');
    expect(parsePathKey('a'.repeat(64))).toHaveLength(64);
  });
  it.each(['', '../customers', 'a/b', 'a.b', 'a%2Fb', 'a?b', 'a b', 'a'.repeat(65), 'ü'])('when the key is "%s", then 400 on the path parameter', (key) => {
    expect(detailsOf(() => parsePathKey(key, 'pmkey'))).toEqual([{ path: 'path.pmkey', rule: 'pattern' }]);
  });
  it('when the key is not a string, then 400', () => {
    expect(detailsOf(() => parsePathKey(undefined, 'custkey'))).toEqual([{ path: 'path.custkey', rule: 'pattern' }]);
  });
});

describe('parseIdempotencyKey', () => {
  it('when the key is 1 or 255 printable characters, then it comes back', () => {
    expect(parseIdempotencyKey('k')).toBe('k');
    expect(parseIdempotencyKey('~'.repeat(255))).toHaveLength(255);
    expect(parseIdempotencyKey('order 42: retry #1')).toBe('order 42: retry #1');
  });
  it('when the key is missing, then 400 required', () => {
    expect(detailsOf(() => parseIdempotencyKey(undefined))).toEqual([{ path: 'header.idempotency-key', rule: 'required' }]);
    expect(detailsOf(() => parseIdempotencyKey(''))).toEqual([{ path: 'header.idempotency-key', rule: 'required' }]);
  });
  it('when the key is too long or not printable ASCII, then 400 format', () => {
    for (const key of ['x'.repeat(256), 'tab\there', 'é', 'nul\u0000', ['a', 'b']]) {
      expect(detailsOf(() => parseIdempotencyKey(key))).toEqual([{ path: 'header.idempotency-key', rule: 'format' }]);
    }
  });
});

describe('openapi.json as the single source', () => {
  it('when the sale schema in the document changes, then validation follows (the rules come from it)', () => {
    expect(openapi.components.schemas.SaleRequest.additionalProperties).toBe(false);
    expect(openapi.components.parameters.Limit.schema).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
    expect(openapi.components.schemas.Amount.pattern).toBe('^(0|[1-9][0-9]{0,7})(\\.[0-9]{1,2})?$');
  });
});
