'use strict';
/** bench/results/summary.md from the run's figures; every statement about a target is computed, not canned. */

const TARGETS = { ratio: 0.7, utilisation: 0.85, cpuOverNaive: 1.6, openLoopAddedP99Ms: 5, openLoopRate: 200, roundTrips: 3, refusedOverAccepted: 1 };
const NAMES = { tokengate: 'tokengate', ratelimiter_flexible: 'rate-limiter-flexible', token_bucket: 'token bucket' };
const yes = (ok) => (ok ? 'met' : '**not met**');

function renderSummary(r) {
  const o = r.overhead;
  const b = r.budget;
  const c = r.cache;
  const s = r.budget_setup;
  const m = r.machine;
  const tg = b.tokengate;
  const lines = [];
  lines.push('# tokengate benchmark summary', '');
  if (r.quick) lines.push('> **QUICK smoke run (BENCH_QUICK=1): short phases, not the reference figures.**', '');
  lines.push(
    `Run ${r.started_at} → ${r.finished_at}, wall time **${r.durations.total_s} s** (overhead ${r.durations.overhead_s} s, correctness ${r.durations.correctness_s ?? '-'} s, cache ${r.durations.cache_s} s, budget ${r.durations.budget_s} s), commit \`${m.commit}\`.`,
    `Machine: ${m.cores} cores (${m.cpu_model}), ${m.memory_gib} GiB, ${m.platform}, node ${m.node}, ${m.redis}; load average at start ${m.load_average_at_start.join(' / ')}.`,
    'Everything ran on 127.0.0.1 on this one machine: the load generator, the services, the sandbox gateway and a dedicated `redis-server` the bench started on a free port.',
    '',
    '![throughput, latency and budget](chart.svg)',
    '',
    '## Targets',
    '',
    '| target | figure | status |',
    '|---|---|---|',
    `| overhead ratio tokengate / naive ≥ ${TARGETS.ratio} | ${o.ratio} | ${yes(o.ratio >= TARGETS.ratio)} |`,
    `| tokengate upstream 429s = 0 | ${tg.upstream_429} | ${yes(tg.upstream_429 === 0)} |`,
    `| tokengate peak in any window ≤ N | ${tg.peak_in_window} ≤ ${tg.limit} | ${yes(tg.peak_in_window <= tg.limit)} |`,
    `| tokengate utilisation ≥ ${TARGETS.utilisation} (scaled windows) | ${tg.utilisation} | ${yes(tg.utilisation >= TARGETS.utilisation)} |`,
    `| cache: ${c.concurrent_misses} concurrent sales on one uncached method, 3 replicas → 1 cardref call | ${c.upstream_calls} | ${yes(c.upstream_calls === 1)} |`,
    ...targetRows15(o),
    ...(r.auth ? [
      `| a refused token costs no more CPU than an accepted one (dearest refused kind, ${r.auth.dearest_refusal.over_new_token}, over a new valid token on \`GET /v1/payment-config\`: both tokens never seen before; median of rounds) | ${r.auth.refused_over_new_token_cpu}× (95 % CI ${r.auth.refused_over_new_token_cpu_ci95?.join('–') ?? 'n/a'}); over the page read ${r.auth.refused_over_page_read_cpu}× | ${yes(r.auth.refused_over_new_token_cpu <= TARGETS.refusedOverAccepted && r.auth.refused_over_page_read_cpu <= TARGETS.refusedOverAccepted)} |`,
      `| the same over a remembered token's payment config (a map lookup, the least any request costs; reported, not a target) | ${r.auth.refused_over_accepted_cpu}× (95 % CI ${r.auth.refused_over_accepted_cpu_ci95?.join('–') ?? 'n/a'}) | — |`,
    ] : []),
    '',
    ...peerSection(r),
    ...openLoopSection(o.open_loop),
    '## 1. Overhead: the sale path',
    '',
    `autocannon in the bench process, ${o.connections} connections, ${o.rounds} interleaved round(s) of ${o.warmup_s} s warm-up + ${o.duration_s} s measured per target, sandbox latency 0 (so the CPU, not the gateway, is what every target waits for: the harshest case for a proxy that does work). Each target's figures are from its best round (highest req/s): other tenants of a shared box only slow rounds down. ` +
      `Per-round ratios: ${o.ratio_per_round.join(', ')} (median ${o.ratio_median_of_rounds}); 1-minute load average after each round (tokengate / naive / direct): ${o.detail.tokengate.runs.map((r, i) => `${r.load_average_1m} / ${o.detail.naive.runs[i].load_average_1m} / ${o.detail.direct.runs[i].load_average_1m}`).join('; ')}.`,
    '',
    '| target | req/s | p50 ms | p99 ms | non-2xx | errors |',
    '|---|---|---|---|---|---|',
    `| sandbox direct (static signed header) | ${o.direct_rps} | ${o.direct_p50_ms} | ${o.direct_p99_ms} | ${o.detail.direct.non2xx} | ${o.detail.direct.errors} |`,
    `| naive Express + http-proxy-middleware | ${o.naive_rps} | ${o.naive_p50_ms} | ${o.naive_p99_ms} | ${o.detail.naive.non2xx} | ${o.detail.naive.errors} |`,
    `| tokengate | ${o.tokengate_rps} | ${o.p50_ms} | ${o.p99_ms} | ${o.detail.tokengate.non2xx} | ${o.detail.tokengate.errors} |`,
    ...(o.peer ? [`| fair peer (bench/peer-bff.js) | ${o.peer.rps} | ${o.peer.p50_ms} | ${o.peer.p99_ms} | ${o.peer.non2xx} | ${o.peer.errors} |`] : []),
    '',
    `**ratio = tokengate / naive = ${o.ratio}** (tokengate / direct = ${Math.round((o.tokengate_rps / o.direct_rps) * 1000) / 1000}).`,
    '',
    '- tokengate: a separate process, `node dist/main.js` with `NODE_ENV=production`, `GATEWAY_ALLOW_INSECURE=true`, the bench Redis, `LOG_LEVEL=warn`, ' +
      '`GATEWAY_RATE_PER_MINUTE=1000000` and `GATEWAY_RATE_PER_DAY=100000000` (the config schema\'s maxima, so the budget never binds but every sale is still reserved in Redis). ' +
      'A separate process so the load generator never shares its event loop, and because that is how it is deployed. Each request carries a valid HS256 JWT, the sale JSON ' +
      '(`customer`, `payment_method`, `amount`) and a fresh `Idempotency-Key`; the token cache was warmed by one sale first.',
    '- naive: `bench/naive-proxy.js`, a separate process: Express + http-proxy-middleware forwarding `/v1/sales` to the sandbox\'s `/api/v2/transactions` with a static gateway `Authorization` header and nothing else. ' +
      'It (and the direct caller) send the gateway-form sale (`command`, `amount`, `UMCardRef`), since the proxy does no translation.',
    '- direct: the same gateway-form sale to the sandbox with a valid signed header (made once).',
    '- the sandbox: `node dist/sandbox/main.js`, fixed mode, limits raised to 1,000,000/min, latency 0.',
    '',
    '### Where tokengate\'s time goes',
    '',
    `| measure | tokengate | naive |`,
    '|---|---|---|',
    `| service CPU per request (ms, from /proc, median of rounds) | ${o.tokengate_cpu_ms_per_sale} | ${o.naive_cpu_ms_per_request} |`,
    `| service CPU ÷ sandbox CPU in the same round (median; steady when the box is not) | ${o.cpu_per_sandbox_cpu.tokengate} | ${o.cpu_per_sandbox_cpu.naive} |`,
    `| CPU seconds in one measured run: service / sandbox / redis / autocannon | ${fmtCpu(o.cpu_s_per_run.tokengate)} | ${fmtCpu(o.cpu_s_per_run.naive)} |`,
    `| Redis round trips per sale (read events Redis processed over 50 sequential sales) | ${o.redis_round_trips_per_sale} | 0 |`,
    `| Redis client commands per sale (MONITOR over the same 50 sales) | ${o.redis_client_commands_per_sale} | 0 |`,
    `| Redis read events per sale under load (auto-pipelining merges concurrent sales' commands) | ${o.redis_reads_per_sale_under_load} | 0 |`,
    `| Redis commands per sale, script-internal included (INFO commandstats under load) | ${o.redis_commands_per_sale} | 0 |`,
    '',
    `Client commands per sale: ${Object.entries(o.redis_round_trips_by_command).map(([k, v]) => `\`${k}\` ${v}`).join(', ') || 'none'}; their Lua scripts run ${o.redis_script_commands_per_sale} more commands inside Redis. ` +
      `Under load, \`INFO commandstats\` deltas on the bench's own redis-server (our INFO calls excluded, divided by tokengate requests) give: ${Object.entries(o.redis_commands_per_sale_by_command).map(([k, v]) => `\`${k}\` ${v}`).join(', ') || 'none'}.`,
    `jsonwebtoken's HS256 verify alone, in the bench process with nothing else of the bench running: **${o.jwt_verify_us.string_secret} µs per call with the secret passed as a string** (jsonwebtoken 9 first tries \`crypto.createPublicKey\` on a string key, which throws and is caught, on every call) against **${o.jwt_verify_us.key_object} µs with a \`crypto.createSecretKey\` KeyObject** made once, which is what tokengate does since this measurement (src/http/auth.ts).`,
    '',
    ...latencySection(o.at_gateway_latency),
    ...profileSection(o.profile),
    ...allocationSection(o.allocation),
    overheadVerdict(o, m),
    '',
    '## 2. Budget: the same burst through three schedulers',
    '',
    `Scaled windows: **N = ${s.limit_per_window} calls per ${s.window_ms} ms** (the production rule is 45 per 60 s); tokengate's margin ${s.tokengate_margin_ms} ms (it allows at most N in any span of window + margin). ` +
      `The sandbox runs in \`${s.sandbox_mode}\` mode (at most N accepted calls in ANY ${s.window_ms} ms span, all clients together) with latency ${s.sandbox_latency_ms} ms. ` +
      `Each scheduler gets its own endpoint key at the sandbox (own counters) and its own Redis key prefix; ${s.processes_per_scheduler} forked processes per scheduler share the bench Redis; each process: ${s.arrivals_per_process} (${s.total_calls} calls in all). ` +
      'Every upstream call is the same `cc:sale` through tokengate\'s gateway client; only the scheduler differs. A call answered 429 is not retried by the peers; tokengate\'s run loop re-queues a 429/155 once.',
    '',
    '| scheduler | upstream 429s | peak in any window (sandbox) | limit N | utilisation | calls answered OK | queue wait p50 / p99 ms | order violations | makespan s |',
    '|---|---|---|---|---|---|---|---|---|',
    ...Object.keys(NAMES).map((k) => `| ${NAMES[k]} | ${b[k].upstream_429} | ${b[k].peak_in_window} | ${b[k].limit} | ${b[k].utilisation} | ${b[k].calls_answered_ok} / ${b[k].calls} | ${b[k].queue_wait_p50_ms} / ${b[k].queue_wait_p99_ms} | ${b[k].order_violations} | ${Math.round(b[k].makespan_ms / 100) / 10} |`),
    '',
    '- **tokengate**: `createRedisScheduler` from `dist/limiter` exactly as `compose.ts` builds it (sales class, `saleReservedSlots` 0, max wait 120 s), limits N per W + margin.',
    `- **rate-limiter-flexible**: as its README and wiki suggest for "N per minute" across servers: \`new RateLimiterRedis({ storeClient: ioredis, keyPrefix, points: ${s.limit_per_window}, duration: ${s.window_ms / 1000} })\` shared by the 3 processes, wrapped in \`new RateLimiterQueue(limiter, { maxQueueSize: 10000 })\`; each call awaits \`removeTokens(1)\`. Its window is fixed, starting at the first consume and expiring after \`duration\`; the queue is per process.`,
    `- **token bucket**: a Redis hash updated by one Lua script (\`bench/lib/token-bucket.js\`): capacity ${s.limit_per_window}, refilling continuously at ${s.limit_per_window} per ${s.window_ms} ms, Redis \`TIME\`; each process serves its callers FIFO, the head sleeping until the next token is due.`,
    '',
    'Definitions: *peak in any window* is the sandbox\'s `maxInWindow` (most accepted calls in any span of the window, measured at the gateway side); *upstream 429s* is the sandbox\'s `rateLimited`. ' +
      `*Utilisation* = calls answered OK ÷ what "N per any window" allows between the first and last such start, N × (1 + span / W) (\`utilisation()\` in \`src/limiter/measure.ts\`); a perfect scheduler of N per W (no margin) scores about 1, and tokengate's margin caps it near W / (W + margin) = ${Math.round((s.window_ms / (s.window_ms + s.tokengate_margin_ms)) * 100) / 100} over long spans. ` +
      `*Queue wait* = start − arrival in the caller's process. *Order violations* = calls overtaken by a call that arrived more than ${s.order_tolerance_ms} ms later and started more than ${s.order_tolerance_ms} ms earlier (\`orderViolations()\`), across all 3 processes.`,
    '',
    budgetVerdict(b, s),
    '',
    '## 3. Cache: concurrent misses from 3 replicas',
    '',
    `${c.concurrent_misses} sales at once on one payment method no replica had cached (fresh Redis key prefix), spread round-robin over 3 \`node dist/main.js\` replicas on one Redis: ` +
      `**${c.upstream_calls} cardref call(s)** reached the sandbox (${c.upstream_calls_from_metrics} by the replicas' \`tokengate_upstream_calls_total{operation="cardref"}\`). ` +
      `The sandbox keeps no per-route count, so the figure is its accepted calls (${c.sandbox_accepted_calls}) minus its sale calls (${c.sandbox_sale_calls}). Answers: ${Object.entries(c.answers).map(([k, v]) => `${v} × ${k}`).join(', ')}; all ${c.concurrent_misses} answered in ${c.wall_ms} ms.`,
    '',
    ...authSection(r.auth),
    ...journeySection(r.journey),
    ...fairnessSection(r.fairness),
    '## Reproduce',
    '',
    `\`npm run bench\` (builds, then \`node bench/run.js\`; needs \`redis-server\` on PATH; this run took ${Math.round(r.durations.total_s / 6) / 10} minutes on ${m.cores} cores). \`BENCH_QUICK=1 npm run bench\` is a short smoke run. Raw figures: [latest.json](latest.json).`,
    '',
  );
  return lines.join('\n');
}

