import { achFail } from './ach/failure';
import { achNote } from './ach/notice';
import { cardUpdate, type CardUpdateRequest } from './card-updater';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { silentLogger, type Logger } from '../observability/logger';
import { createSandboxApp } from './app';
import type { SandboxClock } from './clock';
import { SandboxCore } from './core';
import type { FaultControl } from './faults';
import { loadFixtures, type FixtureCustomer, type FixturePaymentMethod, type ResolvedMethod, type TokenState } from './fixtures';
import type { RecordedTransaction } from './ledger';
import { ledgerView, type SandboxLedger } from './ledger-view';
import { resolveSettings, type SandboxSettings } from './settings';
import type { SandboxStats } from './stats';
import type { WebhookControl } from './webhooks';

export interface StartOptions {
  settings?: Partial<SandboxSettings>;
  /** 0 = a free port (the default). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  logger?: Logger;
  /** Another fixture file (default config/sandbox-fixtures.json). */
  fixturesFile?: string;
}

export interface SandboxFixtures {
  customers: readonly FixtureCustomer[];
  /** The first customer in list order (approved, declined and 50 % partial cards). */
  firstCustomer(): FixtureCustomer;
  paymentMethods(custkey: string): readonly FixturePaymentMethod[];
  /** The live token of a payment method (changes on rotateCardRef). Key or legacy ID. */
  cardrefFor(custkey: string, pmkey: string): string;
  token(custkey: string, pmkey: string): TokenState;
  /** The first payment method holding this card number. */
  findByNumber(number: string): ResolvedMethod | undefined;
}

export interface RunningSandbox {
  url: string;
  baseUrl: string;
  port: number;
  /** Live: read on every request. Change it through update(). */
  settings: SandboxSettings;
  update(partial: Partial<SandboxSettings>): void;
  faults: FaultControl;
  stats(): SandboxStats;
  transactions(): RecordedTransaction[];
  ledger: SandboxLedger;
  /** The webhooks it sends (README.md, Webhooks): what was emitted and tried, hold, release, redeliver. */
  webhooks: WebhookControl;
  fixtures: SandboxFixtures;
  rotateCardRef(custkey: string, pmkey: string): string;
  setTokenExpires(custkey: string, pmkey: string, expires: string): void;
  /** The next `attempts` sales on the stored card `pmkey` decline with `errorCode` (default 10251), then its own outcome returns. */
  declineNext(pmkey: string, attempts: number, errorCode?: string): void;
  /** The card updater changes a stored card and the gateway's `cardupdate.<kind>` webhook tells of it (card-updater.ts). */
  cardUpdate(request: CardUpdateRequest): void;
  /** A bank's notice of change about a check (ach/notice.ts): `ach.note_added`, as `POST /_sandbox/ach/notes`. */
  achNote(trankey: string, note?: string): void;
  /** A check fails after it was sent (ach/failure.ts): status E and `ach.failed`, as `POST /_sandbox/ach/failures`. */
  achFail(trankey: string): void;
  /** A Pay.js check form's payment key for a bank account (as `POST /js/v2/payment_key` with `check`). */
  checkPaymentKey(account: { accountholder: string; routing: string; account: string; account_type?: 'checking' | 'savings' }): string;
  /** The sandbox's own clock (clock.ts): read it, move it forward (as `POST /_sandbox/clock`). */
  clock: SandboxClock;
  reset(): void;
  close(): Promise<void>;
}

function fixturesView(core: SandboxCore): SandboxFixtures {
  const store = core.fixtures;
  return {
    customers: store.customers,
    firstCustomer: () => store.customers[0] as FixtureCustomer,
    paymentMethods: (custkey) => store.customer(custkey)?.payment_methods ?? [],
    cardrefFor: (custkey, pmkey) => store.token(store.resolve(custkey, pmkey).method).cardref,
    token: (custkey, pmkey) => ({ ...store.token(store.resolve(custkey, pmkey).method) }),
    findByNumber: (number) => {
      for (const customer of store.customers) {
        const method = customer.payment_methods.find((m) => m.number === number);
        if (method) return { customer, method };
      }
      return undefined;
    },
  };
}

export async function startSandbox(opts: StartOptions = {}): Promise<RunningSandbox> {
  const settings = resolveSettings(opts.settings);
  const core = new SandboxCore(settings, loadFixtures(opts.fixturesFile), opts.logger ?? silentLogger());
  const server = http.createServer(createSandboxApp(core));
  // Keep-alive like a real gateway, but close() must not wait for idle sockets.
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (err: unknown) => {
    // A port taken: the webhooks' batch timer (started with the settings) must not outlive the failed start.
    await core.webhooks.close();
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}`;
  let closing: Promise<void> | undefined;

  return {
    url,
    baseUrl: `${url}/api/v2/`,
    port,
    settings,
    update: (partial) => core.update(partial),
    faults: core.faults,
    stats: () => core.stats.snapshot(core.ledger, core.faults.injected),
    transactions: () => core.ledger.transactions(),
    ledger: ledgerView(core),
    webhooks: core.webhooks,
    fixtures: fixturesView(core),
    rotateCardRef: (custkey, pmkey) => core.fixtures.rotate(custkey, pmkey),
    setTokenExpires: (custkey, pmkey, expires) => core.fixtures.setExpires(custkey, pmkey, expires),
    declineNext: (pmkey, attempts, errorCode) => core.ledger.scripted.set(pmkey, attempts, errorCode),
    cardUpdate: (request) => core.webhooks.announce(cardUpdate(core, request, core.clock.now())),
    clock: core.clock,
    achNote: (trankey, note) => core.webhooks.announce(achNote(core, trankey, note)),
    achFail: (trankey) => core.webhooks.announce(achFail(core, trankey)),
    checkPaymentKey: (account) => core.paymentKeys.mintCheck(core.publicKey, { account_type: 'checking', ...account }, core.settings.paymentKeyTtlMs),
    reset: () => core.reset(),
    close() {
      closing ??= Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Hanging answers and idle keep-alive sockets would otherwise hold close() open.
          for (const socket of sockets) socket.destroy();
          core.shutdown();
        }),
        // Pending retries and the batch timer stop; posts in flight are aborted.
        core.webhooks.close(),
      ]).then(() => undefined);
      return closing;
    },
  };
}
