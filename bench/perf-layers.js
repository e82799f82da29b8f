'use strict';
/**
 * Where an on-CPU profile's samples go by layer of the sale path (issue 40, item 1): each sample of `perf script`
 * (from bench/perf-sale.js's perf.data) goes to the innermost frame on its stack that belongs to one of the layers
 * below (first match per frame), so a middleware's share is its own work, not that of the middleware it calls
 * next. Samples with no such frame are the runtime's (GC, microtasks) or the kernel's.
 *
 *   node bench/perf-layers.js <perf.data>        (runs `perf script`; or pass a saved `perf script` text with --text)
 */
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

const LAYERS = [
  ['card scan (pan.js)', /dist\/card\/pan\.js/], ['bank scan', /dist\/bank\//],
  ['helmet', /node_modules\/helmet\//], ['requestId middleware', /dist\/http\/request-id\.js/], ['logger', /winston|logform|dist\/observability\/logger/],
  ['metrics middleware (app.js, prom-client)', /dist\/app\.js|prom-client/], ['cors', /dist\/http\/cors\.js|node_modules\/vary/],
  ['body-parser, raw-body', /body-parser|raw-body|type-is|media-typer|content-type\/|iconv/], ['jsonBody (ours: gate, verify, key checks)', /dist\/http\/json-body\.js/],
  ['cardGuard', /dist\/http\/card-guard\.js|observability\/redact/],
  ['auth (ours)', /dist\/http\/(auth|verified-tokens|token-checks|token-signature)\.js/], ['jsonwebtoken', /jsonwebtoken|jws|jwa/],
  ['validation', /dist\/http\/validation\.js|ajv/], ['fingerprint', /idempotency\/fingerprint/], ['render, send', /dist\/http\/(send|render-sale)\.js|sales\/sale-object/],
  ['idempotency store', /dist\/idempotency\//], ['write protocol', /dist\/writes\//], ['redis helpers (guarded, coalesce, scripts)', /dist\/redis\//],
  ['limiter', /dist\/limiter\//], ['token cache', /dist\/(cache|tokens)\//], ['sale records', /sale-records/], ['events', /dist\/events\//], ['wallet, removal guard', /dist\/wallet\//],
  ['gateway client (ours)', /dist\/gateway\//], ['checkout, sale service', /dist\/sales\//], ['routes', /dist\/http\/routes/],
  ['ioredis', /ioredis|redis-parser|standard-as-callback|cluster-key-slot|denque/], ['undici', /undici/],
  ['express, router', /node_modules\/(express|router|finalhandler|on-finished|parseurl|path-to-regexp)\//],
  ['node http', /_http_|node:http/], ['node streams, net (socket writes and their kernel work)', /streams|node:net|stream_base/],
];

function layers(text) {
  const agg = new Map();
  let total = 0;
  let cur = null;
  const flush = () => {
    if (!cur) return;
    total += cur.period;
    let layer;
    for (const f of cur.frames) {
      layer = LAYERS.find(([, re]) => re.test(f))?.[0];
      if (layer) break;
    }
    if (!layer) {
      const all = cur.frames.join(' ');
      layer = /Scavenge|Heap|MarkCompact|Sweep|Compactor/i.test(all) ? '(GC)' : /RunMicrotasks|processTicks/.test(all) ? '(microtasks, runtime)' : /entry_SYSCALL|do_syscall/.test(all) ? '(kernel)' : '(other runtime)';
    }
    agg.set(layer, (agg.get(layer) ?? 0) + cur.period);
    cur = null;
  };
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) {
      flush();
      cur = { period: Number(line.trim().split(/\s+/)[2]) || 1, frames: [] };
    } else if (line.trim() && cur) {
      const t = line.trim();
      cur.frames.push(t.slice(t.indexOf(' ') + 1));
    }
  }
  flush();
  return [...agg].sort((a, b) => b[1] - a[1]).map(([layer, v]) => ({ share: Math.round((1000 * v) / total) / 10, layer }));
}

function main() {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  if (!file) throw new Error('usage: node bench/perf-layers.js <perf.data> | <perf script text> --text');
  const text = args.includes('--text') ? fs.readFileSync(file, 'utf8') : execFileSync('perf', ['script', '-i', file, '-F', 'comm,tid,period,ip,sym'], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  for (const r of layers(text)) process.stdout.write(`${String(r.share).padStart(5)} %  ${r.layer}\n`);
}

main();
