'use strict';
/**
 * What a refused token costs against an accepted one (issue 30, item 5): a flood of garbage tokens must not
 * be the cheapest way to load the service. One tokengate (`node dist/main.js`, production mode, the bench
 * Redis) gets, from the same load generator at the same fixed rate, request kinds in alternation:
 *   - accepted: `GET /v1/payment-config` with one valid token on every request, as a client sends its token
 *     (remembered after its first verification): the least work a valid token can cause (answered from
 *     memory), so the strictest comparison there is;
 *   - accepted_new_token: `GET /v1/payment-config` with a new valid token on every request (its own `jti`):
 *     what accepting a token costs when it is not remembered, i.e. the same work a refusal does (the header and
 *     claims decoded and checked, the signature computed) plus jsonwebtoken's verify. The judged comparison: a
 *     flood of distinct tokens is compared with acceptance of distinct tokens;
 *   - accepted_page_read: `GET /v1/customers/{c}/payment_methods` with that token, the read a frontend makes on
 *     every page;
 *   - refused, on that page route: bad_signature (the valid token's header and claims under a random
 *     signature), expired (correctly signed, `exp` two minutes ago, its own `jti`) and garbage (three random
 *     base64url segments), each a new token on every request, so no memory of refusals could make them look cheap.
 * Tokens are made before each run. Kinds alternate within each round in a rotating order, so a shared box's
 * drift hits them alike. The figure is the service process's CPU per request (schedstat, all threads): per
 * round, each refused kind over each accepted one; median of rounds and its 95 % CI (sign test, 6+ rounds).
 * `refused_over_new_token_cpu` is the dearest refused kind over the accepted new token (the judged figure),
 * `refused_over_accepted_cpu` the same over the remembered token's payment config (the least any request
 * costs: a map lookup instead of a check), `refused_over_page_read_cpu` over the page read.
 *
 *   node bench/auth.js [rounds=24] [requests per kind and round=1000] [rate/s=1000]   (`npm run build` first)
 * (autocannon ends a run on its 1 s tick, so a run shorter than a second costs a second anyway.)
 *   AUTH_ROOT=<checkout> measures another build (e.g. the commit before a change); AUTH_NODE_ARGS adds node flags.
 *
 * Standalone it starts its own Redis and sandbox and prints one JSON object; `npm run bench` runs it as a section
 * (`runAuth`) and keeps it under `auth` in latest.json.
 */
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const path = require('node:path');
const autocannon = require('autocannon');
const jwt = require('jsonwebtoken');
const { ROOT, onCpuMs, installCleanup, stopAll } = require('./lib/procs');
const { makeCredentials, mintJwt, startRedis, startSandboxProcess, startTokengate } = require('./lib/services');
const { medianCi, percentile, round } = require('./lib/stats');

const ACCEPTED = ['accepted', 'accepted_new_token', 'accepted_page_read'];
const REFUSED = ['bad_signature', 'expired', 'garbage'];

/**
 * GETs of `url`, one per token, at `rate`/s (0: as fast as answered). Tokens are made before the run: a
 * generator slower for one kind would spread its arrivals and change the service's work per wake-up.
 */
function fire(url, tokens, rate) {
  let next = 0;
  return new Promise((resolve, reject) => {
    const inst = autocannon({ url, amount: tokens.length, connections: 16, ...(rate > 0 ? { overallRate: rate } : {}), timeout: 10,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }) }] },
    (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('error', () => undefined);
  });
}

/** Per kind: the route and a maker of its tokens (the accepted token is always the same one). */
function kindsOf(creds, base, customer) {
  const claims = { sub: 'bench-auth', custkey: customer, scope: 'payment_methods:read' };
  const accepted = mintJwt(creds, claims);
  const unsigned = accepted.slice(0, accepted.lastIndexOf('.'));
  const random = (bytes) => crypto.randomBytes(bytes).toString('base64url');
  const key = crypto.createSecretKey(Buffer.from(creds.jwtSecret));
  let seq = 0;
  const read = `${base}/v1/customers/${customer}/payment_methods`;
  return {
    accepted: { url: `${base}/v1/payment-config`, make: () => accepted },
    accepted_new_token: {
      url: `${base}/v1/payment-config`,
      make: () => jwt.sign({ ...claims, jti: `bench-new-${(seq++).toString(36)}` }, key, { algorithm: 'HS256', issuer: creds.issuer, audience: creds.audience, expiresIn: 600 }),
    },
    accepted_page_read: { url: read, make: () => accepted },
    bad_signature: { url: read, make: () => `${unsigned}.${random(32)}` },
    expired: {
      url: read,
      make: () => {
        const now = Math.floor(Date.now() / 1000);
        return jwt.sign({ ...claims, jti: `bench-${(seq++).toString(36)}`, iat: now - 600, exp: now - 120 }, key, { algorithm: 'HS256', issuer: creds.issuer, audience: creds.audience });
      },
    },
    garbage: { url: read, make: () => `${random(48)}.${random(48)}.${random(48)}` },
  };
}

