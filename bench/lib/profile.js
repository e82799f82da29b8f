'use strict';
/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and splits self time by where the code lives: a package under
 * node_modules, a folder of tokengate's dist/, Node's internals, or the garbage collector / idle.
 */
const fs = require('node:fs');
const path = require('node:path');

function bucketOf(url, functionName) {
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(idle)' || functionName === '(program)') return functionName.slice(1, -1);
  if (!url) return 'native/v8';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `npm:${nm[1]}`;
  const dist = /\/dist\/([^/]+)(\/|\.js)/.exec(url);
  if (dist) return `tokengate:${dist[1].replace(/\.js$/, '')}`;
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([^/]+)/.exec(url);
    return `node:${m ? m[1] : url}`;
  }
  return 'other';
}

/** Self time by bucket (ms and share of non-idle time), biggest first; plus the top functions. */
function summariseProfile(file, topN = 15) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  const deltas = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i] ?? 0));
  }
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url ? path.basename(n.callFrame.url) : ''}:${n.callFrame.lineNumber + 1}`;
  const stacks = {};
  const buckets = {};
  const fns = {};
  let busy = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    const { url, functionName, lineNumber } = n.callFrame;
    const b = bucketOf(url, functionName);
    buckets[b] = (buckets[b] ?? 0) + us;
    if (b !== 'idle') busy += us;
    const key = `${functionName || '(anonymous)'} ${url ? path.basename(url) : ''}:${lineNumber + 1} [${b}]`;
    fns[key] = (fns[key] ?? 0) + us;
    if (b !== 'idle') {
      // The function and the seven frames that called it: who is behind a native hot spot.
      const chain = [label(n)];
      for (let p = parent.get(id), k = 0; p !== undefined && k < 7; p = parent.get(p), k++) chain.push(label(byId.get(p)));
      const sk = chain.join(' <- ');
      stacks[sk] = (stacks[sk] ?? 0) + us;
    }
  }
  const share = (us) => Math.round((us / busy) * 1000) / 10;
  return {
    busy_ms: Math.round(busy / 1000),
    by_area: Object.entries(buckets)
      .filter(([b]) => b !== 'idle')
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({ area, ms: Math.round(us / 1000), pct: share(us) })),
    top_functions: Object.entries(fns)
      .filter(([k]) => !k.includes('[idle]'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([fn, us]) => ({ fn, ms: Math.round(us / 1000), pct: share(us) })),
    top_stacks: Object.entries(stacks)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([stack, us]) => ({ stack, ms: Math.round(us / 1000), pct: share(us) })),
  };
}

/**
 * Reads a sampling heap profile (bench/lib/alloc-sampler.js) taken over `sales` sales: bytes allocated per sale,
 * by area (as above) and by the nearest tokengate function on the allocating stack (what our code caused,
 * library allocations included), biggest first.
 */
function summariseAllocations(file, sales, topN = 12) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (prof.error) return { error: prof.error };
  const areas = {};
  const ours = {};
  let total = 0;
  const walk = (node, nearest) => {
    const { url, functionName, lineNumber } = node.callFrame;
    const mine = /\/dist\//.test(url) ? `${functionName || '(anonymous)'} ${path.basename(url)}:${lineNumber + 1}` : nearest;
    if (node.selfSize > 0) {
      total += node.selfSize;
      const area = bucketOf(url, functionName);
      areas[area] = (areas[area] ?? 0) + node.selfSize;
      const key = mine ?? '(no tokengate frame: Node or a library on its own)';
      ours[key] = (ours[key] ?? 0) + node.selfSize;
    }
    for (const child of node.children ?? []) walk(child, mine);
  };
  walk(prof.head, undefined);
  const perSale = (bytes) => Math.round(bytes / sales);
  const top = (m, n) => Object.entries(m).sort((a, b) => b[1] - a[1]).slice(0, n);
  return {
    sales,
    bytes_per_sale: perSale(total),
    by_area: top(areas, topN).map(([area, b]) => ({ area, bytes_per_sale: perSale(b) })),
    by_tokengate_function: top(ours, topN).map(([fn, b]) => ({ fn, bytes_per_sale: perSale(b) })),
  };
}

module.exports = { summariseProfile, summariseAllocations, bucketOf };
