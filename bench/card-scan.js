'use strict';
/**
 * Micro-bench of the per-request card-data work on the sale path (issue 10): the raw-body card scan, the
 * duplicate-key check, and the guard over a typical sale's headers, URL and parsed body (with the bank rule of
 * issue 38 in the same walk, where the build has it; the card rule alone is printed beside it).
 *   node bench/card-scan.js [distDir]     (default ./dist; `npm run build` first)
 * Pass another build's dist (e.g. an older commit's) to compare. Figures are CPU ns per request (this
 * process's user+system time, so other load on a shared machine disturbs them less than wall time), best of
 * 5 rounds. Not part of `npm run bench`.
 */
const path = require('node:path');

const dist = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'dist'));
const { containsPan } = require(path.join(dist, 'card/pan'));
const guard = require(path.join(dist, 'http/card-guard'));
const { findCardData } = guard;
const jsonBody = require(path.join(dist, 'http/json-body'));

// A typical sale: about 200 bytes of JSON, a JWT, a clock-based key and invoice, a W3C trace header.
const raw = JSON.stringify({
  customer: 'nsds9yd1h5kb9y5d',
  payment_method: 'pm_1a2b3c4d5e6f',
  amount: '125.40',
  amount_detail: { tax: '10.03', tip: '5.00' },
  invoice: 'ORD-1795369789000',
  description: 'Order 1795369789000, 2 items',
});
const body = JSON.parse(raw);
const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTQyIiwiY3VzdGtleSI6Im5zZHM5eWQxaDVrYjl5NWQiLCJzY29wZSI6InNhbGVzOmNyZWF0ZSIsImlzcyI6InRva2VuZ2F0ZS10ZXN0IiwiYXVkIjoidG9rZW5nYXRlIiwiaWF0IjoxNzk1MzY5Nzg5LCJleHAiOjE3OTUzNzMzODl9.Xk3vX2d1Y0Q8b5Jm9zP4r7t6u1w0q2e3r4t5y6u7i8o';
const req = {
  headers: {
    host: '127.0.0.1:8080',
    'content-type': 'application/json',
    'content-length': String(raw.length),
    authorization: `Bearer ${jwt}`,
    'idempotency-key': 'order-1795369789000-4', // -3 passes Luhn: the old guard refused it
    'x-request-id': '3f2c9a7e-1b4d-4c8a-9e21-7d5b6a4f3c10',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    'user-agent': 'merchant-backend/2.3.1 node/20.19.0',
    accept: 'application/json',
  },
  originalUrl: '/v1/sales',
  query: {},
  body,
};

function measure(name, fn, iterations = 200_000) {
  for (let i = 0; i < 20_000; i++) fn();
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < iterations; i++) fn();
    const used = process.cpuUsage(start);
    best = Math.min(best, ((used.user + used.system) * 1000) / iterations);
  }
  process.stdout.write(`${name.padEnd(44)} ${best.toFixed(0).padStart(6)} ns\n`);
  return best;
}

process.stdout.write(`dist: ${dist}\nsale body: ${raw.length} bytes\n`);
// Both detectors must let this sale through, or the guard's early exit would flatter one of them.
if (containsPan(raw) || findCardData(req) !== undefined) throw new Error('the sample sale is refused: pick ids both detectors accept');
let total = 0;
total += measure('raw body card scan (containsPan)', () => containsPan(raw));
if (typeof jsonBody.hasDuplicateKey === 'function') total += measure('duplicate-key check (hasDuplicateKey)', () => jsonBody.hasDuplicateKey(raw));
// The guard's one walk applies the bank rule too (issue 38) where the build has it: its figure is what a sale pays.
const cardOnly = measure('guard, card rule only (findCardData)', () => findCardData(req));
if (typeof guard.findRawPaymentData === 'function') {
  if (guard.findRawPaymentData(req) !== undefined) throw new Error('the sample sale is refused as bank data');
  total += measure('guard: card and bank rules (findRawPaymentData)', () => guard.findRawPaymentData(req));
} else total += cardOnly;
process.stdout.write(`${'total card-data work per sale'.padEnd(44)} ${total.toFixed(0).padStart(6)} ns\n`);