function fairnessSection(f) {
  if (!f) return [];
  const row = (name, x) => `| ${name} | ${x.others_read_p50_ms} / **${x.others_read_p99_ms}** | ${x.others_read_refused} of ${x.others_reads} | ${x.others_sale_p99_ms} | ${x.others_sale_refused} of ${x.others_sales} | ${x.looper_requests ? fmtCounts(x.looper_answers) : '-'} | ${x.gateway_calls} |`;
  return [
    '## 6. One caller looping beside everyone else (issue 30, guarantee 11)',
    '',
    `Budget ${f.budget}; one production replica; the sandbox answers in 20 ms. ${f.shoppers} shoppers, each in a loop: read their cards with the gateway's word (\`Cache-Control: no-cache\`: a read that needs the budget) and pay. ` +
      `The looper: an internal token on ${f.looping_connections} connections asking for unknown sale keys for ${f.loop_s} s. "Without the share" sets \`LIMITER_CALLER_SHARE=1\` and \`LIMITER_CALLER_DAY_SHARE=1\`.`,
    '',
    '| | others\' reads p50 / p99 ms | others\' reads refused | others\' sales p99 ms | others\' sales refused | looper\'s answers | gateway calls |',
    '|---|---|---|---|---|---|---|',
    row('no looper', f.baseline),
    row('looper, with the per-caller share', f.with_share),
    row('looper, without it', f.without_share),
    '',
  ];
}