async function runAuth(ctx, options = {}) {
  const { creds, redis, sandbox, log } = ctx;
  const rounds = options.rounds ?? ctx.opts.authRounds ?? 24;
  const perRound = options.perRound ?? ctx.opts.authRequests ?? 1000;
  const rate = options.rate ?? ctx.opts.authRate ?? 1000;
  const customer = require('../config/sandbox-fixtures.json').customers[0].key;
  const tg = await startTokengate('tokengate-auth', creds, {
    root: options.root ?? ROOT,
    redisUrl: redis.url,
    keyPrefix: `bench-auth-${Date.now().toString(36)}`,
    gatewayBaseUrl: sandbox.baseUrl,
    extraEnv: { GATEWAY_RATE_PER_MINUTE: '1000000', GATEWAY_RATE_PER_DAY: '100000000' },
    nodeArgs: options.nodeArgs ?? [],
  });
  try {
    const kinds = kindsOf(creds, tg.url, customer);
    const all = [...ACCEPTED, ...REFUSED];
    const run = async (kind, n, r) => {
      const tokens = Array.from({ length: n }, kinds[kind].make);
      const c0 = onCpuMs(tg.proc.child.pid);
      const res = await fire(kinds[kind].url, tokens, r);
      const cpuMs = onCpuMs(tg.proc.child.pid) - c0;
      const want = ACCEPTED.includes(kind) ? '2xx' : '4xx';
      if (res.errors > 0 || res[want] !== n) throw new Error(`auth ${kind}: ${res[want]} of ${n} answered ${want}, ${res.errors} errors, ${res.non2xx} non-2xx`);
      return { cpu_ms_per_request: cpuMs / n, p50_ms: res.latency.p50, p99_ms: res.latency.p99 };
    };
    // Warm-up: the token remembered, the public key and the card list read once, every path compiled.
    for (const kind of all) await run(kind, 1000, 0);
    const per = Object.fromEntries(all.map((k) => [k, []]));
    for (let i = 0; i < rounds; i++) {
      for (let j = 0; j < all.length; j++) {
        const kind = all[(i + j) % all.length];
        per[kind].push(await run(kind, perRound, rate));
      }
    }
    const med = (xs) => percentile(xs, 50);
    const cpu = Object.fromEntries(all.map((k) => [k, round(med(per[k].map((x) => x.cpu_ms_per_request)), 4)]));
    const against = (acc) => Object.fromEntries(REFUSED.map((k) => {
      const ratios = per[k].map((x, i) => x.cpu_ms_per_request / per[acc][i].cpu_ms_per_request);
      return [k, { median: round(med(ratios), 3), ci95: medianCi(ratios)?.map((x) => round(x, 3)), per_round: ratios.map((x) => round(x, 3)) }];
    }));
    const dearest = (byKind) => REFUSED.reduce((a, b) => (byKind[b].median > byKind[a].median ? b : a));
    const overAccepted = against('accepted');
    const overNewToken = against('accepted_new_token');
    const overRead = against('accepted_page_read');
    const out = {
      routes: { accepted: 'GET /v1/payment-config', accepted_new_token: 'GET /v1/payment-config', accepted_page_read: 'GET /v1/customers/{custkey}/payment_methods', refused: 'GET /v1/customers/{custkey}/payment_methods' },
      rounds,
      requests_per_kind_and_round: perRound,
      rate_per_s: rate,
      connections: 16,
      cpu_ms_per_request: cpu,
      latency_ms: Object.fromEntries(all.map((k) => [k, { p50: med(per[k].map((x) => x.p50_ms)), p99: med(per[k].map((x) => x.p99_ms)) }])),
      refused_over_new_token_cpu: overNewToken[dearest(overNewToken)].median,
      refused_over_new_token_cpu_ci95: overNewToken[dearest(overNewToken)].ci95,
      refused_over_accepted_cpu: overAccepted[dearest(overAccepted)].median,
      refused_over_accepted_cpu_ci95: overAccepted[dearest(overAccepted)].ci95,
      refused_over_page_read_cpu: overRead[dearest(overRead)].median,
      refused_over_page_read_cpu_ci95: overRead[dearest(overRead)].ci95,
      dearest_refusal: { over_new_token: dearest(overNewToken), over_accepted: dearest(overAccepted), over_page_read: dearest(overRead) },
      by_kind: { over_new_token: overNewToken, over_accepted: overAccepted, over_page_read: overRead },
      counting: 'service process CPU (schedstat, all threads) over each measured run / requests answered; per round, refused kind / accepted kind; median of rounds; 95 % CI of the median by the sign test',
    };
    log(`auth: CPU per request ${all.map((k) => `${k} ${cpu[k]} ms`).join(', ')}; dearest refusal ${out.refused_over_new_token_cpu}x an accepted new token, ${out.refused_over_accepted_cpu}x the remembered token's payment config, ${out.refused_over_page_read_cpu}x the page read`);
    return out;
  } finally {
    await tg.proc.stop();
  }
}

async function main() {
  const [rounds, perRound, rate] = process.argv.slice(2, 5).map((x) => (x === undefined ? undefined : Number(x)));
  installCleanup();
  const creds = makeCredentials();
  const redis = await startRedis();
  const sandbox = await startSandboxProcess(creds);
  const log = (msg) => process.stderr.write(`[bench auth] ${msg}\n`);
  const root = process.env.AUTH_ROOT ? path.resolve(process.env.AUTH_ROOT) : ROOT;
  const nodeArgs = (process.env.AUTH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  let build = root;
  try {
    build = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
    if (execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: root }).length > 0) build += ' + uncommitted src';
  } catch {
    // not a git checkout: the path says which build
  }
  const out = { build, ...(await runAuth({ creds, redis, sandbox, log, opts: {} }, { rounds, perRound, rate, root, nodeArgs })) };
  out.loadavg = require('node:os').loadavg().map((x) => round(x, 2));
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  redis.client.disconnect();
  await stopAll();
  process.exit(0); // autocannon's agents keep sockets open
}

if (require.main === module) {
  main().catch(async (err) => {
    process.stderr.write(`${err.stack ?? err}\n`);
    await stopAll();
    process.exit(1);
  });
}

module.exports = { runAuth };
