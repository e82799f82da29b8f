'use strict';
/**
 * What grows between heap snapshots of one process (issue 40, item 4: the memory soak's snapshots at its start,
 * middle and end). Per constructor (V8's node name for objects, the node type for the rest): live objects and
 * their shallow bytes in each snapshot, the change from the first to the last, largest growth first.
 *
 *   node bench/heap-diff.js <first.heapsnapshot> [<middle.heapsnapshot> …] <last.heapsnapshot> [--top 25] [--json]
 *
 * Snapshots come from a replica started with `--heapsnapshot-signal=SIGUSR2` (the soak's SOAK_NODE_OPTIONS),
 * sent `kill -USR2 <pid>`; V8 takes them after a full GC, so what they hold is what is reachable.
 */
const fs = require('node:fs');

function summarise(file) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { node_fields: fields, node_types: [types] } = snap.snapshot.meta;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const byName = new Map();
  let total = 0;
  let count = 0;
  const nodes = snap.nodes;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    // Objects by constructor; strings, code, arrays and the rest by their type (their names are contents).
    const key = type === 'object' || type === 'closure' ? `${type === 'closure' ? 'closure ' : ''}${snap.strings[nodes[i + nameAt]]}` : `(${type})`;
    const size = nodes[i + sizeAt];
    const e = byName.get(key) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += size;
    byName.set(key, e);
    total += size;
    count++;
  }
  return { file, total, count, byName };
}

function main() {
  const argv = process.argv.slice(2);
  const top = argv.includes('--top') ? Number(argv[argv.indexOf('--top') + 1]) : 25;
  const json = argv.includes('--json');
  const files = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--top');
  if (files.length < 2) throw new Error('usage: node bench/heap-diff.js <first> [<middle> …] <last> [--top N] [--json]');
  const sums = files.map(summarise);
  const first = sums[0];
  const last = sums[sums.length - 1];
  const names = new Set(sums.flatMap((s) => [...s.byName.keys()]));
  const rows = [...names].map((name) => {
    const per = sums.map((s) => s.byName.get(name) ?? { count: 0, bytes: 0 });
    return { name, counts: per.map((p) => p.count), bytes: per.map((p) => p.bytes), growth_bytes: per[per.length - 1].bytes - per[0].bytes };
  }).sort((a, b) => b.growth_bytes - a.growth_bytes);
  const out = {
    snapshots: sums.map((s) => ({ file: s.file.split('/').pop(), live_bytes: s.total, objects: s.count })),
    growth_bytes: last.total - first.total,
    top_growth: rows.slice(0, top),
    top_shrink: rows.slice(-5).reverse(),
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  const mb = (b) => (b / 1048576).toFixed(2);
  process.stdout.write(`${out.snapshots.map((s) => `${s.file}: ${mb(s.live_bytes)} MB live, ${s.objects} nodes`).join('\n')}\n`);
  process.stdout.write(`growth first -> last: ${mb(out.growth_bytes)} MB\n`);
  for (const r of out.top_growth) process.stdout.write(`${(r.growth_bytes / 1024).toFixed(1).padStart(9)} KB  ${r.counts.join(' -> ').padEnd(28)} ${r.name}\n`);
}

main();