/** Issue 25's goals for the merchant's journey (calls per checkout, pages served from the view). */
const JOURNEY_GOALS = { callsPerCheckout: 1.4, checkoutsPerDay: 4300, pageP50Ms: 20, confirmationP50Ms: 20 };

function journeySection(j) {
  if (!j) return [];
  const w = j.without_view;
  const extra = (x) => Object.entries(x.rest_of_the_day).map(([k, v]) => `${k.replace(/_/g, ' ')}: ${v.gateway_calls} calls for ${v.operations}`).join('; ');
  return [
    '## 5. The merchant\'s journey: what the budget buys (issue 25)',
    '',
    `${j.shoppers} returning shoppers × ${j.visits_per_shopper} visits (open the checkout page = list their cards, pay with a stored card, read the sale on the confirmation page), ` +
      `two production replicas (visits alternate between them), the sandbox answering in ${j.gateway_latency_ms} ms; then the same shoppers come back for ${j.visits_per_shopper} more visits (steady state). ` +
      '"Without the view" is the same build with every page read sent with `Cache-Control: no-cache` (the gateway\'s word each time: what tokengate did before). Gateway calls are the sandbox\'s accepted calls.',
    '',
    '| | with the view | without | goal |',
    '|---|---|---|---|',
    `| gateway calls per checkout (first ${j.visits_per_shopper} visits) | **${j.calls_per_checkout}** (${j.gateway_calls} for ${j.checkouts}) | ${w.calls_per_checkout} (${w.gateway_calls} for ${w.checkouts}) | ≤ ${JOURNEY_GOALS.callsPerCheckout} ${yes(j.calls_per_checkout <= JOURNEY_GOALS.callsPerCheckout)} |`,
    `| checkouts per minute at 45 calls/min | ${j.checkouts_per_minute_at_45} | ${w.checkouts_per_minute_at_45} | |`,
    `| steady state: calls per checkout, checkouts a day at 5,000 | ${j.steady_state.calls_per_checkout}, **${j.steady_state.checkouts_per_day_at_5000}** | ${w.steady_state.calls_per_checkout}, ${w.steady_state.checkouts_per_day_at_5000} | ≥ ${JOURNEY_GOALS.checkoutsPerDay} ${yes(j.steady_state.checkouts_per_day_at_5000 >= JOURNEY_GOALS.checkoutsPerDay)} |`,
    `| warm checkout page load p50 / p95 ms | **${j.page_p50_ms}** / ${j.page_p95_ms} | ${w.page_p50_ms} / ${w.page_p95_ms} | < ${JOURNEY_GOALS.pageP50Ms} ${yes(j.page_p50_ms < JOURNEY_GOALS.pageP50Ms)} |`,
    `| confirmation page p50 / p95 ms | **${j.confirmation_p50_ms}** / ${j.confirmation_p95_ms} | ${w.confirmation_p50_ms} / ${w.confirmation_p95_ms} | < ${JOURNEY_GOALS.confirmationP50Ms} ${yes(j.confirmation_p50_ms < JOURNEY_GOALS.confirmationP50Ms)} |`,
    '',
    `The rest of the day, with the view: ${extra(j)}. Without: ${extra(w)}. Answers: ${fmtCounts(j.answers)}.`,
    '',
    ...(j.settlement ? [
      `The settlement of the day (issue 39): a batch of ${j.settlement.batch_lines} lines closed and read by a replica's look (webhooks off): ${j.settlement.gateway_calls} gateway calls from the close to the settlement kept (${Object.entries(j.settlement.by_call).map(([k, v]) => `${k} ${v}`).join(', ')}), ${j.settlement.read_calls} of them the read; with the day's ${24} hourly looks, **${j.settlement.calls_per_day_at_1000_sales} calls a day at 1,000 sales, ${j.settlement.share_of_day_budget_pct} % of a 5,000 day** (goal ≤ 1 % ${yes(j.settlement.share_of_day_budget_pct <= 1)}).`,
      '',
    ] : []),
  ];
}

