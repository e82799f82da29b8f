/**
 * OpenTelemetry tracing, OFF unless the standard environment asks for it: `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set, or `OTEL_TRACES_EXPORTER` set to something other than `none`
 * (and `OTEL_SDK_DISABLED` not `true`). When off, nothing from @opentelemetry is loaded: this file imports
 * types only, and the SDK (tracing-sdk.ts) is required lazily. main.ts calls startTracingFromEnv() before it
 * imports anything else, because the instrumentations patch express, ioredis and http when those load.
 *
 * The active tracing is process state on purpose: OpenTelemetry's provider, context manager and patches are
 * process-wide, so a second instance could not differ from the first.
 */
import type { Tracing } from './tracing-types';

export type { SpanHandle, TraceIds, Tracing } from './tracing-types';

let active: Tracing | undefined;

export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return !!(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Starts tracing (provider, exporter, instrumentations) when the environment asks for it; else does nothing. */
export function startTracingFromEnv(env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (active || !tracingRequested(env)) return active;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on: zero cost when off
  const sdk = require('./tracing-sdk') as typeof import('./tracing-sdk');
  active = sdk.createTracing({ env, instrument: true });
  return active;
}

/** The running tracing, if any (the logger reads trace ids through it; compose wraps the budget with it). */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** For tests that build a Tracing with an in-memory exporter; returns the previous one. */
export function setActiveTracing(tracing: Tracing | undefined): Tracing | undefined {
  const previous = active;
  active = tracing;
  return previous;
}
