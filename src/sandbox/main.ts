import { ConfigError, loadConfig } from '../config';
import { createLogger } from '../observability/logger';
import { redactString } from '../observability/redact';
import { startSandbox } from './index';
import { webhookSettingsFromConfig } from './webhooks/settings';

/** `npm run sandbox`: the emulator alone, configured by the `sandbox` section of config/ (SANDBOX_* variables). */
async function main(): Promise<void> {
  const config = loadConfig();
  const s = config.sandbox;
  const logger = createLogger({ level: config.logLevel, secrets: [s.apiPin, s.webhookSecret] });
  const sandbox = await startSandbox({
    port: s.port,
    host: s.host,
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
      wireFormat: s.wireFormat,
      batchCloseIntervalMs: s.batchCloseIntervalMs,
      batchCloseAt: s.batchCloseAt ?? '',
      deletedCardref: s.deletedCardref,
      lookupRefunds: s.lookupRefunds,
      lookupAuthAmount: s.lookupAuthAmount,
      customFields: s.customFields,
      merchantKey: s.merchantKey,
      refundWithoutAmount: s.refundWithoutAmount,
      checkPaymentKey: s.checkPaymentKey,
      cardSaleCheckKey: s.cardSaleCheckKey,
      returnedCheckRefund: s.returnedCheckRefund,
      creditReturns: s.creditReturns,
      ...webhookSettingsFromConfig(s),
    },
  });
  // The one line a person starting the emulator needs, printed whatever LOG_LEVEL is, through the redactor.
  process.stdout.write(`${redactString(`sandbox gateway listening on ${sandbox.url} (base ${sandbox.baseUrl})`)}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('sandbox stopping', { signal });
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

// Before a logger exists: config problems one per line (as main.ts), anything else scrubbed like a log line.
main().catch((err: unknown) => {
  const lines = err instanceof ConfigError ? err.problems.map((p) => `config: ${p}`) : [err instanceof Error ? err.message : String(err)];
  for (const line of lines) process.stderr.write(`sandbox: ${redactString(line)}\n`);
  process.exit(1);
});