function authSection(a) {
  if (!a) return [];
  const kinds = Object.keys(a.cpu_ms_per_request);
  const cell = (x) => (x ? `${x.median}× (${x.ci95?.join('–') ?? 'n/a'})` : '1');
  return [
    '## 4. Refused tokens: what a flood of them costs',
    '',
    `\`bench/auth.js\`: one tokengate, ${a.rate_per_s} requests/s from the same generator for every kind, ${a.rounds} rounds of ${a.requests_per_kind_and_round} requests per kind, kinds alternating in a rotating order. Accepted: a new valid token on every request on \`${a.routes.accepted_new_token}\` (never seen before, like every refused one: the same check plus jsonwebtoken's verify; the judged comparison), and one valid token on every request (remembered after its first verification, as a client's is), on \`${a.routes.accepted}\` (answered from memory: the least any request causes) and on \`${a.routes.accepted_page_read}\`. Refused, on the page route, a new token on every request (no memory of refusals could help): a valid header and claims under a random signature, a correctly signed token expired two minutes ago, three random segments. CPU of the service process (schedstat), refused over accepted per round, median of rounds and its 95 % CI.`,
    '',
    '| kind | CPU ms per request | over an accepted new token | over the remembered token\'s payment config | over the accepted page read |',
    '|---|---|---|---|---|',
    ...kinds.map((k) => {
      const over = (base, by) => (k === base ? '1' : a.by_kind[by]?.[k] ? cell(a.by_kind[by][k]) : '–');
      return `| ${k} | ${a.cpu_ms_per_request[k]} | ${over('accepted_new_token', 'over_new_token')} | ${over('accepted', 'over_accepted')} | ${over('accepted_page_read', 'over_page_read')} |`;
    }),
    '',
    'A refusal builds no Error and formats no log line (src/http/auth.ts); what it still does that a remembered valid token does not is the check itself: the header and claims decoded, and for a wrong signature one HMAC.',
    '',
  ];
}

