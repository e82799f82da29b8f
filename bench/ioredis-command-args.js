'use strict';
/**
 * The ioredis patch's Command constructor against the original (issue 40, item 1): a cached-token sale's 11
 * commands' argument counts (bench/trace-sale.js), built 5,000 times per round, the two alternating over 30
 * rounds; CPU microseconds per sale's worth of commands (median and best round). Needs an unpatched copy of
 * ioredis 6.0.0 (e.g. `npm pack ioredis@6.0.0` unpacked, or a node_modules installed without patch-package):
 *
 *   node bench/ioredis-command-args.js <node_modules without the patch>
 */
const path = require('node:path');

const unpatchedModules = process.argv[2];
if (!unpatchedModules) throw new Error('usage: node bench/ioredis-command-args.js <node_modules without the patch>');
const orig = require(path.resolve(unpatchedModules, 'ioredis/built/Command.js')).default;
const patched = require(path.join(__dirname, '..', 'node_modules', 'ioredis', 'built', 'Command.js')).default;
const shapes = [1, 8, 18, 22, 5, 4, 37, 2, 4, 8, 14].map((n) => Array.from({ length: n }, (_, i) => `arg-${i}-value`));
const per = { orig: [], patched: [] };
for (let round = 0; round < 30; round++) {
  for (const [name, C] of round % 2 ? [['orig', orig], ['patched', patched]] : [['patched', patched], ['orig', orig]]) {
    const t = process.cpuUsage();
    for (let i = 0; i < 5000; i++) for (const a of shapes) new C('evalsha', [...a]).promise.catch(() => undefined);
    const u = process.cpuUsage(t);
    per[name].push((u.user + u.system) / 5000);
  }
}
const med = (x) => x.slice().sort((a, b) => a - b)[x.length >> 1];
const round2 = (x) => Math.round(x * 100) / 100;
process.stdout.write(`${JSON.stringify({
  us_per_sale_commands_median: { original: round2(med(per.orig)), patched: round2(med(per.patched)) },
  us_per_sale_commands_best: { original: round2(Math.min(...per.orig)), patched: round2(Math.min(...per.patched)) },
  loadavg: require('node:os').loadavg().map(round2),
}, null, 2)}\n`);
