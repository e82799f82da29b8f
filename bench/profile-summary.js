'use strict';
/**
 * Where a CPU profile's busy time goes (issue 40, item 1): a `node --cpu-prof` profile of tokengate under the
 * sale load (e.g. `AB_NODE_ARGS_B="--cpu-prof --cpu-prof-dir=/tmp/prof" node bench/ab-sale.js . . 1 4000`), read
 * over the seconds given (the measured round, not the start-up or the warm-up), idle left out:
 *   - self time by function (the leaves: a syscall, a library function, ours);
 *   - busy time by the nearest of OUR functions on the stack (dist/, not node_modules): what each of our steps
 *     costs with the library and runtime work it calls;
 *   - the busy share per second, to choose the window.
 *
 *   node bench/profile-summary.js <file.cpuprofile> [from s] [to s] [--json]
 */
const fs = require('node:fs');

function summarise(file, fromS = 0, toS = Infinity) {
  const p = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const short = (u) => u.replace(/.*node_modules\//, 'nm:').replace(/.*\/dist\//, 'dist:');
  const ours = (u) => /\/dist\//.test(u) && !/node_modules/.test(u);
  const self = new Map();
  const nearest = new Map();
  const perSecond = new Map();
  let t = 0;
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const d = p.timeDeltas[i] ?? 0;
    t += d;
    const id = p.samples[i];
    const frame = byId.get(id).callFrame;
    const s = Math.floor(t / 1e6);
    const sec = perSecond.get(s) ?? { busy: 0, all: 0 };
    sec.all += d;
    const idle = frame.functionName === '(idle)';
    if (!idle) sec.busy += d;
    perSecond.set(s, sec);
    if (idle || t < fromS * 1e6 || t > toS * 1e6) continue;
    busy += d;
    const leaf = `${frame.functionName || '(anonymous)'} ${short(frame.url)}${frame.url ? `:${frame.lineNumber}` : ''}`;
    self.set(leaf, (self.get(leaf) ?? 0) + d);
    let cur = id;
    let key = `(no function of ours: ${frame.functionName || 'anonymous'})`;
    while (cur !== undefined) {
      const f = byId.get(cur).callFrame;
      if (ours(f.url)) {
        key = `${f.functionName || '(anonymous)'} ${short(f.url)}:${f.lineNumber}`;
        break;
      }
      cur = parent.get(cur);
    }
    nearest.set(key, (nearest.get(key) ?? 0) + d);
  }
  const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => ({ share_of_busy: Math.round((1000 * v) / busy) / 10, what: k }));
  return {
    window_s: [fromS, Number.isFinite(toS) ? toS : null],
    busy_ms: Math.round(busy / 1000),
    busy_share_per_second: [...perSecond].map(([s, x]) => `${s}:${Math.round((100 * x.busy) / x.all)}`).join(' '),
    self_by_function: top(self, 30),
    by_nearest_function_of_ours: top(nearest, 30),
  };
}

function main() {
  const args = process.argv.slice(2);
  const json = args.includes('--json');
  const [file, from, to] = args.filter((a) => a !== '--json');
  if (!file) throw new Error('usage: node bench/profile-summary.js <file.cpuprofile> [from s] [to s] [--json]');
  const out = summarise(file, Number(from ?? 0), to === undefined ? Infinity : Number(to));
  if (json) {
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  process.stdout.write(`busy ${out.busy_ms} ms in [${out.window_s.join(', ')}] s; busy % per second: ${out.busy_share_per_second}\n`);
  process.stdout.write('self time by function:\n');
  for (const r of out.self_by_function) process.stdout.write(`${String(r.share_of_busy).padStart(6)} %  ${r.what}\n`);
  process.stdout.write('by the nearest function of ours on the stack:\n');
  for (const r of out.by_nearest_function_of_ours) process.stdout.write(`${String(r.share_of_busy).padStart(6)} %  ${r.what}\n`);
}

main();
