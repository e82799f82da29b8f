'use strict';
/**
 * The renewals bench's verdicts, from the sandbox's ledger alone (every sale it processed, with its invoice,
 * its card, whether it was sent recurring and when, by the sandbox's clock) and what the bench did (which
 * subscription has which invoice prefix and anchor, which cards were removed and which subscriptions canceled,
 * and when, by the same clock). Pure: bench/renewals.js passes the data in.
 */

const DAY_MS = 86_400_000;
const dayName = (ms) => new Date(ms).toISOString().slice(0, 10);

/** Period n's due date: the anchor plus n months, clamped to the month's last day (docs/subscriptions.md). */
function dueOf(anchorMs, n) {
  const a = new Date(anchorMs);
  const y = a.getUTCFullYear();
  const m = a.getUTCMonth() + n;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(a.getUTCDate(), last));
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/**
 * @param {object} input
 * @param {object[]} input.transactions the sandbox's ledger (GET /_sandbox/transactions)
 * @param {string} input.endpointKey the subscribed merchant's endpoint key (the A side)
 * @param {Map<string, object>} input.subs invoice prefix -> { key, anchorMs, pmkey, kind, canceledAtMs }
 * @param {Map<string, number>} input.removed pmkey -> when its DELETE answered (sandbox clock)
 * @param {number} input.endMs the month's end (sandbox clock): periods due before it are expected
 */
function judgeRenewals({ transactions, endpointKey, subs, removed, endMs }) {
  const attempts = new Map(); // `${prefix}-${n}` -> ledger entries, in time order
  let foreignRecurring = 0;
  for (const t of transactions) {
    if (t.endpointKey !== endpointKey || !t.recurring) continue;
    const m = /^(.+)-(\d+)$/.exec(t.invoice ?? '');
    if (!m || !subs.has(m[1])) { foreignRecurring++; continue; }
    const list = attempts.get(t.invoice) ?? [];
    list.push(t);
    attempts.set(t.invoice, list);
  }
  for (const list of attempts.values()) list.sort((a, b) => a.time - b.time);

  let chargedTwice = 0;
  let onRemoved = 0;
  let afterCancel = 0;
  let hardRetried = 0;
  const late = [];
  const spilledDays = new Map(); // due day -> periods first tried on a later day
  const byDay = new Map(); // day -> { due, first_attempts, approved }
  const day = (d) => byDay.get(d) ?? byDay.set(d, { due: 0, first_attempts: 0, approved: 0, retries: 0 }).get(d);
  const details = { twice: [], removed: [], canceled: [], missing: [] };
  let expected = 0;
  let missing = 0;
  let stoppedBeforeTried = 0;
  const soft = { periods: 0, recovered: 0 };

  for (const [prefix, s] of subs) {
    for (let n = 0; ; n++) {
      const due = dueOf(s.anchorMs, n);
      if (due >= endMs) break;
      const invoice = `${prefix}-${n + 1}`;
      const list = attempts.get(invoice) ?? [];
      const approved = list.filter((t) => t.result_code === 'A');
      if (approved.length > 1) {
        chargedTwice += approved.length - 1;
        if (details.twice.length < 10) details.twice.push(`${s.key} period ${n}: ${approved.map((t) => t.key).join(', ')}`);
      }
      for (const t of approved) {
        const removedAt = t.pmkey ? removed.get(t.pmkey) : undefined;
        if (removedAt !== undefined && t.time > removedAt) {
          onRemoved++;
          if (details.removed.length < 10) details.removed.push(`${t.key} on ${t.pmkey} at ${new Date(t.time).toISOString()}, removed ${new Date(removedAt).toISOString()}`);
        }
        if (s.canceledAtMs !== undefined && t.time > s.canceledAtMs) {
          afterCancel++;
          if (details.canceled.length < 10) details.canceled.push(`${t.key} of ${s.key} at ${new Date(t.time).toISOString()}, canceled ${new Date(s.canceledAtMs).toISOString()}`);
        }
      }
      if (s.kind === 'hard' && list.length > 1) hardRetried += list.length - 1;
      // Only what tokengate was to charge is judged late or untried by the end: not a canceled one after its cancel, not a
      // removed card's after the removal (guarantee 10: no call at all), not a hard-declined card after its decline.
      const stopped = (s.canceledAtMs !== undefined && s.canceledAtMs <= due)
        || (removed.has(s.pmkey) && removed.get(s.pmkey) <= due)
        || (s.kind === 'hard' && n > 0);
      const d = day(dayName(due));
      if (stopped) continue;
      d.due++;
      expected++;
      // Stopped after it fell due and before it was reached (a removal or a cancel answered during the 1st's
      // renewals): never to be charged, so not untried, and late only until it was stopped.
      const stoppedAt = Math.min(s.canceledAtMs ?? Infinity, removed.get(s.pmkey) ?? Infinity);
      if (list.length === 0 && stoppedAt < endMs) {
        stoppedBeforeTried++;
        late.push(stoppedAt - due);
        continue;
      }
      if (list.length === 0) {
        missing++;
        late.push(endMs - due); // late at least until the month's end: counted, so the percentiles are not flattered
        if (details.missing.length < 10) details.missing.push(`${s.key} period ${n} due ${new Date(due).toISOString()}`);
        continue;
      }
      const first = list[0];
      late.push(first.time - due);
      day(dayName(first.time)).first_attempts++;
      if (dayName(first.time) !== dayName(due)) spilledDays.set(dayName(due), (spilledDays.get(dayName(due)) ?? 0) + 1);
      for (const t of list.slice(1)) day(dayName(t.time)).retries++;
      for (const t of approved) day(dayName(t.time)).approved++;
      if (s.kind === 'soft') {
        soft.periods++;
        if (approved.length > 0 && list.length > 1) soft.recovered++;
      }
    }
  }
  late.sort((a, b) => a - b);
  const hours = (ms) => (ms === null ? null : Math.round((ms / 3_600_000) * 100) / 100);
  return {
    expected_periods: expected,
    periods_charged_twice: chargedTwice,
    charges_on_removed_cards: onRemoved,
    charges_after_cancel: afterCancel,
    hard_declines_retried_on_same_card: hardRetried,
    periods_never_tried: missing,
    periods_stopped_before_tried: stoppedBeforeTried,
    late_hours: { p50: hours(percentile(late, 0.5)), p99: hours(percentile(late, 0.99)), max: hours(late.length ? late[late.length - 1] : null) },
    late_over_1h: late.filter((ms) => ms > 3_600_000).length,
    spilled_days: Object.fromEntries([...spilledDays].sort()),
    soft_declines: soft,
    foreign_recurring: foreignRecurring,
    by_day: Object.fromEntries([...byDay].sort()),
    details,
  };
}

