import { GatewayConnectionResetError, GatewayRateLimitedError, GatewayRefusedError, GatewayServerError, GatewayTimeoutError, GatewayUnavailableError } from '../../src/gateway/errors';
import { toApiError } from '../../src/http/write-errors';
import { StoreUnavailableError } from '../../src/idempotency';
import { LimiterUnavailableError, RateLimitExceededError } from '../../src/limiter';
import { SaleRefusedError } from '../../src/sales/follow-up-service';
import { WriteInProgressError, WriteKeyReusedError, WriteNotSentError, WriteOutcomeUnknownError, sentness } from '../../src/writes';

/** The one failure taxonomy every write uses: whether it may have been sent, and the contract's answer. */
describe('write failures', () => {
  it('when a failure proves nothing was sent, then it is classified not sent', () => {
    for (const err of [
      new RateLimitExceededError(1000), new LimiterUnavailableError(), new StoreUnavailableError('down'), new GatewayUnavailableError('refused'),
      new GatewayRateLimitedError('155'), new GatewayRefusedError('void', 'E', { errorcode: 24 }), new WriteNotSentError(new Error('token lookup')),
    ]) expect(sentness(err)).toBe('no');
  });

  it('when the gateway may have acted (timeout, reset, 5xx, a bug), then it is classified maybe sent', () => {
    for (const err of [new GatewayTimeoutError('t'), new GatewayConnectionResetError('r'), new GatewayServerError('503', { status: 503 }), new TypeError('bug')]) {
      expect(sentness(err)).toBe('maybe');
    }
  });

  it.each([
    [new SaleRefusedError('not_capturable'), 409, 'sale_not_capturable'],
    [new WriteNotSentError(new SaleRefusedError('refund_exceeds')), 422, 'refund_exceeds_sale'],
    [new GatewayRefusedError('capture', 'E', { errorcode: 10133 }), 409, 'sale_not_capturable'],
    [new GatewayRefusedError('void', 'E', { errorcode: 26 }), 409, 'sale_not_voidable'],
    [new GatewayRefusedError('void', 'E', { errorcode: 24 }), 409, 'sale_not_voidable'],
    [new GatewayRefusedError('refund', 'E', { errorcode: 114 }), 422, 'refund_exceeds_sale'],
    [new GatewayRefusedError('refund', 'E', { errorcode: 10105 }), 404, 'not_found'],
    [new GatewayRefusedError('refund', 'E', { errorcode: 20020 }), 502, 'gateway_error'],
    [new WriteInProgressError(3), 409, 'idempotency_in_progress'],
    [new WriteKeyReusedError(), 422, 'idempotency_key_reused'],
    [new WriteOutcomeUnknownError(4), 409, 'outcome_unknown'],
    [new GatewayTimeoutError('t'), 504, 'gateway_timeout'],
    [new StoreUnavailableError('down'), 503, 'unavailable'],
    [new RateLimitExceededError(2500), 429, 'rate_limited'],
  ] as const)('when a write fails with %p, then the answer is %i %s', (err, status, code) => {
    const api = toApiError(err);
    expect([api.status, api.code]).toEqual([status, code]);
  });

  test('when an outcome is unknown, then the 409 carries the reconciler\'s next look as Retry-After', () => {
    expect(toApiError(new WriteOutcomeUnknownError(4)).headers).toEqual({ 'Retry-After': '4' });
  });
});
