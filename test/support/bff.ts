import http from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';
import { buildService, type Service } from '../../src/compose';
import { answerClientErrors, API_SERVER_OPTIONS, createAppServer } from '../../src/http';
import { loadConfig } from '../../src/config';
import { CapturingStream, createLogger } from '../../src/observability/logger';
import { startSandbox, type RunningSandbox, type SandboxSettings } from '../../src/sandbox';
import { redisUrl, uniquePrefix } from './redis';
import { startServiceProcess, type ServiceProcess } from './service-process';
import { shiftSandboxClock, shiftServiceClock } from './time-shift';

export type Mode = 'in-process' | 'process';
export const MODES: readonly Mode[] = ['in-process', 'process'];

export const TEST_JWT_SECRET = 'tokengate-test-secret-0123456789abcdef';
export const ISSUER = 'tokengate-test';
export const AUDIENCE = 'tokengate';
/** The service's JWT settings matching token(): for the env of a service under test. */
export const TEST_JWT_ENV = { JWT_SECRET: TEST_JWT_SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWT_ALGORITHMS: 'HS256' };

export interface Claims {
  sub: string;
  scope?: string;
  custkey?: string;
}

/** A tokengate under test: the service (in this process or as `node dist/main.js`) in front of a sandbox. */
export interface Bff {
  mode: Mode;
  url: string;
  adminUrl: string;
  sandbox: RunningSandbox;
  /** Everything the service logged so far (JSON lines). */
  logs(): string;
  /** The service itself, in-process mode only: a test drives its loops (renewal passes, reconciler passes) by hand. */
  readonly service: Service | undefined;
  /**
   * Stops the service and starts a new one on the same Redis and key prefix (state must survive). `signal`
   * (process mode only): how the process is stopped, e.g. SIGKILL for a replica that dies with what it held in
   * memory. `between`: runs after the stop and before the start (e.g. Redis started again only once it is gone).
   */
  restart(options?: { signal?: NodeJS.Signals; between?: () => Promise<void> }): Promise<void>;
  /** Another replica beside this one: the same environment (Redis, key prefix, gateway), in this process; stopped with it. */
  replica(): Promise<{ url: string; stop(): Promise<void> }>;
  stop(): Promise<void>;
}

/** An HS256 token as callers would send it; `overrides` lets attack tests break it. */
export function token(claims: Claims, options: { expiresIn?: number; secret?: string; issuer?: string; audience?: string } = {}): string {
  return jwt.sign({ ...claims }, options.secret ?? TEST_JWT_SECRET, {
    algorithm: 'HS256',
    expiresIn: options.expiresIn ?? 300,
    issuer: options.issuer ?? ISSUER,
    audience: options.audience ?? AUDIENCE,
  });
}

export interface BffOptions {
  mode?: Mode;
  env?: Record<string, string>;
  sandbox?: Partial<SandboxSettings>;
  /** The gateway path segment after /api/ (default v2; e.g. IPACCESS for the sandbox's test path). */
  endpoint?: string;
  /** The service is started without a reachable Redis on purpose: wait for liveness, not readiness. */
  expectDegraded?: boolean;
  /**
   * A small gateway budget, the same on both sides: the sandbox counts sliding windows of it (and answers 429
   * past it), the service mirrors it with the margin. `env` may still set the limiter's classes.
   */
  budget?: { perWindow: number; windowMs: number; marginMs: number };
}

