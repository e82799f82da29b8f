'use strict';
/**
 * Judges a renewals run again from the raw ledger and samples it wrote before judging (`raw.json` in its tmp
 * folder) and rewrites its report, keeping what only the live run could measure (CPU, Redis, tokengate's spill
 * count, the gateway's counts):
 *
 *   node bench/renewals/rejudge.js <raw.json> <results dir> "<why>"
 */
const fs = require('node:fs');
const path = require('node:path');
const { judgeRenewals, judgeCheckouts } = require('./judge');
const { writeReport } = require('./report');

const [rawPath, out, why] = process.argv.slice(2);
if (!rawPath || !out || !why) throw new Error('usage: node bench/renewals/rejudge.js <raw.json> <results dir> "<why>"');
const raw = JSON.parse(fs.readFileSync(rawPath, 'utf8'));
const result = JSON.parse(fs.readFileSync(path.join(out, 'renewals.json'), 'utf8'));
const subs = new Map(raw.subs.map(([p, s]) => [p, { ...s, kind: s.kind.startsWith('removed') ? 'plain' : s.kind }]));
const verdict = judgeRenewals({ transactions: raw.transactions, endpointKey: 'v2', subs, removed: new Map(raw.removed), endMs: raw.endMs });
const windows = raw.faults.filter((f) => f.kind === 'replica_sigkill').map((f) => ({ from: f.wall_from, to: f.wall_to }));
const targets = result.targets.map((t) => (t.name in verdict ? { ...t, value: verdict[t.name], pass: verdict[t.name] <= t.bound } : t));
writeReport({ ...result, targets, passed: targets.every((t) => t.pass), renewals: verdict, checkouts: judgeCheckouts(raw.samples, windows), rejudged: { at: new Date().toISOString().slice(0, 16).replace('T', ' '), why } }, out);
console.log(`rejudged: ${path.join(out, 'renewals.md')}`);
