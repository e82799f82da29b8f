// First, before express, ioredis or undici load: the instrumentations patch them as they are required.
// With no OTEL_* variable set this loads nothing from OpenTelemetry (src/observability/tracing.ts).
import { startTracingFromEnv } from './observability/tracing';
const tracing = startTracingFromEnv();
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { devBanner } from './cli/dev-banner';
import { buildService, type Service } from './compose';
import { ConfigError, configWarnings, loadConfig } from './config';
import { Secret } from './config/secret';
import type { Config } from './config/types';
import { answerClientErrors, API_SERVER_OPTIONS, createAppServer } from './http';
import { createLogger, type Logger } from './observability/logger';

/**
 * Composition root: config → logger → service (Redis, gateway, stores, apps) → servers → signals.
 * Shutdown (SIGTERM/SIGINT): /readyz turns 503 at once; the public server stops accepting and closes idle
 * keep-alive connections; calls still queued for the budget after `SHUTDOWN_GRACE_MS` are answered 503 with
 * Retry-After; in-flight requests (sales included) may finish up to the gateway timeout; then Redis closes
 * and the process exits 0. Kubernetes' preStop pause covers endpoint propagation before SIGTERM.
 */
function listen(server: http.Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve(`http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${bound}`);
    });
  });
}

/**
 * Listens, or ends the process with one line naming the setting: a taken port is a configuration problem
 * (like a bad value), not a crash to log with its stack.
 */
async function listenOrExit(server: http.Server, host: string, port: number, setting: 'PORT' | 'ADMIN_PORT'): Promise<string> {
  try {
    return await listen(server, host, port);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? 'is already in use' : code === 'EACCES' ? 'needs privileges this process lacks' : code === 'EADDRNOTAVAIL' ? `is not available on HOST ${host}` : `cannot be listened on (${code ?? 'unknown error'})`;
    process.stderr.write(`tokengate: ${setting} ${port} ${reason}\n`);
    process.exit(1);
  }
}

function closeServer(server: http.Server, deadlineMs: number): Promise<void> {
  return new Promise((resolve) => {
    // server.close() drops only the connections idle at that moment: a keep-alive connection whose request
    // was in flight turns idle later and would hold the close until keepAliveTimeout (65 s), so sweep again.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    const done = () => {
      clearInterval(sweep);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      server.closeAllConnections();
      done();
    }, deadlineMs);
    server.close(done);
    server.closeIdleConnections();
  });
}

async function shutdown(service: Service, servers: { api: http.Server; admin: http.Server }, config: Config, logger: Logger, signal: string): Promise<void> {
  logger.info('shutting down', { signal });
  service.startDraining();
  const apiClosed = closeServer(servers.api, config.gateway.timeoutMs + config.http.shutdownGraceMs);
  const queueTimer = setTimeout(() => {
    service.stopQueue().catch((err: unknown) => logger.warn('stopping the budget queue failed', { err }));
  }, config.http.shutdownGraceMs);
  await apiClosed;
  clearTimeout(queueTimer);
  await service.close();
  await closeServer(servers.admin, 1000);
  logger.info('stopped');
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) process.stderr.write(`tokengate: config: ${problem}\n`);
      process.exit(1);
    }
    throw err;
  }
  // Each events secret on its own too (several rotate): the logger redacts every literal value.
  const eventSecrets = (config.events.webhookSecret?.reveal().split(/\s+/) ?? []).map((s) => new Secret(s));
  const secrets = [config.gateway.apiPin, config.gateway.apiKey, config.jwt.secret, config.redis.url, config.redis.password, config.sandbox.apiPin, config.gateway.webhookSecret, config.events.webhookSecret, ...eventSecrets];
  const logger = createLogger({ level: config.logLevel, secrets, defaultMeta: { service: 'tokengate' } });
  tracing?.redactLiterals(secrets.flatMap((s) => (s ? [s.reveal()] : [])));
  for (const warning of configWarnings(config)) logger.warn(`config: ${warning}`);
  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { err });
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    logger.error('unhandled rejection', { err });
    process.exit(1);
  });

  const service = await buildService(config, logger);
  const api = createAppServer(service.app, API_SERVER_OPTIONS);
  answerClientErrors(api, logger);
  const admin = createAppServer(service.admin);
  const url = await listenOrExit(api, config.host, config.port, 'PORT');
  const adminUrl = await listenOrExit(admin, config.host, config.adminPort, 'ADMIN_PORT');
  const webhookReceiver = service.listeningAt(url);
  logger.info('listening', { url, adminUrl, env: config.env, gateway: service.sandbox ? 'embedded sandbox' : 'configured' });
  if (config.env === 'development') process.stdout.write(devBanner(config, url, adminUrl, service.sandbox, webhookReceiver) + '\n');

  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      shutdown(service, { api, admin }, config, logger, signal)
        // Spans still batched go out before exit (bounded by the exporter's own timeout).
        .then(() => tracing?.shutdown().catch(() => undefined))
        .then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error('shutdown failed', { err });
            process.exit(1);
          },
        );
    });
  }
}

void main();
