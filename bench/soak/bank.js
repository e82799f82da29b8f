'use strict';
/**
 * Bank payments in the soak (issue 38): the ACH clock that moves them, the check form's payment key, and the
 * judge of returns from the sandbox's ledger.
 *
 * A bank payment waits on dates, not on calls: pending until the gateway's 5 pm (Pacific) cut-off, settled the next
 * morning, a return test account returned on the third day after (src/sandbox/README.md, "ACH"). A run of minutes
 * sees none of that on the wall clock, so the soak moves time: the sandbox's clock (`POST /_sandbox/clock`, which
 * drives its ACH clock and sends the ach.* webhooks) and tokengate's (`POST /test/clock` on a replica's admin port;
 * the replicas share it through Redis), always together and only forward. 12 hours a jump during the load (each
 * jump crosses at most one of the cut-off and the next morning, so payments are seen submitted, then settled), and
 * one jump of five days when the load stops, so every payment of the run reaches its end (the last ones made
 * returned too) while the soak's calm wait runs anyway: the returns add no wall time beyond their events' delivery.
 */

/** A routing number that passes the ABA check (the sandbox's and the tests' usual one). */
const ROUTING = '011000015';
/** The return test accounts (gateway-facts.md, ACH): 10178101 … 10178116 return R01 … R16. */
const RETURN_ACCOUNTS = Array.from({ length: 16 }, (_, i) => String(10178101 + i));
/** The shopper's "I agree", sent with every bank payment (contract: required, recorded with the sale). */
const AGREED = 'I authorize the merchant to debit my bank account once for this amount (soak).';
const HOUR_MS = 3_600_000;
/** A jump during the load: shorter than the 15 hours from the cut-off to the next morning. */
const STEP_MS = 12 * HOUR_MS;
/** The jump when the load stops: past the third morning after the last cut-off a payment of the run can wait for. */
const FINAL_MS = 5 * 24 * HOUR_MS;

/** An ordinary account number (8 digits), never one of the return accounts. */
function ordinaryAccount() {
  return String(20000000 + Math.floor(Math.random() * 70000000));
}

/** A bank payment key as the Pay.js check form mints it: the account goes to the gateway only. */
async function checkPaymentKey(sandboxUrl, publicKey, account) {
  const res = await fetch(`${sandboxUrl}/js/v2/payment_key`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ public_key: publicKey, check: { accountholder: 'Soak Shopper', routing: ROUTING, account, account_type: 'checking' } }),
  });
  const body = await res.json();
  if (res.status !== 200 || !body.payment_key) throw new Error(`check payment key: ${res.status}`);
  return body.payment_key;
}

/**
 * Both clocks, moved together: the sandbox's first (its ACH clock steps and sends the webhooks), then tokengate's
 * through the first replica that answers (a replica may be down for a fault). Each jump is kept for the report.
 */
class AchClock {
  constructor({ sandbox, slots }) {
    this.sandbox = sandbox;
    this.slots = slots;
    this.jumps = [];
    this.movedMs = 0;
  }

  async jump(ms, why) {
    const started = Date.now();
    const sandboxNow = (await this.sandbox.admin('POST', 'clock', { advance_ms: ms })).now;
    let tokengateNow = null;
    for (const s of this.slots.filter((x) => x.up)) {
      try {
        const res = await fetch(`${s.adminUrl()}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: ms }), signal: globalThis.AbortSignal.timeout(5000) });
        if (res.status === 200) {
          tokengateNow = (await res.json()).now;
          break;
        }
      } catch {
        // the next replica
      }
    }
    if (tokengateNow === null) throw new Error('ach clock: no replica moved tokengate\'s clock');
    this.movedMs += ms;
    this.jumps.push({ at: new Date(started).toISOString(), hours: ms / HOUR_MS, why, sandbox_now: sandboxNow, tokengate_now: tokengateNow, took_ms: Date.now() - started });
  }

  /** Jumps STEP_MS every `everyMs` until `stopAt` (wall clock); errors go to `onError`, the loop goes on. */
  async drive(everyMs, stopAt, onError) {
    for (let next = Date.now() + everyMs; next < stopAt; next += everyMs) {
      await new Promise((r) => setTimeout(r, next - Date.now()));
      await this.jump(STEP_MS, 'during the load').catch((err) => onError('ach clock', err));
    }
  }
}

/**
 * The returns, judged from the sandbox's ledger (its `ach` of each check): every bank payment of the run the
 * gateway returned must have had its `sale.returned` event delivered to the merchant, and no refund of it may have
 * reached the gateway once it was returned (refunded, credited back or refused there: tokengate must answer 409
 * `sale_not_refundable` itself). `bankSales` maps the soak's bank sale keys to what it sent; `seenSaleEvents` is the
 * receiver's set of `<type>:<sale key>`.
 */
function judgeReturns({ entries, operations, bankSales, seenSaleEvents }) {
  const returned = entries.filter((e) => bankSales.has(e.key) && e.ach?.status === 'R');
  const eventsMissing = returned.filter((e) => !seenSaleEvents.has(`sale.returned:${e.key}`)).map((e) => e.key);
  const returnedAt = new Map(returned.map((e) => [e.key, e.ach.returned_at ?? Infinity]));
  const refundsAfter = operations.filter((op) => returnedAt.has(op.trankey) && /^(refund|creditvoid|refund:adjust)$/.test(op.command) && op.time >= returnedAt.get(op.trankey));
  const expectedReturns = [...bankSales.values()].filter((b) => b.returns).length;
  return {
    returned: returned.map((e) => e.key),
    expectedReturns,
    byStatus: entries.filter((e) => bankSales.has(e.key)).reduce((o, e) => ({ ...o, [e.ach?.status ?? '?']: (o[e.ach?.status ?? '?'] ?? 0) + 1 }), {}),
    eventsMissing,
    refundsAfterReturn: refundsAfter.map((op) => `${op.trankey} ${op.command} ${op.result_code}`),
  };
}

module.exports = { ROUTING, RETURN_ACCOUNTS, AGREED, STEP_MS, FINAL_MS, ordinaryAccount, checkPaymentKey, AchClock, judgeReturns };
