'use strict';
/**
 * The renewals bench's merchant: customers with one stored card each and several subscriptions on it (anchors
 * skewed to the 1st of the month), the shoppers who check out through each day, and the two clocks (tokengate's
 * `POST /test/clock`, the sandbox's `POST /_sandbox/clock`) moved together so a month passes in minutes.
 */
const jwt = require('jsonwebtoken');
const { sleep } = require('../lib/procs');

const APPROVED_CARD = '4000100011112224';

function tokenMaker(creds, ttlS) {
  return (claims) => jwt.sign(claims, creds.jwtSecret, { algorithm: 'HS256', expiresIn: ttlS, issuer: creds.issuer, audience: creds.audience });
}

/**
 * The anchor day (1-31 of the month) of subscription i of n: `onFirst` of them on the 1st, the rest spread over
 * the month (the 31st included, so a month's end is met), deterministic so a rerun has the same shape.
 */
function anchorDay(i, n, onFirst) {
  if (i < Math.round(n * onFirst)) return 1;
  return 2 + ((i * 7919) % 30);
}

/**
 * A customer with one approved card, created through tokengate (its view then holds the card: renewals read no
 * wallet). The card is added with the shopper's own token, as a checkout's account page would: the reads it
 * costs are that shopper's, not one caller's (LIMITER_CALLER_DAY_SHARE would hold a single caller to a tenth).
 */
async function customerWithCard(client, sandboxUrl, publicKey, internal, tag, token) {
  const c = await client.write('customer', 'POST', '/v1/customers', { token: internal, body: { customerid: tag, company: 'Renewals bench' }, key: `c-${tag}`, patienceMs: 300_000 });
  if (c.status !== 201) throw new Error(`renewals: creating a customer answered ${c.status} ${JSON.stringify(c.body?.error ?? {})}`);
  const pk = await fetch(`${sandboxUrl}/js/v2/payment_key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: publicKey, card: { number: APPROVED_CARD, expiration: '1230', cvc: '123' } }) });
  const paymentKey = (await pk.json()).payment_key;
  const shopper = token({ sub: `shopper-${tag}`, custkey: c.body.key, scope: 'payment_methods:read payment_methods:write' });
  const pm = await client.write('add_card', 'POST', `/v1/customers/${c.body.key}/payment_methods`, { token: shopper, body: { payment_key: paymentKey, method_name: 'Plan card' }, key: `pm-${tag}`, patienceMs: 300_000 });
  if (pm.status !== 201) throw new Error(`renewals: keeping a card answered ${pm.status} ${JSON.stringify(pm.body?.error ?? {})}`);
  return { custkey: c.body.key, pmkey: pm.body.key };
}

/**
 * The two clocks, moved together toward `simAt(wall)` every `tickMs`: tokengate's (through any live replica's
 * admin port; Redis shares it) and the sandbox's. Each keeps its own offset, so a replica or Redis away for a
 * moment only delays tokengate's, which catches up on the next tick. `onTick` is awaited before the next move:
 * what it does (a cancel, a removal) happens with the clocks still, so its time by the sandbox's clock is exact.
 */
class Clocks {
  constructor({ slots, sandbox, simStartMs, rate, tickMs = 250 }) {
    Object.assign(this, { slots, sandbox, simStartMs, rate, tickMs });
    this.tg = 0;
    this.sb = 0;
    this.running = false;
  }

  desiredOffset(now = Date.now()) {
    return this.simStartMs + (now - this.wallStart) * this.rate - now;
  }

  /** The sandbox's time now (its offset is the bench's: only the bench moves it). */
  sandboxNow() {
    return Date.now() + this.sb;
  }

  async moveTo(offset) {
    const dTg = Math.floor(offset - this.tg);
    if (dTg > 0) {
      for (const s of this.slots.filter((x) => x.up)) {
        try {
          const res = await fetch(`${s.adminUrl()}/test/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advance_ms: dTg }), signal: globalThis.AbortSignal.timeout(3000) });
          if (res.ok) { this.tg += dTg; break; }
        } catch { /* another replica, or the next tick */ }
      }
    }
    const dSb = Math.floor(offset - this.sb);
    if (dSb > 0) {
      await this.sandbox.admin('POST', 'clock', { advance_ms: dSb });
      this.sb += dSb;
    }
  }

  /** Both clocks to `simMs` now, before the run (setup). */
  async jumpTo(simMs) {
    await this.moveTo(simMs - Date.now());
  }

  start(onTick) {
    this.wallStart = Date.now();
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await this.moveTo(this.desiredOffset()).catch(() => undefined);
        await onTick(Date.now() + this.sb);
        await sleep(this.tickMs);
      }
    })();
  }

  async stop() {
    this.running = false;
    await this.loop;
  }
}

module.exports = { tokenMaker, anchorDay, customerWithCard, Clocks, APPROVED_CARD };
