import type { Config } from '../config/types';
import { observedClock, type Clock } from '../subscriptions/clock';
import type { Logger } from '../observability/logger';
import { startSandbox, type RunningSandbox } from './server';
import { webhookSettingsFromConfig } from './webhooks/settings';

/**
 * The sandbox tokengate starts in place of a gateway (development and test without GATEWAY_BASE_URL; compose.ts):
 * on a free port, with config/'s `sandbox` settings.
 *
 * Its webhooks: with GATEWAY_WEBHOOK_SECRET set, it posts the gateway's webhooks to tokengate itself, signed with
 * that secret, as the gateway does for a merchant who set that key in its console, so `npm start` shows a void
 * made "in the console" (at the sandbox directly) reach the sale's view and the payment events. Unset, the
 * contract's default in every mode holds: `/v1/webhooks/gateway` answers 404 and nothing is posted to it. Opting
 * in by that one variable rather than a generated dev secret keeps development what production is by default
 * (no webhooks unless the merchant set a key) and prints no other secret. SANDBOX_WEBHOOK_URLS still receive
 * them too, as with `npm run sandbox`; GATEWAY_WEBHOOK_SECRET, when set, is the one key they are signed with
 * (the sandbox, like the gateway, signs with one).
 */
export async function startEmbeddedSandbox(config: Config, logger: Logger): Promise<RunningSandbox> {
  const s = config.sandbox;
  const ownKey = config.gateway.webhookSecret?.reveal();
  return startSandbox({
    port: 0,
    logger,
    settings: {
      apiKey: s.apiKey,
      apiPin: s.apiPin.reveal(),
      ratePerMinute: s.ratePerMinute,
      ratePerDay: s.ratePerDay,
      rateWindowMs: s.rateWindowMs,
      rateDayWindowMs: s.rateDayWindowMs,
      rateMode: s.rateMode,
      latencyMs: s.latencyMs,
      jitterMs: s.jitterMs,
      duplicateFolding: s.duplicateFolding,
      // The merchant's daily close, on the sandbox's clock (tokengate's /test/clock moves it).
      batchCloseAt: s.batchCloseAt ?? '',
      deletedCardref: s.deletedCardref,
      lookupRefunds: s.lookupRefunds,
      lookupAuthAmount: s.lookupAuthAmount,
      customFields: s.customFields,
      // The merchant tokengate serves, when named: the embedded sandbox is that merchant's gateway.
      merchantKey: config.gateway.merchantKey ?? s.merchantKey,
      refundWithoutAmount: s.refundWithoutAmount,
      checkPaymentKey: s.checkPaymentKey,
      cardSaleCheckKey: s.cardSaleCheckKey,
      returnedCheckRefund: s.returnedCheckRefund,
      creditReturns: s.creditReturns,
      ...webhookSettingsFromConfig(s),
      ...(ownKey ? { webhookSecret: ownKey } : {}),
    },
  });
}

/**
 * Once tokengate listens at `url` (its public port is known only then: PORT may be 0), the embedded sandbox
 * posts the gateway's webhooks to its `/v1/webhooks/gateway`, when GATEWAY_WEBHOOK_SECRET is set. Returns the
 * receiver's URL, or undefined when the webhooks stay off.
 */
export function postWebhooksToTokengate(sandbox: RunningSandbox, config: Config, url: string): string | undefined {
  if (!config.gateway.webhookSecret) return undefined;
  const receiver = new URL('/v1/webhooks/gateway', url).toString();
  sandbox.update({ webhookUrls: [...config.sandbox.webhookUrls, receiver] });
  return receiver;
}

/**
 * tokengate's clock, driving the embedded sandbox's (contract, "Subscriptions": `POST /test/clock` moves "with the
 * embedded sandbox its ACH clock and batch closing"): whenever this replica reads or moves its clock, the sandbox's
 * catches up to the same offset (only ever forward), so a test or the demo moves one clock and both follow.
 */
export function clockDrivingSandbox(clock: Clock, sandbox: RunningSandbox): Clock {
  return observedClock(clock, (offsetMs) => void sandbox.clock.catchUp(offsetMs));
}
