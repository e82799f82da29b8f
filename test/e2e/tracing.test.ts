import { execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { TEST_JWT_ENV, token } from '../support/bff';
import { redisUrl, uniquePrefix } from '../support/redis';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';

/**
 * Tracing (issue 14, item 5) on the built service, instrumented as in production (main.ts loads the SDK
 * before express, ioredis and undici). Spans go over OTLP/HTTP JSON to a receiver in this test; the gateway
 * is the sandbox behind a recording proxy, so the traceparent the gateway receives is checked too.
 */
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}
const SERVER = 2;
const CLIENT = 3;

const attr = (span: OtlpSpan, key: string): unknown => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? v?.intValue ?? v?.boolValue;
};
const hex = (bytes: number) => [...Array(bytes)].map(() => Math.floor(Math.random() * 256).toString(16).padStart(2, '0')).join('');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const gatewayTraceparents: string[] = [];
  let receiver: http.Server;
  let proxy: http.Server;
  let sandbox: RunningSandbox;
  let service: ServiceProcess;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        bodies.push(body);
        const doc = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
    const receiverPort = await listen(receiver);
    sandbox = await startSandbox({ port: 0, settings: { ratePerMinute: 100_000, ratePerDay: 1_000_000 } });
    // Forwards to the sandbox, keeping the traceparent each gateway call carried.
    proxy = http.createServer((req, res) => {
      if (typeof req.headers.traceparent === 'string') gatewayTraceparents.push(req.headers.traceparent);
      const upstream = http.request(`${sandbox.url}${req.url ?? '/'}`, { method: req.method, headers: { ...req.headers, host: `127.0.0.1:${sandbox.port}` } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    const proxyPort = await listen(proxy);
    service = await startServiceProcess({
      NODE_ENV: 'test',
      LOG_LEVEL: 'debug',
      REDIS_URL: redisUrl(),
      REDIS_KEY_PREFIX: uniquePrefix('trace').replace(/[^A-Za-z0-9:_-]/g, '_'),
      GATEWAY_BASE_URL: `http://127.0.0.1:${proxyPort}/api/v2/`,
      GATEWAY_RATE_PER_MINUTE: '100000',
      GATEWAY_RATE_PER_DAY: '1000000',
      LIMITER_SALE_RESERVED_SLOTS: '0',
      ...TEST_JWT_ENV,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'tokengate-test',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await sandbox?.close();
    await new Promise((r) => proxy?.close(r));
    await new Promise((r) => receiver?.close(r));
  });

  it('when a sale, a token read, a card number in a query and a bad token arrive, then their spans are exported, linked to the caller trace and scrubbed', async () => {
    const cust = sandbox.fixtures.firstCustomer().key;
    const pm = (sandbox.fixtures.paymentMethods(cust)[0] as { key: string }).key;
    const bearer = token({ sub: 'tracer', custkey: cust, scope: 'sales:create tokens:read payment_methods:read' });
    const traceId = hex(16);
    const parentId = hex(8);
    const sale = await request(service.url)
      .post('/v1/sales')
      .set('Authorization', `Bearer ${bearer}`)
      .set('Idempotency-Key', `trace-${traceId}`)
      .set('traceparent', `00-${traceId}-${parentId}-01`)
      .send({ customer: cust, payment_method: pm, amount: '3.00' });
    expect(sale.status).toBe(201);
    const read = await request(service.url).get(`/v1/customers/${cust}/payment_methods/${pm}/token`).set('Authorization', `Bearer ${bearer}`);
    expect(read.status).toBe(200);
    const cardref = read.body.cardref as string;
    expect(cardref.length).toBeGreaterThan(8);
    const pan = '4111111111111111';
    expect((await request(service.url).get(`/v1/customers/${cust}/payment_methods?note=${pan}`).set('Authorization', `Bearer ${bearer}`)).status).toBe(422);
    const badTrace = hex(16);
    expect((await request(service.url).get(`/v1/customers/${cust}/payment_methods`).set('Authorization', 'Bearer a.b.c').set('traceparent', `00-${badTrace}-${hex(8)}-01`)).status).toBe(401);

    const inTrace = () => spans.filter((s) => s.traceId === traceId);
    for (let i = 0; i < 100 && !(inTrace().some((s) => s.kind === SERVER && s.parentSpanId === parentId) && spans.some((s) => attr(s, 'url.query')?.toString().includes('note') || String(attr(s, 'http.target')).includes('note'))); i++) await sleep(100);

    // The incoming request continues the caller's trace.
    const server = inTrace().find((s) => s.kind === SERVER && s.parentSpanId === parentId);
    expect(server).toBeDefined();
    // The gateway call is a client span in that trace, and the gateway received its traceparent.
    const gatewayCall = inTrace().find((s) => s.kind === CLIENT && String(attr(s, 'url.full') ?? '').includes('/api/v2/'));
    expect(gatewayCall).toBeDefined();
    expect(gatewayTraceparents).toContain(`00-${traceId}-${gatewayCall?.spanId}-01`);
    // The wait for the budget, and Redis commands with the command name only as statement.
    expect(inTrace().filter((s) => s.name === 'tokengate.budget.wait').map((s) => attr(s, 'tokengate.budget.class'))).toContain('sale');
    // (semantic conventions 1.33+ names: db.system.name, db.query.text; older ones: db.system, db.statement)
    const redis = inTrace().filter((s) => (attr(s, 'db.system.name') ?? attr(s, 'db.system')) === 'redis');
    expect(redis.map((s) => s.name)).toEqual(expect.arrayContaining(['evalsha']));
    for (const s of redis) expect(String(attr(s, 'db.query.text') ?? attr(s, 'db.statement'))).toMatch(/^[a-z]+$/i);

    // The request with a card number in its query was traced, with the number scrubbed from its attributes.
    const queries = spans.map((s) => String(attr(s, 'url.query') ?? attr(s, 'http.target') ?? '')).filter((q) => q.includes('note='));
    expect(queries.length).toBeGreaterThan(0);
    // Nothing secret in any span: the caller's token, the PIN, the API key, the card reference, the card number.
    const exported = bodies.join('\n');
    for (const secret of [bearer, bearer.split('.')[2] as string, 'Bearer ', '123456', '_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7', cardref, pan]) {
      expect({ secret, found: exported.includes(secret) }).toEqual({ secret, found: false });
    }

    // Log lines written inside a request carry its trace id.
    const authLine = service.output().split('\n').find((l) => l.includes('"authentication failed"'));
    expect(JSON.parse(authLine ?? '{}')).toMatchObject({ trace_id: badTrace, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });
});

describe('tracing off (no OTEL_* variable)', () => {
  // prom-client 15 itself requires @opentelemetry/api (its dependency, for exemplars): a no-op facade alone.
  // What must not load is the SDK, the exporter or any instrumentation (no patching, no span, no export).
  const sdkModules = (json: string) => (JSON.parse(json) as string[]).filter((k) => !k.includes('/@opentelemetry/api/'));
  it('when the whole service graph loads, then no OpenTelemetry SDK, exporter or instrumentation is loaded', () => {
    const script = [
      "require('./dist/observability/tracing').startTracingFromEnv({});",
      "require('./dist/compose'); require('./dist/observability/logger');",
      "process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry'))));",
    ].join('');
    const loaded = execFileSync(process.execPath, ['-e', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    expect(sdkModules(loaded)).toEqual([]);
    // The same probe sees the SDK when tracing is asked for (so the check above can fail).
    const on = execFileSync(process.execPath, ['-e', script.replace('startTracingFromEnv({})', "startTracingFromEnv({ OTEL_TRACES_EXPORTER: 'console' })")], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    expect(sdkModules(on).length).toBeGreaterThan(0);
  });
});
