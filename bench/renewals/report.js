'use strict';
/** The renewals bench's report: renewals.json, renewals.md and a chart, renewals.svg (bench/chart.js's parts). */
const fs = require('node:fs');
const path = require('node:path');
const { text, rect, hbars, COLORS } = require('../chart');

/** Per day of the month: renewals due (judged ones), first attempts made that day, and the day's spill. */
function dayChart(x, y, width, height, byDay, spilled) {
  const days = Object.keys(byDay);
  const max = Math.max(1, ...days.map((d) => Math.max(byDay[d].due, byDay[d].first_attempts + byDay[d].retries)));
  const top = y + 24;
  const bottom = y + height - 36;
  const plotH = bottom - top;
  const gw = width / Math.max(1, days.length);
  const bw = Math.max(2, Math.min(12, (gw - 2) / 2));
  const out = [text(x, y, 'Renewals per day: due (grey), tried that day (blue: first attempts, light: retries); red: due that day, first tried a later day', { size: 13, weight: 'bold' })];
  out.push(`<line x1="${x}" y1="${bottom}" x2="${x + width}" y2="${bottom}" stroke="#a0aec0"/>`);
  days.forEach((d, i) => {
    const v = byDay[d];
    const gx = x + i * gw + (gw - 2 * bw) / 2;
    const h = (n) => (n / max) * plotH;
    out.push(rect(gx, bottom - h(v.due), bw - 1, h(v.due), '#a0aec0'));
    out.push(rect(gx + bw, bottom - h(v.first_attempts), bw - 1, h(v.first_attempts), COLORS.tokengate));
    out.push(rect(gx + bw, bottom - h(v.first_attempts + v.retries), bw - 1, h(v.retries), COLORS.p50));
    if (spilled[d]) {
      out.push(rect(gx, bottom - h(v.due) - 4, 2 * bw - 1, 3, COLORS.over));
      out.push(text(gx + bw, bottom - h(v.due) - 8, `${spilled[d]}`, { size: 9, anchor: 'middle', fill: COLORS.over }));
    }
    if (i % Math.ceil(days.length / 17) === 0) out.push(text(x + i * gw + gw / 2, bottom + 14, d.slice(5), { size: 9, anchor: 'middle' }));
  });
  out.push(text(x, bottom + 30, `most in a day: ${max}`, { size: 10 }));
  return out.join('\n');
}

function renderSvg(r) {
  const W = 960;
  const H = 640;
  const c = r.checkouts;
  const late = r.renewals.late_hours;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    text(20, 26, `tokengate renewals bench — ${r.merchant.subscriptions} subscriptions, ${r.month.from.slice(0, 10)} to ${r.month.to.slice(0, 10)}, a day in ${r.month.day_s} s, ${r.budget.per_day} calls/day${r.quick ? ' (QUICK)' : ''}`, { size: 14, weight: 'bold' }),
    dayChart(20, 56, 920, 280, r.renewals.by_day, r.renewals.spilled_days),
    hbars(20, 370, 440, 'Checkouts\' answer p99 (ms); * outside the kill', [
      { label: 'with renewals', value: c.with_renewals.p99_ms ?? 0, color: COLORS.tokengate, note: `(p50 ${c.with_renewals.p50_ms})` },
      { label: 'without', value: c.without_renewals.p99_ms ?? 0, color: COLORS.direct, note: `(p50 ${c.without_renewals.p50_ms})` },
      ...(c.with_renewals.outside_faults ? [
        { label: 'with *', value: c.with_renewals.outside_faults.p99_ms ?? 0, color: COLORS.tokengate, note: `(p50 ${c.with_renewals.outside_faults.p50_ms})` },
        { label: 'without *', value: c.without_renewals.outside_faults.p99_ms ?? 0, color: COLORS.direct, note: `(p50 ${c.without_renewals.outside_faults.p50_ms})` },
      ] : []),
    ], 'ms'),
    hbars(500, 370, 440, 'Renewals late (hours after due)', [
      { label: 'p50', value: late.p50 ?? 0, color: COLORS.p50 },
      { label: 'p99', value: late.p99 ?? 0, color: COLORS.p99 },
    ], 'h'),
    text(20, 560, `Zero targets: ${r.targets.map((t) => `${t.name.replace(/_/g, ' ')} ${t.value}`).join(' · ')}`, { size: 11, fill: r.passed ? COLORS.ok : COLORS.over }),
    text(20, 580, `Faults: ${r.faults.map((f) => `${f.kind} at ${f.sim}`).join(', ')}. Wall ${r.wall_s} s (month ${r.month_s} s) on ${r.machine.cores} cores, load ${r.machine.load_avg_at_end[0]}.`, { size: 11 }),
    '</svg>',
  ].join('\n') + '\n';
}