/**
 * Sequential round trips on a sale's path: Redis's read events over 50 sequential sales, less the bench's own
 * INFO call and each batched ZREM of finished writes (a timer's, every 100 ms, on no sale's path).
 */
function sequentialTrips(o) {
  const own = o.redis_round_trips_by_command?.info ?? 0;
  const flushes = o.redis_batched_flushes_per_sale ?? 0;
  return { trips: Math.round((o.redis_round_trips_per_sale - own - flushes) * 100) / 100, own, flushes };
}

/** Issue 15's targets: CPU per sale against the passthrough, open-loop p99 added at 200/s, round trips. */
function targetRows15(o) {
  const rows = [];
  const cpu = o.cpu_per_sandbox_cpu?.tokengate_over_naive;
  // Both ways: the sandbox's CPU per request is lower in the passthrough's faster rounds (more answers per
  // wake-up), so normalising by it moves with the box (2.56x and 1.83x for the same code on two boxes, whose
  // raw ratios were both 2.1x). Met only when every way of measuring it is.
  const raw = o.naive_cpu_ms_per_request > 0 ? Math.round((o.tokengate_cpu_ms_per_sale / o.naive_cpu_ms_per_request) * 1000) / 1000 : NaN;
  // And at the same arrival rate (open loop, 200/s): neither service gets the saturated run's batching.
  const at = (o.open_loop ?? []).find((x) => x.rate === TARGETS.openLoopRate);
  const atRate = at?.cpu_tokengate_over_naive;
  if (cpu !== undefined) {
    // Judged as issue 15 measured it (its 0.77 vs 0.35 ms were the saturated overhead run's): both ways there.
    const met = cpu <= TARGETS.cpuOverNaive && raw <= TARGETS.cpuOverNaive;
    rows.push(`| CPU per sale ≤ ${TARGETS.cpuOverNaive}× the passthrough's (saturated, as the issue measured it: normalised by the sandbox's CPU, and raw) | ${cpu}×; raw ${raw}× | ${yes(met)} |`);
  }
  // Reported beside it, not judged: at a fixed rate each wake-up is paid in full, and a guaranteed sale has two
  // more (the Redis claim and completion) than a passthrough's request (see the open-loop section).
  if (atRate !== undefined) rows.push(`| CPU per sale at ${TARGETS.openLoopRate} sales/s open loop, against the passthrough's (reported, not a target) | ${atRate}× | — |`);
  if (at) {
    const failed = (at.tokengate.failed ?? 0) + (at.naive.failed ?? 0);
    rows.push(`| open loop at ${TARGETS.openLoopRate} sales/s, 50 ms gateway: p99 added ≤ ${TARGETS.openLoopAddedP99Ms} ms, every sale answered 2xx | ${at.added_p99_ms} ms; ${failed} failed | ${yes(at.added_p99_ms <= TARGETS.openLoopAddedP99Ms && failed === 0)} |`);
  }
  if (o.redis_round_trips_per_sale !== undefined) {
    const { trips, own, flushes } = sequentialTrips(o);
    rows.push(`| ≤ ${TARGETS.roundTrips} sequential Redis round trips per cached-token sale | ${trips} (${o.redis_round_trips_per_sale} read events, less the bench's own INFO ${own} and the batched removal of finished writes ${flushes}) | ${yes(trips <= TARGETS.roundTrips)} |`);
  }
  return rows;
}

