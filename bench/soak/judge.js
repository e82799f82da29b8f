'use strict';
/**
 * The soak's verdict, from the sandbox's ledger and tokengate's own answers (never from tokengate's metrics):
 * double charges, money beyond its bounds, follow-ups and refunds sent twice, a removed card charged, keys that replay
 * something else, outcomes still unknown after the deadline, card data in logs or Redis, Redis bytes per sale,
 * RSS growth per replica.
 */
const fs = require('node:fs');
const path = require('node:path');
const Redis = require('ioredis');

const cents = (s) => Math.round(Number(s ?? 0) * 100);

/** JSON with sorted object keys: two answers are the same answer when these strings are equal. */
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** Which top-level fields differ between two answers (for the report: what a replay changed). */
function differing(a, b) {
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return ['(whole body)'];
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonical(a[k]) !== canonical(b[k]));
}

/**
 * Every sale and authorization the gateway processed for the soak's invoices, grouped: more than one approved
 * charge per invoice is a double charge (each invoice is one Idempotency-Key's). Answers that disagree with
 * the ledger (a 201 naming a sale the gateway does not have, a refusal where the gateway charged) are counted too.
 */
function judgeLedger({ entries, transactions, operations, keys, invoicePrefix, removed }) {
  const byInvoice = new Map();
  for (const e of entries) {
    if ((e.kind !== 'sale' && e.kind !== 'authonly') || !String(e.invoice ?? '').startsWith(invoicePrefix)) continue;
    if (!byInvoice.has(e.invoice)) byInvoice.set(e.invoice, []);
    byInvoice.get(e.invoice).push(e);
  }
  let doubleCharges = 0;
  const doubles = [];
  for (const [invoice, list] of byInvoice) {
    const charged = list.filter((e) => e.result_code !== 'D');
    if (charged.length > 1) {
      doubleCharges += charged.length - 1;
      doubles.push(invoice);
    }
  }

  let beyondBounds = 0;
  const beyond = [];
  for (const e of entries) {
    if (e.kind !== 'sale' && e.kind !== 'authonly') continue;
    // A void moves no money (the ledger then shows nothing authorized). A refund:adjust lowers both what is
    // authorized and what is captured (sandbox follow-ups.ts); refunds of a settled sale come out of captured.
    if (e.voided || e.state === 'voided') continue;
    const over = cents(e.captured) > cents(e.authorized) || cents(e.refunded) > cents(e.captured);
    if (over) {
      beyondBounds++;
      beyond.push(`${e.key} ${e.kind} ${e.state}: authorized ${e.authorized}, captured ${e.captured}, adjusted ${e.adjusted}, refunded ${e.refunded}`);
    }
  }

  const byKey = new Map(entries.map((e) => [e.key, e]));
  let disagreements = 0;
  const disagree = [];
  for (const rec of keys.values()) {
    if ((rec.op !== 'sale' && rec.op !== 'authorize') || !rec.final) continue;
    const invoice = rec.body?.invoice;
    const charged = (byInvoice.get(invoice) ?? []).filter((e) => e.result_code !== 'D');
    const { status, body } = rec.final;
    const ok = status === 201 ? Boolean(body?.key && byKey.get(body.key) && byKey.get(body.key).invoice === invoice && byKey.get(body.key).result_code !== 'D')
      : status === 402 ? charged.length === 0
        : charged.length === 0;
    if (!ok) {
      disagreements++;
      disagree.push(`${rec.key}: answered ${status}, gateway charged ${charged.length}`);
    }
  }

  // Follow-ups the gateway carried out more than once for one transaction (eight voids of one sale: issue 28).
  const voids = new Map();
  for (const op of operations) {
    if (op.result_code !== 'A' || !/void/.test(op.command) || op.folded) continue;
    voids.set(op.trankey, (voids.get(op.trankey) ?? 0) + 1);
  }
  const followupsTwice = [...voids.values()].reduce((s, n) => s + Math.max(0, n - 1), 0);

  // Refunds the gateway carried out beyond one per Idempotency-Key (issue 42: a lost refund answer proven absent
  // on an undocumented field, then sent again): per sale, approved refund commands (refund, creditvoid,
  // refund:adjust; folded duplicates move nothing) beyond the refund keys the soak sent for it.
  const refundKeys = new Map();
  for (const rec of keys.values()) {
    const sale = rec.op === 'refund' ? /^\/v1\/sales\/([^/]+)\/refunds$/.exec(rec.path ?? '')?.[1] : undefined;
    if (sale) refundKeys.set(sale, (refundKeys.get(sale) ?? 0) + 1);
  }
  const refundsMade = new Map();
  const refundOps = new Map();
  for (const op of operations) {
    if (op.result_code !== 'A' || op.folded || !/^(refund|creditvoid|refund:adjust)$/.test(op.command)) continue;
    refundsMade.set(op.trankey, (refundsMade.get(op.trankey) ?? 0) + 1);
    refundOps.set(op.trankey, [...(refundOps.get(op.trankey) ?? []), `${op.command} ${op.amount ?? ''} ${op.createdKey ?? ''}`.trim()]);
  }
  const refundsTwice = [...refundsMade].reduce((s, [sale, n]) => s + Math.max(0, n - (refundKeys.get(sale) ?? 0)), 0);
  // Which sales, with what the gateway carried out and how many keys the soak sent: a failed run says where to look.
  const twice = [...refundsMade].filter(([sale, n]) => n > (refundKeys.get(sale) ?? 0)).map(([sale]) => `${sale}: ${refundKeys.get(sale) ?? 0} keys, ${refundOps.get(sale).join(', ')}`);

  // Guarantee 10: no charge on a removed card after its removal answered.
  const removedAt = new Map(removed.map((r) => [r.pmkey, r.at]));
  const removedCharged = transactions.filter((t) => t.pmkey && removedAt.has(t.pmkey) && t.time > removedAt.get(t.pmkey) && t.result_code !== 'D').length;

  return { doubleCharges, doubles: doubles.slice(0, 10), beyondBounds, beyond: beyond.slice(0, 10), disagreements, disagree: disagree.slice(0, 10), followupsTwice, refundsTwice, twice: twice.slice(0, 10), removedCharged, invoices: byInvoice.size };
}

