import { context, trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { loadConfig } from '../../src/config';
import { createMemoryScheduler, limiterSettings, RateLimitExceededError } from '../../src/limiter';
import { BUDGET_WAIT_SPAN, traceBudget } from '../../src/limiter/traced';
import { CapturingStream, createLogger, silentLogger } from '../../src/observability/logger';
import { redisStatement } from '../../src/observability/span-redaction';
import { setActiveTracing, tracingRequested, type Tracing } from '../../src/observability/tracing';
import { createTracing } from '../../src/observability/tracing-sdk';

/**
 * Tracing's own parts, with the SDK and an InMemorySpanExporter (no instrumentation patching here; the
 * instrumented service is test/e2e/tracing.test.ts): when it turns on, the attribute scrubbing, the budget
 * wait span and the trace ids in log lines.
 */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
const parent = <T>(fn: (span: Span) => Promise<T>) => trace.getTracer('test').startActiveSpan('parent', async (span) => {
  try {
    return await fn(span);
  } finally {
    span.end();
  }
});
const finished = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);

beforeAll(() => {
  tracing = createTracing({ exporter, simple: true, instrument: false });
  setActiveTracing(tracing);
});
afterAll(async () => {
  setActiveTracing(undefined);
  await tracing.shutdown();
  context.disable();
  trace.disable();
});
beforeEach(() => exporter.reset());

describe('when tracing turns on', () => {
  it('when no OTEL variable (or none, or disabled) is set, then off; an endpoint or an exporter name turns it on', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(false);
    expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
  });
});

describe('span attributes', () => {
  it('when a span carries card numbers, credentials, secret values or sensitive names, then the exported span has none of them', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
    tracing.redactLiterals(['pin-987654', 'key-ABCDEF123']);
    const span = trace.getTracer('test').startSpan('hostile', {
      attributes: {
        'http.request.header.authorization': ['Bearer opaque-value'],
        'url.query': 'note=4111 1111 1111 1111&x=1',
        'url.full': `https://h/p?jwt=${jwt}`,
        'tokengate.note': 'the pin is pin-987654, the key key-ABCDEF123',
        'gateway.token': 'any value at all',
        'gateway.card_number': 4111111111111111,
        'http.route': '/v1/sales',
      },
    });
    span.recordException(new Error('declined 5555 5555 5555 4444'));
    span.setStatus({ code: 2, message: 'Authorization: Basic dXNlcjpwYXNz' });
    span.end();
    const [exported] = finished('hostile');
    const text = JSON.stringify({ attributes: exported?.attributes, events: exported?.events, status: exported?.status });
    for (const leaked of ['opaque-value', '4111 1111 1111 1111', '4111111111111111', jwt, 'pin-987654', 'key-ABCDEF123', 'any value at all', '5555 5555 5555 4444', 'dXNlcjpwYXNz']) {
      expect({ leaked, found: text.includes(leaked) }).toEqual({ leaked, found: false });
    }
    // What is not sensitive survives, so the trace stays useful.
    expect(exported?.attributes['http.route']).toBe('/v1/sales');
    expect(exported?.attributes['url.query']).toMatch(/^note=.+&x=1$/);
  });

  it('when a Redis command is traced, then its statement is the command name only (no key, no cached value)', () => {
    expect(redisStatement('evalsha')).toBe('evalsha');
    expect(redisStatement.length).toBe(1); // the arguments are never read
  });
});

describe('the budget wait span', () => {
  const config = loadConfig({ env: { NODE_ENV: 'test', GATEWAY_RATE_PER_MINUTE: '1', LIMITER_SALE_RESERVED_SLOTS: '0' } });
  const { limits, classes } = limiterSettings(config);

  it('when a call waits for its slot, then a wait span with its class is a child of the caller span and ends before the call runs', async () => {
    const budget = traceBudget(createMemoryScheduler({ endpointKey: 'v2', limits, classes, logger: silentLogger() }), tracing);
    let waitEndedBeforeCall = false;
    const parentId = await parent(async (span) => {
      await budget.run('sale', async () => {
        waitEndedBeforeCall = finished(BUDGET_WAIT_SPAN).length === 1;
        return { ok: true, status: 200, body: {}, headers: {} } as never;
      });
      return span.spanContext().spanId;
    });
    const [wait] = finished(BUDGET_WAIT_SPAN);
    expect(wait?.attributes['tokengate.budget.class']).toBe('sale');
    expect(wait?.parentSpanContext?.spanId).toBe(parentId);
    expect(wait?.status.code).toBe(0);
    expect(waitEndedBeforeCall).toBe(true);
    await budget.close();
  });

  it('when the budget refuses (no slot within the maximum wait), then the wait span ends marked as an error', async () => {
    const budget = traceBudget(createMemoryScheduler({ endpointKey: 'v2', limits, classes, logger: silentLogger() }), tracing);
    await budget.acquire('sale');
    await expect(budget.acquire('sale', { maxWaitMs: 10 })).rejects.toBeInstanceOf(RateLimitExceededError);
    expect(finished(BUDGET_WAIT_SPAN).map((s) => s.status.code)).toEqual([0, 2]);
    await budget.close();
  });

  it('when tracing is off, then the scheduler is returned as it is (nothing added to the hot path)', () => {
    const budget = createMemoryScheduler({ endpointKey: 'v2', limits, classes, logger: silentLogger() });
    expect(traceBudget(budget, undefined)).toBe(budget);
    void budget.close();
  });
});

describe('log lines', () => {
  it('when a line is written inside a span, then it carries that trace id and span id; outside, none', async () => {
    const stream = new CapturingStream();
    const logger = createLogger({ stream });
    const ids = await parent(async (span) => {
      logger.info('inside');
      return span.spanContext();
    });
    logger.info('outside');
    const [inside, outside] = stream.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(inside).toMatchObject({ message: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
    expect(outside).not.toHaveProperty('trace_id');
  });
});