/** tokengate against the BFF a team would assemble from popular middleware: speed and correctness, one run. */
function peerSection(r) {
  const o = r.overhead;
  const k = r.correctness;
  if (!o.peer || !k) return [];
  const t = k.tokengate;
  const p = k.peer;
  const st = k.setup;
  return [
    '## The fair peer: what building it yourself costs',
    '',
    '`bench/peer-bff.js`: express + `express-jwt` + `express-idempotency` with its Redis adapter + `rate-limiter-flexible` (`RateLimiterRedis` + `RateLimiterQueue`) + ioredis for the cardref cache + the same signed undici gateway call. Speed from the same interleaved rounds as tokengate; correctness from `bench/correctness.js` against the same sandbox.',
    '',
    '| | tokengate | fair peer |',
    '|---|---|---|',
    `| req/s (best round, sandbox latency 0) | ${o.tokengate_rps} | ${o.peer.rps} |`,
    `| CPU ms per sale (service process) | ${o.tokengate_cpu_ms_per_sale} | ${o.peer.cpu_ms_per_sale} |`,
    `| CPU ÷ sandbox CPU (median of rounds) | ${o.cpu_per_sandbox_cpu.tokengate} | ${o.cpu_per_sandbox_cpu.peer} |`,
    `| p50 / p99 ms | ${o.p50_ms} / ${o.p99_ms} | ${o.peer.p50_ms} / ${o.peer.p99_ms} |`,
    `| double charges: ${st.sales_with_lost_answers} sales whose answer is lost after the gateway charged (BFF timeout ${st.gateway_timeout_ms} ms), each retried once with its key | **${t.double_charges}** (first answers ${fmtCounts(t.first_answers)}; retries ${fmtCounts(t.retry_answers)}) | **${p.double_charges}** (first ${fmtCounts(p.first_answers)}; retries ${fmtCounts(p.retry_answers)}) |`,
    `| upstream 429s: a burst of ${st.burst} sales, gateway and BFF both at ${st.limit_per_window} per ${st.window_ms} ms (sandbox ${st.sandbox_mode}) | **${t.upstream_429}** (answers ${fmtCounts(t.burst_answers)}) | **${p.upstream_429}** (answers ${fmtCounts(p.burst_answers)}) |`,
    `| a card number as the invoice | ${t.card_data_accepted ? '**accepted**' : 'refused'} (${t.card_invoice_status}) | ${p.card_data_accepted ? '**accepted**' : 'refused'} (${p.card_invoice_status}) |`,
    '',
    `Why the peer charges twice: its idempotency middleware stores an answer only when the route produces one; on a timeout the route reports the error (as the middleware's README says to), the key is freed, and the retry is a new sale. ${p.upstream_429 > 0 ? 'Why it draws 429s: `RateLimiterRedis` counts a fixed window that starts at the first call, so a window\'s last calls and the next window\'s first ones land inside one sliding span of the gateway. ' : `In this run's single-process burst it drew no 429; the same limiter across 3 processes (section 2) drew ${r.budget?.ratelimiter_flexible?.upstream_429 ?? '?'}, as its fixed window lets a window's last calls and the next one's first land inside one sliding span of the gateway. `}It accepts card data because nothing in it looks.`,
    '',
  ];
}

function fmtCounts(m) {
  return Object.entries(m ?? {}).map(([k, v]) => `${v}× ${k === '0' ? 'no answer' : k}`).join(', ');
}