/**
 * Money views against the ledger (issue 36): of the sales tokengate answered, each one standing at the gateway
 * (not voided, not declined) must read in tokengate's own view as refunded exactly what the gateway refunded:
 * its refunds less the voided ones, plus what refund:adjust took off before settlement. `views` maps a sale key
 * to tokengate's answer to `GET /v1/sales/{key}` ({status, body}).
 */
function judgeMoneyViews(entries, views) {
  const byKey = new Map(entries.map((e) => [e.key, e]));
  let disagree = 0;
  const diffs = [];
  let judged = 0;
  for (const [key, res] of views) {
    const e = byKey.get(key);
    if (!e || e.voided || e.state === 'voided' || e.result_code === 'D') continue;
    judged++;
    const there = cents(e.refunded) + cents(e.adjusted);
    if (res.status !== 200 || cents(res.body?.amount_refunded) !== there) {
      disagree++;
      if (diffs.length < 10) diffs.push(`${key}: tokengate ${res.status} ${res.body?.amount_refunded}, ledger refunded ${e.refunded} + adjusted ${e.adjusted}`);
    }
  }
  return { disagree, diffs, judged };
}

/** A regex that finds any of `numbers`, whole, with or without separators between the digits. */
function cardPattern(numbers) {
  const alts = [...new Set(numbers)].map((n) => n.split('').join('[\\s\\-.]{0,3}'));
  return new RegExp(`(?<![0-9])(?:${alts.join('|')})(?![0-9])`, 'g');
}

function scanText(text, pattern, where, found) {
  pattern.lastIndex = 0;
  for (const m of text.matchAll(pattern)) found.push(`${where}: …${m[0].slice(-4)}`);
}

/** Every line tokengate wrote (each replica generation's whole log file). */
function scanLogs(logDir, pattern) {
  const found = [];
  let bytes = 0;
  for (const f of fs.readdirSync(logDir).filter((n) => n.startsWith('replica-'))) {
    const text = fs.readFileSync(path.join(logDir, f), 'utf8');
    bytes += text.length;
    scanText(text, pattern, f, found);
  }
  return { found, bytes };
}

/** A key's family for the memory breakdown: its first two segments (`tg:idem`, `tg:sale`, …). */
const familyOf = (key) => key.replace(/[{}]/g, '').split(':').slice(0, 2).join(':');

/** Every value of every key in Redis, whatever its type; and the bytes each family of keys takes (MEMORY USAGE). */
async function scanRedis(url, pattern) {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  const found = [];
  const bytesByFamily = {};
  let keys = 0;
  try {
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      const types = await Promise.all(batch.map((k) => redis.type(k)));
      const values = await Promise.all(batch.map((k, i) => {
        switch (types[i]) {
          case 'string': return redis.get(k);
          case 'hash': return redis.hgetall(k);
          case 'list': return redis.lrange(k, 0, -1);
          case 'set': return redis.smembers(k);
          case 'zset': return redis.zrange(k, 0, -1, 'WITHSCORES');
          case 'stream': return redis.xrange(k, '-', '+');
          default: return null;
        }
      }));
      const sizes = await Promise.all(batch.map((k) => redis.memory('USAGE', k, 'SAMPLES', '0')));
      batch.forEach((k, i) => {
        scanText(`${k} ${JSON.stringify(values[i])}`, pattern, `redis ${types[i]} ${k.slice(0, 40)}`, found);
        const f = familyOf(k);
        bytesByFamily[f] = (bytesByFamily[f] ?? 0) + Number(sizes[i] ?? 0);
      });
      keys += batch.length;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return { found, keys, bytesByFamily };
}

/** Least-squares slope of (t seconds, y) in y per hour. */
function slopePerHour(points) {
  const n = points.length;
  if (n < 3) return NaN;
  const mt = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [t, y] of points) {
    num += (t - mt) * (y - my);
    den += (t - mt) ** 2;
  }
  return den === 0 ? NaN : (num / den) * 3600;
}

