'use strict';
/** The summary's chart as a self-made SVG (no browser, no network): throughput, latency, and the budget. */

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const COLORS = { tokengate: '#2b6cb0', naive: '#dd6b20', direct: '#718096', p50: '#63b3ed', p99: '#2c5282', over: '#c53030', ok: '#2f855a' };

function text(x, y, s, opts = {}) {
  const { size = 12, anchor = 'start', weight = 'normal', fill = '#1a202c' } = opts;
  return `<text x="${x}" y="${y}" font-family="sans-serif" font-size="${size}" text-anchor="${anchor}" font-weight="${weight}" fill="${fill}">${esc(s)}</text>`;
}

function rect(x, y, w, h, fill) {
  return `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(0, w).toFixed(1)}" height="${Math.max(0, h).toFixed(1)}" fill="${fill}"/>`;
}

/** Horizontal bars: rows of {label, value, color, note}. */
function hbars(x, y, width, title, rows, unit) {
  const max = Math.max(...rows.map((r) => r.value), 1);
  const labelW = 90;
  const barW = width - labelW - 90;
  const out = [text(x, y, title, { size: 14, weight: 'bold' })];
  rows.forEach((r, i) => {
    const yy = y + 16 + i * 30;
    out.push(text(x, yy + 15, r.label));
    out.push(rect(x + labelW, yy, (r.value / max) * barW, 20, r.color));
    out.push(text(x + labelW + (r.value / max) * barW + 6, yy + 15, `${r.value} ${unit}${r.note ? ` ${r.note}` : ''}`, { size: 11 }));
  });
  return out.join('\n');
}

/** Grouped vertical bars: groups of {label, bars: [{name, value, color}]}. */
function vgroups(x, y, width, height, title, groups, unit, refLine) {
  const all = groups.flatMap((g) => g.bars.map((b) => b.value)).concat(refLine ? [refLine.value] : []);
  const max = Math.max(...all, 1) * 1.15;
  const top = y + 20;
  const bottom = y + height - 30;
  const plotH = bottom - top;
  const out = [text(x, y, title, { size: 14, weight: 'bold' })];
  out.push(`<line x1="${x}" y1="${bottom}" x2="${x + width}" y2="${bottom}" stroke="#a0aec0"/>`);
  const gw = width / groups.length;
  groups.forEach((g, gi) => {
    const bw = Math.min(40, (gw - 20) / g.bars.length);
    const gx = x + gi * gw + (gw - bw * g.bars.length) / 2;
    g.bars.forEach((b, bi) => {
      const h = (b.value / max) * plotH;
      out.push(rect(gx + bi * bw, bottom - h, bw - 4, h, b.color));
      out.push(text(gx + bi * bw + (bw - 4) / 2, bottom - h - 4, `${b.value}`, { size: 10, anchor: 'middle' }));
    });
    out.push(text(x + gi * gw + gw / 2, bottom + 16, g.label, { size: 11, anchor: 'middle' }));
  });
  if (refLine) {
    const ry = bottom - (refLine.value / max) * plotH;
    out.push(`<line x1="${x}" y1="${ry.toFixed(1)}" x2="${x + width}" y2="${ry.toFixed(1)}" stroke="#c53030" stroke-dasharray="5,4"/>`);
    out.push(text(x + width, ry - 4, refLine.label, { size: 10, anchor: 'end', fill: '#c53030' }));
  }
  const legend = groups[0].bars.map((b, i) => `${rect(x + i * 110, bottom + 24, 10, 10, b.color)}${text(x + i * 110 + 14, bottom + 33, b.name, { size: 10 })}`);
  out.push(...legend);
  return out.join('\n');
}

function renderChart(r) {
  const o = r.overhead;
  const W = 960;
  const H = 620;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    text(20, 28, `tokengate benchmark — ${r.started_at.slice(0, 16).replace('T', ' ')} UTC, ${r.machine.cores} cores, node ${r.machine.node}${r.quick ? ' (QUICK smoke run)' : ''}`, { size: 15, weight: 'bold' }),
    hbars(20, 64, 440, `Sale throughput, ${o.connections} connections (req/s)`, [
      { label: 'direct', value: o.direct_rps, color: COLORS.direct },
      { label: 'naive proxy', value: o.naive_rps, color: COLORS.naive },
      { label: 'tokengate', value: o.tokengate_rps, color: COLORS.tokengate, note: `(ratio ${o.ratio})` },
    ], 'req/s'),
    vgroups(500, 64, 440, 230, 'Sale latency (ms)', [
      { label: 'direct', bars: [{ name: 'p50', value: o.direct_p50_ms, color: COLORS.p50 }, { name: 'p99', value: o.direct_p99_ms, color: COLORS.p99 }] },
      { label: 'naive proxy', bars: [{ name: 'p50', value: o.naive_p50_ms, color: COLORS.p50 }, { name: 'p99', value: o.naive_p99_ms, color: COLORS.p99 }] },
      { label: 'tokengate', bars: [{ name: 'p50', value: o.p50_ms, color: COLORS.p50 }, { name: 'p99', value: o.p99_ms, color: COLORS.p99 }] },
    ], 'ms'),
  ];
  const names = { tokengate: 'tokengate', ratelimiter_flexible: 'rate-limiter-flexible', token_bucket: 'token bucket' };
  const b = r.budget;
  const limit = b.tokengate.limit;
  parts.push(
    vgroups(20, 350, 440, 240, `Budget: most calls in any ${r.budget_setup.window_ms} ms at the gateway`, Object.keys(names).map((k) => ({
      label: names[k],
      bars: [{ name: 'peak in window', value: b[k].peak_in_window, color: b[k].peak_in_window > limit ? COLORS.over : COLORS.ok }],
    })), 'calls', { value: limit, label: `limit N = ${limit}` }),
    vgroups(500, 350, 440, 240, 'Budget: upstream 429s and queue wait p99 (s)', Object.keys(names).map((k) => ({
      label: names[k],
      bars: [
        { name: 'upstream 429s', value: b[k].upstream_429, color: COLORS.over },
        { name: 'wait p99 (s)', value: Math.round(b[k].queue_wait_p99_ms / 100) / 10, color: COLORS.p99 },
      ],
    })), ''),
    '</svg>',
  );
  return parts.join('\n') + '\n';
}

module.exports = { renderChart, text, rect, hbars, vgroups, esc, COLORS };