/** Failed requests of a rate's kept runs, by status or error code: a latency over failures means less. */
function failedCell(x) {
  const part = (name, r) => (r.failed > 0 ? `${name} ${r.failed} failed (${Object.entries(r.failures ?? {}).map(([k, v]) => `${v}× ${k}`).join(', ')})` : '');
  const parts = [part('tokengate', x.tokengate), part('passthrough', x.naive)].filter(Boolean);
  return parts.length > 0 ? `; ${parts.join('; ')}` : '';
}

function openLoopSection(rows) {
  if (!rows || rows.length === 0) return [];
  return [
    '## Open loop: latency added at fixed rates',
    '',
    'Sales arrive at a fixed rate whatever the answers do (`bench/open-loop.js`, in a fresh process of its own for each run: each latency is measured from the time the request was due, so a stall cannot hide by lowering the rate), the sandbox answering after 50 ms; tokengate and the passthrough alternate twice at each rate (runs of ' + (rows[0].duration_s ?? '?') + ' s after a second of warm-up) and each keeps its better run. The last column is how long each process of tokengate\'s run sat runnable without a free core (Linux schedstat, ms per second): on this shared 2-core box that is latency no code change in tokengate removes.',
    '',
    '| rate /s | tokengate p50 / p99 / p99.9 ms | passthrough p50 / p99 / p99.9 ms | added p50 / p99 / p99.9 ms | achieved req/s (tokengate / passthrough) | CPU ms per sale, tokengate / passthrough (×) | waiting for a core, ms/s: tokengate / Redis / sandbox / generator |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((x) => {
      const w = x.tokengate.waiting_for_cpu_ms_per_s ?? {};
      const cpu = x.cpu_ms_per_sale ? `${x.cpu_ms_per_sale.tokengate} / ${x.cpu_ms_per_sale.naive} (${x.cpu_tokengate_over_naive}×)` : 'n/a';
      return `| ${x.rate} | ${x.tokengate.p50_ms} / ${x.tokengate.p99_ms} / ${x.tokengate.p99_9_ms} | ${x.naive.p50_ms} / ${x.naive.p99_ms} / ${x.naive.p99_9_ms} | **${x.added_p50_ms} / ${x.added_p99_ms}** / ${x.added_p99_9_ms} | ${x.tokengate.achieved_rps} / ${x.naive.achieved_rps}${failedCell(x)} | ${cpu} | ${w.service} / ${w.redis} / ${w.sandbox} / ${w.generator} |`;
    }),
    '',
    'CPU per sale here is each service\'s CPU time over the measured run per sale answered (mean of its two runs), at the same arrival rate for both: it does not benefit the faster service the way a saturated run does (more requests per event-loop wake-up). At low rates every wake-up is paid in full: counted with `strace -c` at 200 sales/s from this generator, a tokengate sale makes 4.6 event-loop wake-ups, 4 socket writes and 4 reads, the passthrough 3.3, 2 and 2 per request (the difference is the two Redis round trips that claim the key before the gateway call and complete it before the answer).',
    '',
  ];
}

function latencySection(l) {
  if (!l) return [];
  return [
    `### At a gateway that answers in ${l.latency_ms} ms`,
    '',
    `Real card gateways take hundreds of milliseconds per sale; this is the same setup with the sandbox answering after ${l.latency_ms} ms, one round per target. It says what a caller sees when the gateway, not the CPU, is the wait; it is not the ratio the target is judged on.`,
    '',
    '| target | req/s | p50 ms | p99 ms | non-2xx |',
    '|---|---|---|---|---|',
    `| naive | ${l.naive.rps} | ${l.naive.p50_ms} | ${l.naive.p99_ms} | ${l.naive.non2xx} |`,
    `| tokengate | ${l.tokengate.rps} | ${l.tokengate.p50_ms} | ${l.tokengate.p99_ms} | ${l.tokengate.non2xx} |`,
    '',
    `tokengate / naive = ${l.ratio}; tokengate adds ${l.added_p50_ms} ms at p50 and ${l.added_p99_ms} ms at p99.`,
    '',
  ];
}

function allocationSection(a) {
  if (!a || a.error) return [a?.error ? `(allocation profile: ${a.error})` : '', ''];
  const list = (rows) => rows.map((r) => `\`${r.area ?? r.fn}\` ${r.bytes_per_sale}`).join(', ');
  return [
    `Allocations (${a.note}): **${a.bytes_per_sale} bytes per sale**, nearly all of it garbage the collector then reclaims.`,
    '',
    `By area, bytes per sale: ${list(a.by_area.slice(0, 8))}.`,
    '',
    `By the nearest tokengate function on the allocating stack (what our code caused, library allocations included), bytes per sale: ${list(a.by_tokengate_function.slice(0, 10))}.`,
    '',
  ];
}