/**
 * Memory growth of each replica slot (RSS, or the JS heap in use): per process (a restart begins a new one), the
 * samples after its warm-up (its first quarter, at least 60 s), reduced to the lowest of each `windowS` (the floor
 * a garbage collection leaves: a sawtooth's peaks say when the collector ran, not what is kept), then a
 * least-squares slope; the longest such series of the slot decides, if it spans `minSpanS`.
 */
function memoryGrowth(series, minSpanS, windowS = 120) {
  const out = {};
  const spans = {};
  for (const [slot, processes] of Object.entries(series)) {
    let best;
    for (const points of processes) {
      if (points.length < 3) continue;
      const t0 = points[0][0];
      const span = points[points.length - 1][0] - t0;
      const warm = Math.max(60, span / 4);
      const after = points.filter(([t]) => t - t0 >= warm);
      if (after.length < 3) continue;
      const s = after[after.length - 1][0] - after[0][0];
      const floors = new Map();
      for (const p of after) {
        const w = Math.floor((p[0] - after[0][0]) / windowS);
        if (!floors.has(w) || p[1] < floors.get(w)[1]) floors.set(w, p);
      }
      if (!best || s > best.span) best = { span: s, slope: slopePerHour([...floors.values()]) };
    }
    out[slot] = best && best.span >= minSpanS ? Math.round(best.slope * 10) / 10 : null;
    spans[slot] = best ? Math.round(best.span) : 0;
  }
  return { growth: out, spans };
}

/**
 * Settlements (issue 39), judged from the sandbox's ledger: every sale of tokengate's that went into a batch (the
 * ledger names its batch; a voided one is listed there as a void) must be `matched` in exactly one settlement, and
 * every fault injected into a batch (faults.js, settlement_console) must show as the verdict it should.
 * `settlements` are the kept ones with their lines; `saleKeys` the load's sales.
 */
function judgeSettlements({ settlements, entries, saleKeys, injected }) {
  const linesOf = new Map();
  for (const s of settlements) {
    for (const line of s.lines) {
      // A sale's line is its own transaction; a credit (a refund, a voided one) is another transaction.
      const key = line.transaction;
      if (!linesOf.has(key)) linesOf.set(key, []);
      linesOf.get(key).push({ batch: s.batch, ...line });
    }
  }
  const wrong = [];
  let judged = 0;
  let judgedReturns = 0;
  for (const e of entries) {
    if (!saleKeys.has(e.key) || e.result_code === 'D' || !e.batch) continue;
    judged++;
    const lines = linesOf.get(e.key) ?? [];
    // A bank payment the bank returned (the ledger's ACH status R): its line says so (issue 39: a return after the
    // batch changes the line), `amount_differs` for what the bank took back; any other bank payment is matched.
    const returned = e.ach?.status === 'R';
    const fits = (l) => (returned ? l.verdict === 'amount_differs' && l.bank === 'returned' : l.verdict === 'matched');
    if (returned) judgedReturns++;
    if (lines.length !== 1 || !fits(lines[0])) wrong.push(`${e.key}: ${lines.length ? lines.map((l) => `${l.verdict}${l.bank ? ` (bank ${l.bank})` : ''} in ${l.batch}`).join(', ') : 'in no settlement'}${returned ? ' (returned by the bank)' : ''}`);
  }
  for (const f of injected) {
    const lines = linesOf.get(f.transaction) ?? [];
    if (lines.length !== 1 || lines[0].verdict !== f.verdict) wrong.push(`${f.what} (${f.transaction}): expected ${f.verdict}, got ${lines.map((l) => l.verdict).join(', ') || 'no line'}`);
  }
  return { wrong, judged, returned: judgedReturns, injected: injected.length, lines: [...linesOf.values()].reduce((n, l) => n + l.length, 0) };
}

module.exports = { canonical, differing, judgeLedger, judgeMoneyViews, judgeSettlements, cardPattern, scanLogs, scanRedis, memoryGrowth, slopePerHour };
