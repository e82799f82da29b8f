import { brandOf, maskCardNumber } from './cards';
import { SALE_ERRORS, errorBody } from './errors';
import type { FixtureStore } from './fixtures';
import type { Processed } from './respond';
import { parseCard } from './sale-request';

/**
 * `cc:save`: validates the card and returns a card reference token, charging nothing (the reference's
 * "Create Token", docs/api-rest.md in UsaEPay.NET; the .NET client's TokenizeCardRequest). The answer is the
 * reference's example: `key`, `refnum` and `authcode` empty, `creditcard {number, cardholder}`, and `savedcard`
 * with the `expiration` the .NET authors found on the wire (commit 7513e85, "returned on cc:save").
 * Not a sale: nothing in transactions() or the lifecycle.
 */
export function saveCard(store: FixtureStore, body: Record<string, unknown>, now: Date, deletedCardref: 'refused' | 'honoured' = 'refused'): Processed {
  const card = parseCard(body, now);
  if ('reject' in card) return { status: card.reject.status, body: errorBody(card.reject, card.detail) };
  const base = { type: 'transaction', key: '', refnum: '', is_duplicate: 'N' };
  const error = (name: keyof typeof SALE_ERRORS) => ({ status: 200, body: { ...base, result_code: 'E', result: 'Error', authcode: '', ...SALE_ERRORS[name] } });
  if ('saleError' in card) return error(card.saleError);
  let number: string;
  let expiration: string;
  let key: string;
  if (card.source.kind === 'token') {
    const found = store.lookupToken(card.source.cardref);
    if (!found || found.expires < now.toISOString().slice(0, 10)) return error('cardrefInvalid');
    if (found.removed && deletedCardref !== 'honoured') return error('cardrefRemoved');
    ({ number, expiration } = found);
    key = card.source.cardref;
  } else {
    ({ number, expiration } = card.source);
    key = store.saveCard(number, expiration);
  }
  const cc = body.creditcard as Record<string, unknown> | undefined;
  const masked = maskCardNumber(number);
  return {
    status: 200,
    body: {
      ...base,
      result_code: 'A',
      result: 'Approved',
      authcode: '',
      creditcard: { number: masked, cardholder: typeof cc?.cardholder === 'string' ? cc.cardholder : '' },
      savedcard: { type: brandOf(number), key, cardnumber: masked, expiration },
    },
  };
}
