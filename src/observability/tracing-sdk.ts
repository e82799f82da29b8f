/**
 * The OpenTelemetry SDK, loaded only when tracing is on (tracing.ts). Packages, pinned, on the last line that
 * supports Node 20 (the 0.300/3.x line needs Node 22.15):
 * - sdk-trace-node: the provider, AsyncLocalStorage context and W3C `traceparent` propagation (register());
 * - exporter-trace-otlp-http: OTLP/HTTP (JSON), which every collector takes on :4318; it reads the standard
 *   OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout);
 * - instrumentation-http (incoming requests; the server span honours `traceparent`), -express (route names),
 *   -undici (each gateway call, injecting `traceparent`), -ioredis (commands, statement = name only).
 * Every span passes the RedactingSpanProcessor before the batch exporter.
 */
import { context, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { RedactingSpanProcessor, redisStatement } from './span-redaction';
import type { SpanHandle, Tracing } from './tracing-types';

const TRACER = 'tokengate';
// Probes and scrapes on the admin port would be most spans and say nothing.
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export interface TracingOptions {
  env?: NodeJS.ProcessEnv;
  /** Replaces the exporter chosen from the environment (tests: InMemorySpanExporter). */
  exporter?: SpanExporter;
  /** Export each span as it ends instead of in batches (tests). */
  simple?: boolean;
  /** Patch http, express, undici and ioredis (main.ts); off in unit tests, which create spans by hand. */
  instrument?: boolean;
}

function exporterFromEnv(env: NodeJS.ProcessEnv): SpanExporter {
  const kind = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',')[0]?.trim().toLowerCase();
  if (kind === 'console') return new ConsoleSpanExporter();
  return new OTLPTraceExporter();
}

export function createTracing(options: TracingOptions = {}): Tracing {
  const env = options.env ?? process.env;
  let literals: readonly string[] = [];
  const exporter = options.exporter ?? exporterFromEnv(env);
  const inner = options.simple ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const resource = resourceFromAttributes({ 'service.name': 'tokengate' }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new RedactingSpanProcessor(inner, () => literals)] });
  provider.register(); // global provider, AsyncLocalStorage context manager, W3C trace context + baggage

  if (options.instrument) {
    registerInstrumentations({
      tracerProvider: provider,
      instrumentations: [
        new HttpInstrumentation({
          ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
        }),
        // Route handlers only (they name the server span's route); a span per middleware or router would cost
        // more than it tells.
        new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
        // No header is recorded (the default); the propagator adds traceparent to the gateway call.
        new UndiciInstrumentation(),
        new IORedisInstrumentation({ dbStatementSerializer: redisStatement, requireParentSpan: true }),
      ],
    });
  }

  const tracer = provider.getTracer(TRACER);
  return {
    currentIds() {
      const span = trace.getSpan(context.active());
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    startSpan(name, attributes?: Attributes): SpanHandle {
      const span = tracer.startSpan(name, { attributes }, context.active());
      let ended = false;
      return {
        end(error?: unknown) {
          if (ended) return;
          ended = true;
          if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'error' });
          span.end();
        },
      };
    },
    redactLiterals(values) {
      literals = values.filter((v) => v.length >= 4);
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
