/**
 * The subscription routes' bodies (contract, "Subscriptions"), checked against openapi.json's schemas like every
 * other body (validation.ts), then the rules a schema cannot say: amounts above zero, tax + tip within the amount.
 */
import { canonicalAmount, toCents } from '../gateway/money';
import type { CreateInput, UpdateInput } from '../subscriptions';
import { InvalidRequest } from './errors';
import { compile, parseBody } from './validation';

const validateCreate = compile({ $ref: '#/$defs/CreateSubscriptionRequest' });
const validateUpdate = compile({ $ref: '#/$defs/UpdateSubscriptionRequest' });
const validateCancel = compile({ $ref: '#/$defs/CancelSubscriptionRequest' });

type Detail = { tax?: string; tip?: string };

/** The amount and its detail, canonical; 400 naming the field when the amount is zero or the detail exceeds it. */
function money(amount: string, detail: Detail | undefined): { amount: string; amountDetail?: Detail } {
  const cents = toCents(amount);
  if (cents <= 0) throw new InvalidRequest([{ path: 'body.amount', rule: 'positive' }]);
  if (detail && toCents(detail.tax ?? '0') + toCents(detail.tip ?? '0') > cents) throw new InvalidRequest([{ path: 'body.amount_detail', rule: 'exceeds_amount' }]);
  if (!detail) return { amount: canonicalAmount(amount) };
  const amountDetail: Detail = {};
  if (detail.tax !== undefined) amountDetail.tax = canonicalAmount(detail.tax);
  if (detail.tip !== undefined) amountDetail.tip = canonicalAmount(detail.tip);
  return { amount: canonicalAmount(amount), amountDetail };
}

export function parseCreateSubscription(body: unknown): CreateInput {
  const raw = parseBody<{
    amount: string; amount_detail?: Detail; interval: CreateInput['interval']; interval_count?: number; start?: string; count?: number;
    payment_method?: string; description?: string; invoice_prefix?: string; consent: { text: string };
  }>(body, validateCreate);
  return {
    ...money(raw.amount, raw.amount_detail),
    interval: raw.interval,
    intervalCount: raw.interval_count ?? 1,
    ...(raw.start !== undefined ? { start: raw.start } : {}),
    ...(raw.count !== undefined ? { count: raw.count } : {}),
    ...(raw.payment_method !== undefined ? { paymentMethod: raw.payment_method } : {}),
    ...(raw.description !== undefined ? { description: raw.description } : {}),
    ...(raw.invoice_prefix !== undefined ? { invoicePrefix: raw.invoice_prefix } : {}),
    consent: { text: raw.consent.text },
  };
}

export function parseUpdateSubscription(body: unknown): UpdateInput {
  const raw = parseBody<{ payment_method?: string; amount?: string; amount_detail?: Detail; description?: string; status?: 'paused' | 'active' }>(body, validateUpdate);
  const input: UpdateInput = {};
  if (raw.amount !== undefined) Object.assign(input, money(raw.amount, raw.amount_detail));
  else if (raw.amount_detail !== undefined) input.amountDetail = raw.amount_detail;
  if (raw.payment_method !== undefined) input.paymentMethod = raw.payment_method;
  if (raw.description !== undefined) input.description = raw.description;
  if (raw.status !== undefined) input.status = raw.status;
  return input;
}

/** `POST /v1/subscriptions/{key}/cancel`: no body, `{}`, or `{at_period_end}`. */
export function parseCancelSubscription(body: unknown): { atPeriodEnd: boolean } {
  if (body === undefined) return { atPeriodEnd: false };
  const raw = parseBody<{ at_period_end?: boolean }>(body, validateCancel);
  return { atPeriodEnd: raw.at_period_end === true };
}
