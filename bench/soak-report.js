'use strict';
/**
 * The soak's soak.md and soak.svg from its result and timeline (bench/soak.js writes soak.json and
 * soak-timeline.json). Self-made SVG like bench/chart.js: no browser, no network, no packages.
 * CLI: `node bench/soak-report.js <dir>` re-renders from <dir>/soak.json and <dir>/soak-timeline.json.
 */

const fs = require('node:fs');
const path = require('node:path');

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
// Answer classes bottom-up in the stack; the soak counts 409 and 429 apart from the other 4xx.
const ANSWERS = [['2xx', '#2f855a'], ['4xx', '#d69e2e'], ['409', '#805ad5'], ['429', '#e53e3e'], ['5xx', '#822727'], ['net', '#a0aec0']];
const REPLICA_COLORS = ['#2b6cb0', '#dd6b20', '#2f855a', '#805ad5', '#d53f8c', '#319795', '#718096'];
const C = { sales: '#2b6cb0', redis: '#c05621', fault: '#c53030', axis: '#a0aec0', grid: '#edf2f7', ink: '#1a202c', muted: '#4a5568', ok: '#2f855a', over: '#c53030' };
const W = 1000;
const L = 64; // room for the y tick labels
const PLOT_W = W - L - 24; // and room on the right for the last tick label
const PANEL_H = 145;
const TIME_STEPS = [0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120]; // minutes: 15 s, 30 s, ... so ticks fall on round times
const LABELS_BEFORE_NUMBERS = 20; // past this many faults, kind labels cannot stay readable: number them

function text(x, y, s, opts = {}) {
  const { size = 12, anchor = 'start', weight = 'normal', fill = C.ink, halo = false } = opts;
  // A white outline under the glyphs keeps a title readable where a fault line runs through it.
  const outline = halo ? ' stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"' : '';
  return `<text x="${r1(x)}" y="${r1(y)}" font-family="sans-serif" font-size="${size}" text-anchor="${anchor}" font-weight="${weight}" fill="${fill}"${outline}>${esc(s)}</text>`;
}

function rect(x, y, w, h, fill) {
  return `<rect x="${r1(x)}" y="${r1(y)}" width="${r1(Math.max(0, w))}" height="${r1(Math.max(0, h))}" fill="${fill}"/>`;
}

function line(x1, y1, x2, y2, stroke, extra = '') {
  return `<line x1="${r1(x1)}" y1="${r1(y1)}" x2="${r1(x2)}" y2="${r1(y2)}" stroke="${stroke}"${extra}/>`;
}

const r1 = (v) => Math.round(v * 10) / 10;
// No font metrics without a browser: an average sans-serif glyph is a little over half its size.
const textWidth = (s, size) => String(s).length * size * 0.6;
// Upright fault labels make the band above the panels as tall as the longest one.
const clip = (s, n) => (String(s).length > n ? `${String(s).slice(0, n - 1)}…` : String(s));

/** Integers as they are, other numbers to 1-2 decimals, per-replica objects as "name value" pairs. */
function fmt(v) {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toFixed(Math.abs(v) >= 100 ? 1 : 2)));
  if (typeof v === 'object') return Object.entries(v).map(([k, x]) => `${k} ${fmt(x)}`).join(', ');
  return String(v);
}

function mmss(t) {
  const s = Math.max(0, Math.round(t ?? 0));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** "2025-03-01 10:00:05 UTC" from an ISO time (to the minute with `minutes`); what cannot be read, as it is. */
function utc(iso, minutes) {
  const ms = Date.parse(iso ?? '');
  if (!Number.isFinite(ms)) return iso ?? 'unknown';
  return `${new Date(ms).toISOString().slice(0, minutes ? 16 : 19).replace('T', ' ')} UTC`;
}

function fmtDuration(s) {
  if (!Number.isFinite(s)) return 'a run';
  if (s < 120) return `${s} s`;
  if (s >= 7200) return `${fmt(s / 3600)} h`;
  return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** A round step (1, 2, 2.5 or 5 × 10^k) giving about `count` ticks over `span`. */
function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const pow = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * pow).find((s) => s >= raw);
}