function renderMd(r) {
  const v = r.renewals;
  const c = r.checkouts;
  const rows = r.targets.map((t) => `| ${t.name} | ${t.value} | ${t.bound} | ${t.pass ? 'ok' : 'FAIL'} |`);
  return [
    `# Renewals bench ${r.quick ? '(quick) ' : ''}— ${r.started_at}, build ${r.build}`,
    '',
    `${r.merchant.subscriptions} monthly subscriptions on ${r.merchant.customers} cards (${r.merchant.on_the_first} anchored on the 1st), ${r.month.from} to ${r.month.to} (tokengate's and the sandbox's clocks), a day in ${r.month.day_s} s; budget ${r.budget.per_day} calls a day, ${r.budget.per_second_window} a second (scale ${r.budget.scale}); ${r.merchant.checkouts_per_day_each_side} checkouts a day on each side of the A/B. Wall time ${r.wall_s} s (setup ${r.setup_s} s, month ${r.month_s} s) on ${r.machine.cores} cores (load ${r.machine.load_avg_at_end.join(' ')} at the end).`,
    '',
    '| target | value | bound | |',
    '|---|---|---|---|',
    ...rows,
    '',
    `- Periods judged: ${v.expected_periods}, of which ${v.periods_never_tried} were still due, untried, when the month ended (what the budget or the box had not reached: not a failure of at-most-once)${v.periods_stopped_before_tried !== undefined ? ` and ${v.periods_stopped_before_tried} were stopped (their card removed or the subscription canceled) after they fell due and before they were reached, never charged, counted late until then` : ''}; renewals late (the untried counted as late until the month's end): p50 ${v.late_hours.p50} h, p99 ${v.late_hours.p99} h, max ${v.late_hours.max} h (${v.late_over_1h} over an hour).`,
    `- Days whose renewals spilled (judged from the ledger: due that day, first tried a later one): ${Object.entries(v.spilled_days).map(([d, n]) => `${d} (${n})`).join(', ') || 'none'}; tokengate's own count (\`{<p>:subs}:spill:<day>\`): ${Object.entries(r.spilled_by_tokengate).map(([d, n]) => `${d} (${n})`).join(', ') || 'none'}.`,
    `- Soft declines: ${v.soft_declines.recovered} of ${v.soft_declines.periods} periods on cards declining softly were paid on a retry.`,
    `- Checkouts, same moments, answer time: with renewals p50 ${c.with_renewals.p50_ms} ms, p99 ${c.with_renewals.p99_ms} ms (${c.with_renewals.count}, ${c.with_renewals.not_approved} not approved); without p50 ${c.without_renewals.p50_ms} ms, p99 ${c.without_renewals.p99_ms} ms (${c.without_renewals.count}, ${c.without_renewals.not_approved} not approved).`,
    ...(c.with_renewals.outside_faults ? [`- The same checkouts outside the SIGKILL's window (${(r.checkouts_kill_windows ?? []).map((w) => `${w.seconds} s from ${w.from.slice(11, 19)} UTC`).join(', ') || 'none'}: the kill to the replica back plus the write lease; a checkout in flight at any moment of it is left out, ${c.with_renewals.outside_faults.in_windows} with renewals and ${c.without_renewals.outside_faults.in_windows} without): with renewals p50 ${c.with_renewals.outside_faults.p50_ms} ms, p99 ${c.with_renewals.outside_faults.p99_ms} ms, max ${c.with_renewals.outside_faults.max_ms} ms (${c.with_renewals.outside_faults.count}); without p50 ${c.without_renewals.outside_faults.p50_ms} ms, p99 ${c.without_renewals.outside_faults.p99_ms} ms, max ${c.without_renewals.outside_faults.max_ms} ms (${c.without_renewals.outside_faults.count}).`] : []),
    `- Faults: ${r.faults.map((f) => `${f.kind} at ${f.sim} (${f.detail})`).join('; ')}.`,
    `- CPU seconds over the whole run, replicas alive at the end: with renewals ${r.cpu_s.with_renewals_s}, without ${r.cpu_s.without_renewals_s}; the sandbox ${r.cpu_s.sandbox_s}.`,
    ...(r.subscriptions_hash_tag ? [`- Redis, the one \`{<p>:subs}\` hash tag: ${r.subscriptions_hash_tag.subscriptions} subscription records, ${r.subscriptions_hash_tag.bytes_per_subscription} bytes each (MEMORY USAGE, a sample of 200), the due set ${r.subscriptions_hash_tag.due_set_bytes} bytes.`] : []),
    `- Gateway calls accepted: ${Object.entries(r.gateway.accepted_by_endpoint).map(([k, n]) => `${k} ${n}`).join(', ')}; refused for rate: ${r.gateway.rate_limited}.`,
    '',
    ...(r.rejudged ? [`- Re-judged ${r.rejudged.at} from the run's raw ledger and samples (\`bench/renewals/rejudge.js\`): ${r.rejudged.why}.`, ''] : []),
    '![renewals](renewals.svg)',
    '',
  ].join('\n');
}

function writeReport(result, out) {
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'renewals.json'), `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'renewals.md'), renderMd(result));
  fs.writeFileSync(path.join(out, 'renewals.svg'), renderSvg(result));
}

module.exports = { writeReport, renderSvg, renderMd };