function profileSection(p) {
  if (!p || p.error) return [p?.error ? `(profile: ${p.error})` : '', ''];
  return [
    `CPU profile of tokengate (${p.note}; ${p.busy_ms} ms busy):`,
    '',
    '| area | self ms | % |',
    '|---|---|---|',
    ...p.by_area.slice(0, 12).map((a) => `| ${a.area} | ${a.ms} | ${a.pct} |`),
    '',
    'Top functions by self time: ' + p.top_functions.slice(0, 8).map((f) => `\`${f.fn}\` ${f.pct}%`).join(', ') + '.',
    '',
    'Hottest stacks (self time, function <- its callers):',
    '',
    ...(p.top_stacks ?? []).slice(0, 5).map((t) => `- ${t.pct}%: \`${t.stack}\``),
    '',
  ];
}

function fmtCpu(c) {
  return [c.service ?? '–', c.sandbox, c.redis, c.bench_autocannon].join(' / ');
}

function overheadVerdict(o, m) {
  const out = [];
  if (o.ratio >= TARGETS.ratio) out.push(`**The ratio target is met** (${o.ratio} ≥ ${TARGETS.ratio}).`);
  else out.push(`**We fall short of the ratio target**: ${o.ratio} < ${TARGETS.ratio}.`);
  const cpuRatio = o.naive_cpu_ms_per_request > 0 ? Math.round((o.tokengate_cpu_ms_per_sale / o.naive_cpu_ms_per_request) * 10) / 10 : NaN;
  out.push(
    `tokengate spends ${o.tokengate_cpu_ms_per_sale} ms of CPU per sale against the naive proxy's ${o.naive_cpu_ms_per_request} ms per request (×${cpuRatio}; ×${Math.round((o.cpu_per_sandbox_cpu.tokengate / o.cpu_per_sandbox_cpu.naive) * 10) / 10} normalised by the sandbox's CPU in the same rounds), and makes ${sequentialTrips(o).trips} sequential Redis round trips per sale (${o.redis_client_commands_per_sale} commands, ${o.redis_commands_per_sale} counting those inside scripts) that the proxy does not. ` +
      `A single Node process serves each target, so tokengate's ceiling is one core divided by its CPU per sale, about ${Math.round(1000 / o.tokengate_cpu_ms_per_sale)} sales/s here, while the passthrough's ceiling is the whole box: its own CPU plus the sandbox's and the load generator's per request, over both cores. ` +
      `On this ${m.cores}-core box the service, the sandbox, Redis and autocannon all compete for the same cores (see the CPU seconds row), so throughput is bounded by total CPU per request across all four processes, not by any one's latency: ` +
      'each extra millisecond of CPU in tokengate, or in Redis serving it, is a millisecond the sandbox and the load generator do not get.',
  );
  return out.join(' ');
}

function budgetVerdict(b, s) {
  const tg = b.tokengate;
  const out = [];
  out.push(tg.upstream_429 === 0 && tg.peak_in_window <= tg.limit
    ? `tokengate sent the gateway at most ${tg.peak_in_window} calls in any ${s.window_ms} ms span (limit ${tg.limit}) and drew **0** 429s.`
    : `**tokengate broke the budget in this run**: ${tg.upstream_429} upstream 429(s), peak ${tg.peak_in_window} for a limit of ${tg.limit}.`);
  for (const k of ['ratelimiter_flexible', 'token_bucket']) {
    const p = b[k];
    out.push(p.upstream_429 > 0
      ? `${NAMES[k]} sent more than N into one span of W: the sandbox accepted at most ${p.peak_in_window} and answered **${p.upstream_429}** calls 429 (${p.calls - p.calls_answered_ok} of ${p.calls} calls failed), because its window lets up to 2N start within one span of W.`
      : `${NAMES[k]} drew no 429 in this run (peak ${p.peak_in_window}).`);
  }
  out.push(tg.utilisation >= TARGETS.utilisation
    ? `tokengate's utilisation ${tg.utilisation} meets the ${TARGETS.utilisation} target at these scaled windows.`
    : `tokengate's utilisation ${tg.utilisation} falls short of ${TARGETS.utilisation}: its margin (${s.tokengate_margin_ms} ms on ${s.window_ms} ms) alone caps it near ${Math.round((s.window_ms / (s.window_ms + s.tokengate_margin_ms)) * 100) / 100}, and late wakes on a loaded box re-reserve slots that then stay unused.`);
  out.push('The peers\' utilisation counts only calls answered OK: their refused calls failed, and a real gateway may punish repeated 429s (the trap of issue 4). tokengate\'s longer queue waits and makespan are the price of its margin and of serving every call instead of losing some.');
  return out.join(' ');
}

module.exports = { renderSummary };
