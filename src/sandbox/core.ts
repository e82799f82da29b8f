import type { Logger } from '../observability/logger';
import { AchClock } from './ach/ach-clock';
import { SandboxClock } from './clock';
import { Faults } from './faults';
import { FixtureStore, type FixtureCustomer } from './fixtures';
import { FollowUpDuplicates } from './follow-ups';
import { Ledger } from './ledger';
import { Lifecycle } from './lifecycle';
import { PaymentKeys, publicKeyFor } from './payment-keys';
import { RateCounter, type WindowSpec } from './rate-counter';
import { validateSettings, type SandboxSettings } from './settings';
import { StatsRecorder } from './stats';
import { createSandboxWebhooks, type SandboxWebhooks } from './webhooks';

/** Everything one running sandbox holds, shared by the API, admin routes and the public handle. */

export interface EndpointPolicy {
  key: string;
  minute: WindowSpec;
  day: WindowSpec;
  /** Undefined = any client IP. */
  allowIps: readonly string[] | undefined;
}

/** `::ffff:127.0.0.1` → `127.0.0.1`, so allow-lists and loopback checks see one form. */
export function normaliseIp(address: string | undefined): string {
  if (!address) return '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export function isLoopback(ip: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip) || ip === '::1';
}

export class SandboxCore {
  readonly counter = new RateCounter();
  /** The sandbox's dates (clock.ts): the wall clock, moved forward by tests. */
  readonly clock = new SandboxClock();
  readonly stats = new StatsRecorder();
  readonly faults: Faults;
  readonly ledger: Ledger;
  readonly fixtures: FixtureStore;
  /** Captures, voids, refunds and batches of processed transactions (lifecycle.ts). */
  readonly lifecycle = new Lifecycle();
  readonly followUpDuplicates = new FollowUpDuplicates();
  /** Pay.js payment keys minted by the card form (payment-keys.ts). */
  readonly paymentKeys = new PaymentKeys();
  /** The gateway's webhooks, sent for every change of the lifecycle (webhooks/). */
  readonly webhooks: SandboxWebhooks;
  /** Checks on their way from pending to settled or returned (ach/ach-clock.ts). */
  readonly ach: AchClock;
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  closed = false;

  constructor(
    readonly settings: SandboxSettings,
    customers: readonly FixtureCustomer[],
    readonly logger: Logger,
  ) {
    this.fixtures = new FixtureStore(customers);
    this.ledger = new Ledger(this.fixtures);
    this.faults = new Faults((latency) => this.update(latency));
    this.webhooks = createSandboxWebhooks(this.lifecycle, settings, logger, () => this.clock.now());
    // A jump of the clock closes what fell due meanwhile (the batch timers), webhooks included, at once, and the
    // daily close's wall-clock timer is set again for the clock's new time.
    this.clock.onAdvance((now) => {
      this.lifecycle.tick(now, this.settings);
      this.webhooks.configure();
    });
    // The ACH clock: told of every jump, and looking at the wall clock's own passing each second.
    this.ach = new AchClock(this.lifecycle, (event) => this.webhooks.announce(event));
    this.clock.onAdvance((now) => this.ach.run(now));
    this.ach.start(() => this.clock.now());
  }

  update(partial: Partial<SandboxSettings>): void {
    Object.assign(this.settings, validateSettings(partial));
    this.webhooks.configure();
  }

  /** Counters, stats, transactions, faults, duplicate memory and tokens back to start (settings stay). */
  reset(): void {
    this.counter.reset();
    this.stats.reset();
    this.ledger.reset();
    this.lifecycle.reset();
    this.ach.reset();
    this.followUpDuplicates.clear();
    this.faults.clear();
    this.faults.resetCounts();
    this.fixtures.resetTokens();
    this.paymentKeys.reset();
    this.webhooks.reset();
  }

  /** The merchant's public key for Pay.js (`GET /publickey`). */
  get publicKey(): string {
    return publicKeyFor(this.settings.apiKey);
  }

  /**
   * Policy of an endpoint key (spec §8, §9). RATELIMT behaves as a key allowing one call per client IP that
   * never rolls over (until reset); IPACCESS as a key whose allow-list is empty (spec §7 rules 1, 2).
   */
  policy(key: string): EndpointPolicy | undefined {
    const s = this.settings;
    const windows = (perMinute: number, perDay: number) => ({ minute: { limit: perMinute, windowMs: s.rateWindowMs }, day: { limit: perDay, windowMs: s.rateDayWindowMs } });
    if (key === 'v2') return { key, ...windows(s.ratePerMinute, s.ratePerDay), allowIps: undefined };
    if (key === 'RATELIMT') return { key, minute: { limit: 1, windowMs: Infinity }, day: { limit: 1, windowMs: Infinity }, allowIps: undefined };
    if (key === 'IPACCESS') return { key, ...windows(s.ratePerMinute, s.ratePerDay), allowIps: [] };
    const e = s.endpointKeys.find((k) => k.key === key);
    if (!e) return undefined;
    return { key, ...windows(e.ratePerMinute ?? s.ratePerMinute, e.ratePerDay ?? s.ratePerDay), allowIps: e.allowIps?.map(normaliseIp) };
  }

  /** A timer that close() cuts short, so a closing sandbox leaves nothing running. */
  sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.set(timer, resolve);
    });
  }

  latency(): number {
    const { latencyMs, jitterMs } = this.settings;
    return latencyMs + (jitterMs > 0 ? Math.floor(Math.random() * (jitterMs + 1)) : 0);
  }

  shutdown(): void {
    this.closed = true;
    this.ach.stop();
    for (const [timer, resolve] of this.timers) {
      clearTimeout(timer);
      resolve();
    }
    this.timers.clear();
  }
}