/** p50, p99 and max of answer times (ms), with how many there were and how many were not approved. */
function answerTimes(xs) {
  const ms = xs.map((s) => s.ms).sort((a, b) => a - b);
  return { count: xs.length, p50_ms: percentile(ms, 0.5), p99_ms: percentile(ms, 0.99), max_ms: ms.length ? ms[ms.length - 1] : null, not_approved: xs.filter((s) => s.status !== 201).length };
}

/**
 * Checkouts' answer times on each side of the A/B, ms: over the whole run, and outside the fault windows (a
 * checkout is inside one when it was in flight at any moment of it: started before the window's end and answered
 * after its start). The windows are the SIGKILL's (kill to the replica back plus the write lease, which a write
 * in flight on the killed replica waits out), so "with renewals beside without" is not swamped by the fault.
 * @param {{ side: string, ms: number, status: number, startedAt?: number, answeredAt?: number }[]} samples wall-clock ms
 * @param {{ from: number, to: number }[]} [windows] wall-clock ms
 */
function judgeCheckouts(samples, windows = []) {
  const inWindow = (s) => windows.some((w) => s.startedAt !== undefined && s.answeredAt !== undefined && s.startedAt < w.to && s.answeredAt > w.from);
  const out = {};
  for (const side of ['with_renewals', 'without_renewals']) {
    const xs = samples.filter((s) => s.side === side);
    const outside = xs.filter((s) => !inWindow(s));
    out[side] = { ...answerTimes(xs), outside_faults: { ...answerTimes(outside), in_windows: xs.length - outside.length } };
  }
  return out;
}

module.exports = { judgeRenewals, judgeCheckouts, dueOf, percentile, DAY_MS, dayName };