/** Axis range and ticks; `zero` keeps 0 in view (counts, rates), otherwise a level's trend gets the height. */
function yAxis(values, zero) {
  const vals = values.filter(Number.isFinite);
  let lo = zero ? 0 : Math.min(...vals, Infinity);
  let hi = Math.max(...vals, -Infinity);
  if (!vals.length) [lo, hi] = [0, 1];
  if (hi - lo < 1e-9) [lo, hi] = zero ? [0, hi > 0 ? hi : 1] : [lo - 1, hi + 1];
  if (!zero) lo = Math.max(0, lo - (hi - lo) * 0.1);
  const step = niceStep(hi - lo, 4);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Number(v.toFixed(6)));
  return { lo, hi, ticks };
}

/** A panel's frame: y grid and labels, and (drawn last, over the fault lines) its title and legend. */
function panel(y, title, legend, axis, xTicks, xOf) {
  const top = y + 20;
  const yOf = (v) => top + PANEL_H - ((v - axis.lo) / (axis.hi - axis.lo)) * PANEL_H;
  const out = [];
  const titles = [text(L, y + 12, title, { size: 13, weight: 'bold', halo: true })];
  let lx = L + PLOT_W;
  for (const [name, color] of [...legend].reverse()) {
    lx -= textWidth(name, 11) + 24;
    titles.push(rect(lx - 2, y + 1, textWidth(name, 11) + 18, 14, '#ffffff'), rect(lx, y + 3, 10, 10, color), text(lx + 14, y + 12, name, { size: 11 }));
  }
  for (const t of xTicks) out.push(line(xOf(t), top, xOf(t), top + PANEL_H, C.grid));
  for (const v of axis.ticks) {
    out.push(line(L, yOf(v), L + PLOT_W, yOf(v), C.grid));
    out.push(text(L - 6, yOf(v) + 4, fmt(v), { size: 10, anchor: 'end', fill: C.muted }));
  }
  out.push(line(L, top + PANEL_H, L + PLOT_W, top + PANEL_H, C.axis), line(L, top, L, top + PANEL_H, C.axis));
  return { out, titles, yOf };
}

/** One line per run of non-null points, so a replica that was down leaves a gap; a lone point is a dot. */
function series(points, color, dots) {
  const runs = [[]];
  for (const p of points) {
    if (Number.isFinite(p.v)) runs[runs.length - 1].push(p);
    else if (runs[runs.length - 1].length) runs.push([]);
  }
  return runs.filter((r) => r.length).map((r) => {
    const marks = dots || r.length === 1 ? r.map((p) => `<circle cx="${r1(p.x)}" cy="${r1(p.y)}" r="2" fill="${color}"/>`).join('') : '';
    const poly = r.length > 1 ? `<polyline fill="none" stroke="${color}" stroke-width="1.5" stroke-linejoin="round" points="${r.map((p) => `${r1(p.x)},${r1(p.y)}`).join(' ')}"/>` : '';
    return poly + marks;
  }).join('\n');
}

/** Each sample's answers as one stacked bar over the interval it counts, (t - interval, t]. */
function answerBars(samples, interval, xOf, yOf) {
  const out = [];
  for (const s of samples) {
    const x0 = xOf((s.t - interval) / 60);
    const w = xOf(s.t / 60) - x0;
    const gap = w > 6 ? 1 : 0;
    let acc = 0;
    for (const [k, color] of ANSWERS) {
      const n = s.answers?.[k] ?? 0;
      if (n > 0) out.push(rect(x0 + gap, yOf(acc + n), w - 2 * gap, yOf(acc) - yOf(acc + n), color));
      acc += n;
    }
  }
  return out.join('\n');
}

/**
 * Label x positions at least `gap` apart, each as near its fault as it can be, inside [lo, hi]: close
 * faults get their labels pushed aside, and a short slanted leader joins each label to its line.
 */
function spread(xs, gap, lo, hi) {
  const g = xs.length > 1 ? Math.min(gap, (hi - lo) / (xs.length - 1)) : gap;
  const out = [];
  xs.forEach((x, i) => out.push(Math.max(x, i ? out[i - 1] + g : lo)));
  for (let i = xs.length - 1; i >= 0; i--) out[i] = Math.min(out[i], i < xs.length - 1 ? out[i + 1] - g : hi);
  return out;
}

