/** The webhook knobs of the sandbox's settings (README.md, "Webhooks"): defaults and validation. */
import type { SandboxConfig } from '../../config/types';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The gateway's retry delays (gateway-facts.md, Webhooks): every 5 minutes for an hour, hourly for 11 hours,
 * every 3 hours for 12 hours, every 6 hours for 48 hours. 35 retries after the first try, 72 hours in all.
 */
export const GATEWAY_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([
  ...Array<number>(12).fill(5 * MINUTE),
  ...Array<number>(11).fill(HOUR),
  ...Array<number>(4).fill(3 * HOUR),
  ...Array<number>(8).fill(6 * HOUR),
]);

export interface WebhookSettings {
  /** Receivers (http or https; `user:pass@` in the URL is sent as Basic authentication). None = no events. */
  webhookUrls: readonly string[];
  /** The key of X-Signature; '' = the merchant set none, and events go unsigned. */
  webhookSecret: string;
  /** Delays between attempts of one delivery; its length is the number of retries. */
  webhookRetryScheduleMs: readonly number[];
  /** The gateway's read timeout (45 s) and connect timeout (5 s); tests shrink them. */
  webhookTimeoutMs: number;
  webhookConnectTimeoutMs: number;
  /** Each event's first delivery waits a random 0..this many ms, so a burst arrives shuffled. */
  webhookDisorderMs: number;
  /** The chance, in percent, that an event is delivered a second time (same event_id and body). */
  webhookDuplicatePercent: number;
}

/**
 * The knobs config/'s `sandbox` section sets (SANDBOX_WEBHOOK_*), as `npm run sandbox` and the embedded sandbox of
 * development mode (src/sandbox/embedded.ts) both take them; the timeouts stay the gateway's.
 */
export function webhookSettingsFromConfig(s: SandboxConfig): Partial<WebhookSettings> {
  return {
    webhookUrls: s.webhookUrls,
    webhookSecret: s.webhookSecret?.reveal() ?? '',
    ...(s.webhookRetryScheduleMs ? { webhookRetryScheduleMs: s.webhookRetryScheduleMs } : {}),
    webhookDisorderMs: s.webhookDisorderMs,
    webhookDuplicatePercent: s.webhookDuplicatePercent,
  };
}

export const WEBHOOK_DEFAULTS: Readonly<WebhookSettings> = Object.freeze({
  webhookUrls: [],
  webhookSecret: '',
  webhookRetryScheduleMs: GATEWAY_RETRY_SCHEDULE_MS,
  webhookTimeoutMs: 45_000,
  webhookConnectTimeoutMs: 5_000,
  webhookDisorderMs: 0,
  webhookDuplicatePercent: 0,
});

const INTS: Record<string, [min: number, max: number]> = {
  webhookTimeoutMs: [1, 600_000],
  webhookConnectTimeoutMs: [1, 600_000],
  webhookDisorderMs: [0, 600_000],
  webhookDuplicatePercent: [0, 100],
};

/** Longest single delay: a week (the gateway's longest is 6 hours; setTimeout holds up to ~24 days). */
const MAX_DELAY_MS = 7 * 24 * HOUR;
const MAX_RETRIES = 100;
/** The gateway lets a merchant configure several URLs; a bound keeps a bad update from fanning out without end. */
const MAX_URLS = 20;

export function isWebhookSetting(name: string): name is keyof WebhookSettings {
  return Object.hasOwn(WEBHOOK_DEFAULTS, name);
}

/** True for an http(s) URL; the reason a URL is refused never repeats it (it may carry a password). */
export function isReceiverUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Validates one webhook setting; `fail` builds the error the caller throws (settings.ts's SettingsError). */
export function validateWebhookSetting(name: keyof WebhookSettings, value: unknown, fail: (message: string) => Error): Partial<WebhookSettings> {
  const range = INTS[name];
  if (range) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < range[0] || value > range[1]) throw fail(`${name} must be a whole number in ${range.join('..')}`);
    return { [name]: value };
  }
  if (name === 'webhookUrls') {
    if (!Array.isArray(value) || value.length > MAX_URLS) throw fail(`webhookUrls must be an array of at most ${MAX_URLS} URLs`);
    value.forEach((u: unknown, i) => {
      if (!isReceiverUrl(u)) throw fail(`webhookUrls[${i}] must be an http or https URL`);
    });
    return { webhookUrls: Object.freeze([...(value as string[])]) };
  }
  if (name === 'webhookSecret') {
    if (typeof value !== 'string' || value.length > 1024) throw fail('webhookSecret must be a string of at most 1024 characters');
    return { webhookSecret: value };
  }
  // webhookRetryScheduleMs
  if (!Array.isArray(value) || value.length > MAX_RETRIES || !value.every((v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 && v <= MAX_DELAY_MS)) {
    throw fail(`webhookRetryScheduleMs must be at most ${MAX_RETRIES} whole numbers in 1..${MAX_DELAY_MS}`);
  }
  return { webhookRetryScheduleMs: Object.freeze([...(value as number[])]) };
}

/** What GET /_sandbox/settings shows: the secret redacted, a receiver's password too. */
export function publicWebhookSettings(s: WebhookSettings): Pick<WebhookSettings, 'webhookUrls' | 'webhookSecret'> {
  return { webhookUrls: s.webhookUrls.map(shownUrl), webhookSecret: s.webhookSecret ? '[redacted]' : '' };
}

/** A receiver URL as logs and records show it: origin and path; no credentials, no query (it may hold a token). */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}