export async function startBff(options: BffOptions = {}): Promise<Bff> {
  const mode = options.mode ?? 'in-process';
  const { budget } = options;
  const budgetSettings = budget ? { ratePerMinute: budget.perWindow, rateWindowMs: budget.windowMs, rateMode: 'sliding' as const } : {};
  const budgetEnv: Record<string, string> = budget
    ? { GATEWAY_RATE_PER_MINUTE: String(budget.perWindow), GATEWAY_RATE_WINDOW_MS: String(budget.windowMs), GATEWAY_RATE_MARGIN_MS: String(budget.marginMs) }
    : {};
  // TEST_CLOCK_SHIFT_MS (time-shift.ts): the sandbox's clock and tokengate's start that far ahead, together.
  const sandbox = shiftSandboxClock(await startSandbox({ port: 0, settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000, slowCardScale: 0.05, ...budgetSettings, ...options.sandbox } }));
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    // A test that brings its own topology (REDIS_SENTINELS, REDIS_CLUSTER_NODES) gets no REDIS_URL beside it.
    ...(options.env?.REDIS_SENTINELS || options.env?.REDIS_CLUSTER_NODES ? {} : { REDIS_URL: redisUrl() }),
    REDIS_KEY_PREFIX: uniquePrefix('bff').replace(/[^A-Za-z0-9:_-]/g, '_'),
    GATEWAY_BASE_URL: `${sandbox.url}/api/${options.endpoint ?? 'v2'}/`,
    GATEWAY_TIMEOUT_MS: '1500',
    GATEWAY_RATE_PER_MINUTE: '100000',
    GATEWAY_RATE_PER_DAY: '1000000',
    LIMITER_SALE_RESERVED_SLOTS: '0',
    ...budgetEnv,
    ...TEST_JWT_ENV,
    ...options.env,
  };
  const degraded = options.expectDegraded === true;
  let running: Running;
  try {
    running = mode === 'in-process' ? await startInProcess(env) : await startAsProcess(env, degraded);
    // Degraded: no Redis to keep tokengate's clock in (its own tests do not wait on dates).
    if (!degraded) await shiftServiceClock(running.adminUrl).catch(async (err: unknown) => {
      await running.stop();
      throw err;
    });
  } catch (err) {
    await sandbox.close(); // or Jest waits forever on the sandbox's open server
    throw err;
  }
  let current = running;
  let earlierLogs = '';
  const replicas: Running[] = [];
  return {
    mode,
    get url() {
      return current.url;
    },
    get adminUrl() {
      return current.adminUrl;
    },
    sandbox,
    logs: () => earlierLogs + current.logs(),
    get service() {
      return current.service;
    },
    async restart({ signal, between }: { signal?: NodeJS.Signals; between?: () => Promise<void> } = {}) {
      if (signal && mode !== 'process') throw new Error('restart({ signal }) needs mode: \'process\'');
      earlierLogs += current.logs();
      await current.stop(signal);
      await between?.();
      current = mode === 'in-process' ? await startInProcess(env) : await startAsProcess(env, degraded);
    },
    async replica() {
      const r = await startInProcess(env);
      replicas.push(r);
      return { url: r.url, stop: () => r.stop() };
    },
    async stop() {
      await Promise.all(replicas.splice(0).map((r) => r.stop().catch(() => undefined)));
      await current.stop();
      await sandbox.close();
    },
  };
}

interface Running {
  url: string;
  adminUrl: string;
  service?: Service;
  logs(): string;
  /** `signal`: process mode only (SIGTERM by default). */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startInProcess(env: Record<string, string>): Promise<Running> {
  const config = loadConfig({ env });
  const stream = new CapturingStream();
  const logger = createLogger({ level: config.logLevel, stream, secrets: [config.gateway.apiPin, config.gateway.apiKey, config.jwt.secret] });
  const service: Service = await buildService(config, logger);
  // The public port's timeouts as main.ts sets them: with Node's default 5 s keep-alive, a test stalled 5 s on a
  // busy box reused a socket the server was closing (hostile-input met ECONNRESET at a load average of 20).
  const api = createAppServer(service.app, API_SERVER_OPTIONS);
  answerClientErrors(api, logger);
  const admin = createAppServer(service.admin);
  const url = await listen(api);
  const adminUrl = await listen(admin);
  return {
    url,
    adminUrl,
    service,
    logs: () => stream.text(),
    async stop() {
      service.startDraining();
      api.closeAllConnections();
      admin.closeAllConnections();
      await Promise.all([new Promise((r) => api.close(r)), new Promise((r) => admin.close(r))]);
      await service.close();
    },
  };
}

async function startAsProcess(env: Record<string, string>, degraded: boolean): Promise<Running> {
  const proc: ServiceProcess = await startServiceProcess(env, degraded ? { waitFor: 'healthz' } : {});
  return {
    url: proc.url,
    adminUrl: proc.adminUrl,
    logs: () => proc.output(),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      await proc.stop(signal);
    },
  };
}