/** Kinds stand upright above the panels (a label is then one glyph wide); past 20 faults, numbers do. */
function faultLayout(faults, xOf) {
  const numbered = faults.length > LABELS_BEFORE_NUMBERS;
  const label = numbered ? (_f, i) => String(i + 1) : (f) => clip(f.kind ?? 'fault', 24);
  const widths = faults.map((f, i) => textWidth(label(f, i), 10));
  const gap = numbered ? Math.max(...widths, 0) + 4 : 12;
  const lx = spread(faults.map((f) => xOf(f.t / 60)), gap, L + gap / 2, W - gap / 2);
  const height = faults.length ? (numbered ? 12 : Math.max(...widths)) + 4 : 0;
  return { label, numbered, height, placed: faults.map((f, i) => ({ i, x: xOf(f.t / 60), lx: lx[i] })) };
}

/**
 * The faults in time order, each with `t` in seconds since the start (from `at` where `t` is missing). The
 * result's list first, so the chart's numbers and the markdown's table always count the same list.
 */
function faultsOf(result, timeline) {
  const start = Date.parse(result?.started_at ?? '');
  return (result?.faults ?? timeline?.faults ?? []).map((f) => ({ ...f, t: Number.isFinite(f.t) ? f.t : (Date.parse(f.at) - start) / 1000 }))
    .filter((f) => Number.isFinite(f.t)).sort((a, b) => a.t - b.t);
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The run's setup in words, leaving out what the result does not say. */
function setup(r, minutes, code = (s) => s) {
  const b = r.budget ?? {};
  const budget = [b.per_minute !== undefined && `${fmt(b.per_minute)}/min`, b.per_day !== undefined && `${fmt(b.per_day)}/day`].filter(Boolean);
  return [
    r.build && `build ${code(r.build)}`,
    r.started_at && `started ${utc(r.started_at, minutes)}`,
    r.scale !== undefined && `scale ${fmt(r.scale)}`,
    budget.length && `budget ${budget.join(' and ')}`,
  ].filter(Boolean);
}

function outcome(r, faults) {
  // "Charges": sales and authorizations together; "sale" in the operations table is one operation of the mix.
  const sales = r.sales_attempted !== undefined ? [`${fmt(r.sales_succeeded)} of ${fmt(r.sales_attempted)} charges (sales and authorizations) succeeded`] : [];
  return [...sales, faults.length ? plural(faults.length, 'fault') : 'no faults'];
}

function header(result, faults) {
  const r = result ?? {};
  const verdict = r.passed === undefined ? '' : r.passed ? 'PASSED' : 'FAILED';
  return [
    text(16, 26, `Soak: ${title(r)}`, { size: 15, weight: 'bold' }),
    verdict ? text(W - 16, 26, verdict, { size: 15, weight: 'bold', anchor: 'end', fill: r.passed ? C.ok : C.over }) : '',
    text(16, 44, [...setup(r, true), ...outcome(r, faults)].join(' · '), { size: 12, fill: C.muted }),
  ];
}

/**
 * The samples the chart plots: the load's, in time order. A sample after the load stopped (duration_s) is the
 * judge's end-of-run replay check, not the merchant's traffic: plotted, it showed as a spike of sales (issue 41).
 */
function plottedSamples(timeline, result) {
  const end = Number.isFinite(result?.duration_s) ? result.duration_s : Infinity;
  return [...(timeline?.samples ?? [])].filter((s) => Number.isFinite(s.t) && s.t <= end).sort((a, b) => a.t - b.t);
}

/** The timeline as four panels on one time axis in minutes, with a dashed line at each fault. */
function renderSvg(timeline, result) {
  const samples = plottedSamples(timeline, result);
  const interval = timeline?.interval_s ?? (samples.length > 1 ? samples[1].t - samples[0].t : 5);
  const faults = faultsOf(result, timeline);
  const endMin = Math.max(result?.duration_s ?? 0, samples.at(-1)?.t ?? 0, faults.at(-1)?.t ?? 0, interval) / 60;
  const xStep = TIME_STEPS.find((m) => m >= endMin / 8) ?? niceStep(endMin, 8);
  const xMax = Math.ceil(endMin / xStep - 1e-9) * xStep;
  const xOf = (m) => L + (Math.min(Math.max(m, 0), xMax) / xMax) * PLOT_W;
  const xTicks = [];
  for (let m = 0; m <= xMax + xStep / 2; m += xStep) xTicks.push(Number(m.toFixed(6)));

  const layout = faultLayout(faults, xOf);
  const labelBase = 56 + layout.height;
  const firstPanel = labelBase + (faults.length ? 10 : 0);
  const dots = samples.length <= 40; // a short run has few points: show them
  const replicas = [...new Set(samples.flatMap((s) => Object.keys(s.rss_mb ?? {})))].sort();
  const colorOf = (i) => REPLICA_COLORS[i % REPLICA_COLORS.length];
  const at = (i) => firstPanel + i * (PANEL_H + 20 + 22);
  const pts = (get, yOf) => samples.map((s) => ({ x: xOf(s.t / 60), v: get(s), y: yOf(get(s) ?? 0) }));
  const panels = [
    () => {
      const p = panel(at(0), 'Sales per second', [], yAxis(samples.map((s) => s.sales_per_s), true), xTicks, xOf);
      return { titles: p.titles, out: [...p.out, series(pts((s) => s.sales_per_s, p.yOf), C.sales, dots)] };
    },
    () => {
      const totals = samples.map((s) => ANSWERS.reduce((n, [k]) => n + (s.answers?.[k] ?? 0), 0));
      const p = panel(at(1), `Answers per ${fmt(interval)} s interval, by class`, ANSWERS, yAxis(totals, true), xTicks, xOf);
      return { titles: p.titles, out: [...p.out, answerBars(samples, interval, xOf, p.yOf)] };
    },
    () => {
      const all = samples.flatMap((s) => Object.values(s.rss_mb ?? {}));
      const p = panel(at(2), 'RSS per replica (MB; a gap is a replica down)', replicas.map((r, i) => [r, colorOf(i)]), yAxis(all, false), xTicks, xOf);
      return { titles: p.titles, out: [...p.out, ...replicas.map((r, i) => series(pts((s) => s.rss_mb?.[r], p.yOf), colorOf(i), dots))] };
    },
    () => {
      const p = panel(at(3), 'Redis used memory (MB)', [], yAxis(samples.map((s) => s.redis_mb), true), xTicks, xOf);
      return { titles: p.titles, out: [...p.out, series(pts((s) => s.redis_mb, p.yOf), C.redis, dots)] };
    },
  ];
  const drawn = panels.map((draw) => draw());
  const plotBottom = at(3) + 20 + PANEL_H;
  const out = [...header(result, faults), ...drawn.flatMap((d) => d.out)];
  if (!samples.length) out.push(text(L + PLOT_W / 2, at(0) + 20 + PANEL_H / 2, 'no samples', { size: 14, anchor: 'middle', fill: C.muted }));
  for (const t of xTicks) out.push(text(xOf(t), plotBottom + 15, fmt(t), { size: 10, anchor: 'middle', fill: C.muted }));
  out.push(text(L + PLOT_W / 2, plotBottom + 32, 'minutes since start', { size: 11, anchor: 'middle', fill: C.muted }));
  out.push(...faultMarks(faults, layout, labelBase, plotBottom), ...drawn.flatMap((d) => d.titles));
  let H = plotBottom + 44;
  if (layout.numbered) {
    const key = faultKey(faults, H);
    out.push(...key.out);
    H = key.bottom;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${Math.ceil(H)}" viewBox="0 0 ${W} ${Math.ceil(H)}">`,
    `<rect width="${W}" height="${Math.ceil(H)}" fill="#ffffff"/>`,
    ...out.filter(Boolean),
    '</svg>',
  ].join('\n') + '\n';
}

function faultMarks(faults, layout, labelBase, plotBottom) {
  const elbow = labelBase + 10; // where a pushed-aside label's leader meets its fault's line
  return layout.placed.flatMap((p) => {
    const label = layout.label(faults[p.i], p.i);
    const mark = layout.numbered
      ? text(p.lx, labelBase - 2, label, { size: 10, anchor: 'middle', fill: C.fault })
      : `<g transform="translate(${r1(p.lx + 4)},${r1(labelBase - 2)}) rotate(-90)">${text(0, 0, label, { size: 10, fill: C.fault })}</g>`;
    return [
      mark,
      line(p.lx, labelBase, p.x, elbow, C.fault, ' stroke-width="0.8" stroke-opacity="0.7"'),
      line(p.x, elbow, p.x, plotBottom, C.fault, ' stroke-width="1" stroke-dasharray="4,3" stroke-opacity="0.7"'),
    ];
  });
}

/** Under the chart when the markers carry numbers: number, time and kind, in columns read downwards. */
function faultKey(faults, y) {
  const cols = 4;
  const perCol = Math.ceil(faults.length / cols);
  const out = [text(16, y + 4, 'Faults', { size: 12, weight: 'bold' })];
  faults.forEach((f, i) => {
    const x = 16 + Math.floor(i / perCol) * ((W - 32) / cols);
    const yy = y + 22 + (i % perCol) * 14;
    out.push(text(x, yy, `${i + 1}  ${mmss(f.t)}  ${f.kind ?? 'fault'}`, { size: 10, fill: C.muted }));
  });
  return { out, bottom: y + 22 + perCol * 14 };
}

// ---- markdown ----

const cell = (v) => fmt(v).replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
const row = (cells) => `| ${cells.map(cell).join(' | ')} |`;
const table = (head, rows) => [row(head), `|${head.map(() => '---').join('|')}|`, ...rows.map(row), ''];

/** Targets when the result has no list of its own: the counters must be 0, the measures within bounds. */
function derivedTargets(r) {
  const counters = ['double_charges', 'beyond_bounds', 'replay_mismatches', 'unknown_open_after_deadline', 'upstream_429', 'card_data_found'];
  const worst = (v) => (v && typeof v === 'object' ? Math.max(...Object.values(v).filter(Number.isFinite)) : v);
  return [
    ...counters.filter((k) => r[k] !== undefined).map((k) => ({ name: k, value: r[k], bound: 0, pass: r[k] === 0 })),
    ...Object.entries(r.bounds ?? {}).map(([k, bound]) => ({ name: k, value: worst(r[k]), bound, pass: Number.isFinite(worst(r[k])) ? worst(r[k]) <= bound : undefined })),
  ];
}

function statusOrder(a, b) {
  const na = Number(a);
  const nb = Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return Number.isFinite(na) ? -1 : Number.isFinite(nb) ? 1 : a.localeCompare(b);
}

/** "30 min with faults (aof)", or "75 min without faults (aof)" for a `--faults off` run (faults_on false). */
function title(r) {
  return `${fmtDuration(r.duration_s)} ${r.faults_on === false ? 'without' : 'with'} faults (${r.mode ?? '?'})`;
}

/** The operations table's names where the soak's own would read ambiguously. */
const OPERATION_NAMES = { sale: 'sale (a stored card)', new_card_sale: 'new_card_sale (a card from Pay.js, kept)' };

/**
 * Why there are 429s, when the gateway's injected 429s explain them: each one makes the budget keep the key closed
 * for the rest of the gateway's window (docs/budget.md), so every call in that window waits its maximum and is
 * answered 429 rate_limited with Retry-After instead of being sent. Upstream 429s are the judged target, not these.
 */
function tooManyRequests(r) {
  const count = r.requests?.by_status?.['429'];
  const injected = r.gateway?.injected_429;
  if (!count || !r.requests?.total) return undefined;
  const share = `${Math.round((count / r.requests.total) * 1000) / 10} %`;
  if (!injected) return `The ${fmt(count)} answers 429 (${share} of all) are tokengate's \`rate_limited\`: the budget had no room within a call's maximum wait.`;
  return `The ${fmt(count)} answers 429 (${share} of all) are tokengate's own \`rate_limited\`, not the gateway's (upstream_429 is ${fmt(r.upstream_429 ?? 0)}): `
    + `each of the ${fmt(injected)} gateway 429s the faults injected closes the budget for the rest of the gateway's window, so the calls of that window `
    + 'wait their maximum and are refused with Retry-After rather than sent (docs/budget.md). A fault, not a failing: clients retry after the window.';
}

function renderMarkdown(result, timeline) {
  const r = result ?? {};
  const faults = faultsOf(r, timeline);
  const targets = r.targets?.length ? r.targets : derivedTargets(r);
  const failed = targets.filter((t) => t.pass === false).map((t) => t.name);
  const verdict = r.passed === undefined ? 'verdict unknown' : r.passed ? '**passed**' : `**FAILED**${failed.length ? ` on ${failed.join(', ')}` : ''}`;
  const out = [`# Soak: ${title(r)}`, ''];
  const settings = Object.entries(r.replica_settings ?? {}).map(([name, env]) => `${name} with ${Object.entries(env).map(([k, v]) => `\`${k}=${v}\``).join(' ')}`);
  if (settings.length > 0) out.push(`Replica settings beside the image's: ${settings.join('; ')} (the others are its baseline).`, '');
  const said = setup(r, false, (s) => `\`${s}\``).join(', ');
  out.push(`${said ? `${said[0].toUpperCase()}${said.slice(1)}: ` : ''}${verdict} (${outcome(r, faults).join(', ')}).`, '');
  out.push(...table(['target', 'value', 'bound', 'pass', 'how judged'],
    // Runs before issue 41 stored pass: true beside a "not judged" reason: read as what it was.
    targets.map((t) => [t.name, t.value, t.bound, t.pass === undefined || /^not judged/.test(t.how ?? '') ? 'not measured' : t.pass ? 'yes' : '**NO**', t.how ?? ''])));
  out.push('![soak timeline](soak.svg)', '');
  if (r.operations) {
    out.push('## Operations', '', 'One row per operation of the merchant\'s mix; the charges above are `sale`, `new_card_sale` and `authorize` together.', '',
      ...table(['operation', 'attempted', 'succeeded'], Object.entries(r.operations).map(([k, o]) => [OPERATION_NAMES[k] ?? k, o?.attempted, o?.succeeded])));
  }
  const byStatus = r.requests?.by_status;
  if (byStatus) {
    const keys = Object.keys(byStatus).sort(statusOrder);
    out.push('## Answers by status', '', ...table([...keys, 'total'], [[...keys.map((k) => byStatus[k]), r.requests.total]]));
    const why = tooManyRequests(r);
    if (why) out.push(why, '');
  }
  if (r.rss_growth_mb_per_hour && typeof r.rss_growth_mb_per_hour === 'object') {
    const el = r.event_loop_delay_p99_ms_by_replica ?? {};
    out.push('## Replicas', '', ...table(['replica', 'RSS growth MB/h', 'event-loop delay p99 ms'],
      Object.entries(r.rss_growth_mb_per_hour).map(([k, v]) => [k, v, el[k]])));
  }
  if (r.events) out.push('## Events', '', ...table(['received', 'distinct', 'bad signature'], [[r.events.received, r.events.distinct, r.events.bad_signature]]));
  if (faults.length) {
    out.push('## Faults', '', ...table(['#', 'time', 'kind', 'detail'], faults.map((f, i) => [i + 1, mmss(f.t), f.kind, f.detail ?? ''])));
  }
  if (r.notes?.length) out.push('## Notes', '', ...r.notes.map((n) => `- ${String(n).replace(/\s*\n\s*/g, ' ')}`), '');
  return out.join('\n');
}

function writeReport(result, timeline, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const md = path.join(outDir, 'soak.md');
  const svg = path.join(outDir, 'soak.svg');
  fs.writeFileSync(md, renderMarkdown(result, timeline));
  fs.writeFileSync(svg, renderSvg(timeline, result));
  return { md, svg };
}

module.exports = { writeReport, renderSvg, renderMarkdown, plottedSamples };

if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node bench/soak-report.js <dir with soak.json and soak-timeline.json>');
    process.exit(2);
  }
  const read = (name) => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
  const timelineFile = path.join(dir, 'soak-timeline.json');
  // A run killed before its first sample still has a result worth reading.
  const written = writeReport(read('soak.json'), fs.existsSync(timelineFile) ? read('soak-timeline.json') : { samples: [] }, dir);
  console.log(`${written.md}\n${written.svg}`);
}
