'use strict';
/**
 * A merchant's day, scaled: shoppers come back and pay with a stored card, authorize and capture, void (now and
 * then three voids of one sale at once, on three replicas: the follow-up hole of issue 28), get refunded by the
 * merchant's service, pay with a new card and keep it, add, rename, prefer and remove cards (and try to pay with
 * a removed one), new shoppers sign up, a few requests carry card numbers tokengate must refuse, and some pay by
 * bank account (issue 38: a check form's key and the shopper's authorization; a third of them with a return test
 * account, returned days later by the sandbox's ACH clock, bank/AchClock) and get part of it refunded. Visits start
 * at a fixed rate (an open loop), each by an idle shopper.
 */
const crypto = require('node:crypto');
const jwt = require('jsonwebtoken');
const { sleep } = require('./client');
const { RETURN_ACCOUNTS, AGREED, ordinaryAccount, checkPaymentKey } = require('./bank');

/** Cards a shopper types into the Pay.js form (gateway-facts.md test cards): mostly approved, one declined. */
const NEW_CARDS = ['4000100011112224', '4000100111112223', '5555444433332226', '6011222233332224', '371122223332225', '4000200111112221', '4000300611112224'];
/** The test cards that answer after 5 s and 15 s (Visa …2226, …2234): past the soak's gateway timeout on every try, so never picked. */
const slow = (pm) => pm.ccnum4last === '2234' || (pm.ccnum4last === '2226' && /^v/i.test(String(pm.card_type ?? '')));

const VISITS = [
  ['checkout', 50], ['auth_capture', 10], ['auth_void', 8], ['sale_refund', 8], ['new_card_sale', 7], ['new_shopper', 3],
  ['add_card', 3], ['remove_card', 3], ['edit_card', 4], ['unknown_sale', 3], ['card_data', 1],
  ['bank_sale', 6], ['bank_refund', 2],
];
/** The share of bank payments made from a return test account. */
const RETURN_SHARE = 0.35;
const WEIGHT = VISITS.reduce((s, [, w]) => s + w, 0);

function pickVisit() {
  let r = Math.random() * WEIGHT;
  for (const [name, w] of VISITS) if ((r -= w) < 0) return name;
  return 'checkout';
}

const money = (min, max) => (min + Math.random() * (max - min)).toFixed(2);
const any = (xs) => xs[Math.floor(Math.random() * xs.length)];

class Load {
  constructor({ client, sandbox, creds, ttlS, run }) {
    this.client = client;
    this.sandbox = sandbox;
    this.creds = creds;
    this.ttlS = ttlS;
    this.run = run;
    this.seq = 0;
    this.shoppers = [];
    this.internal = this.token({ sub: 'soak-merchant-service', scope: 'customers:write customers:any customers:read refunds:create sales:read sales:void sales:capture events:read payment_methods:read' });
    this.ops = {};
    this.removed = [];
    this.saleKeys = new Map();
    /** The run's approved bank payments: sale key -> {returns} (a return test account's or not). */
    this.bankSales = new Map();
    this.inflightVisits = new Set();
    this.skipped = 0;
  }

  token(claims) {
    return jwt.sign(claims, this.creds.jwtSecret, { algorithm: 'HS256', expiresIn: this.ttlS, issuer: this.creds.issuer, audience: this.creds.audience });
  }

  key(prefix) {
    return `${prefix}-${this.run}-${(this.seq++).toString(36)}`;
  }

  /** An invoice per sale (at most 10 characters, the gateway's field): the ledger's double-charge key. */
  invoice() {
    return `${this.run.slice(0, 3)}${(this.seq++).toString(36)}`.slice(0, 10);
  }

  op(name, ok) {
    const o = (this.ops[name] ??= { attempted: 0, succeeded: 0 });
    o.attempted++;
    if (ok) o.succeeded++;
  }

  shopper(custkey) {
    const s = { custkey, busy: false, pms: [], token: this.token({ sub: `soak-shopper-${custkey}`, custkey, scope: 'sales:create sales:read sales:void sales:capture payment_methods:read payment_methods:write customers:read' }) };
    this.shoppers.push(s);
    return s;
  }

  /**
   * The sandbox's fixture customers are the returning shoppers (they have stored cards already); `extra` new
   * ones are signed up first (their first visit pays with a new card), so visits rarely wait for an idle shopper.
   */
  async setup(extra) {
    const fixtures = await this.sandbox.admin('GET', 'fixtures');
    for (const c of fixtures) this.shopper(c.key);
    this.publicKey = (await this.client.send('GET', '/v1/payment-config', { token: this.internal })).body?.public_key;
    if (!this.publicKey) throw new Error('soak: no public key from /v1/payment-config');
    for (let i = 0; i < extra; i += 5) {
      await Promise.all(Array.from({ length: Math.min(5, extra - i) }, async () => {
        const res = await this.client.write('customer', 'POST', '/v1/customers', { token: this.internal, body: { customerid: this.key('cust'), company: 'Soak shopper' }, key: this.key('create') });
        if (res.status !== 201) throw new Error(`soak: creating a shopper answered ${res.status}`);
        this.shopper(res.body.key);
      }));
    }
  }

  async list(s) {
    const res = await this.client.send('GET', `/v1/customers/${s.custkey}/payment_methods`, { token: s.token });
    this.op('list_cards', res.status === 200);
    if (res.status === 200) s.pms = (res.body?.data ?? []).filter((pm) => !slow(pm));
    return res;
  }

  /** A payment key as the Pay.js iframe mints it: the card goes to the gateway only. */
  async paymentKey(number = any(NEW_CARDS)) {
    const res = await fetch(`${this.sandbox.url}/js/v2/payment_key`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ public_key: this.publicKey, card: { number, expiration: '1230', cvc: '123' } }),
    });
    const body = await res.json();
    if (res.status !== 200 || !body.payment_key) throw new Error(`payment key: ${res.status}`);
    return body.payment_key;
  }

  async sale(s, fields, { capture = true, patienceMs } = {}) {
    const key = this.key('sale');
    const invoice = this.invoice();
    const body = { customer: s.custkey, amount: money(1, 150), invoice, ...fields, ...(capture ? {} : { capture: false }) };
    const res = await this.client.write(capture ? 'sale' : 'authorize', 'POST', '/v1/sales', { token: s.token, body, key, patienceMs });
    const ok = res.status === 201;
    this.op(capture ? 'sale' : 'authorize', ok);
    if (ok && res.body?.key) this.saleKeys.set(res.body.key, { idempotencyKey: key, capture, custkey: s.custkey, result: res.body.result_code });
    return { ...res, key, invoice, body: res.body };
  }

  async visit(kind, s) {
    switch (kind) {
      case 'checkout': {
        await this.list(s);
        if (s.pms.length === 0) return this.visit('new_card_sale', s);
        const pm = s.pms.find((p) => p.default) ?? any(s.pms);
        const sale = await this.sale(s, { payment_method: pm.key });
        if (sale.status === 201) this.op('lookup', (await this.client.send('GET', `/v1/sales/${sale.body.key}`, { token: s.token })).status === 200);
        return;
      }
      case 'auth_capture': {
        await this.list(s);
        if (s.pms.length === 0) return;
        const auth = await this.sale(s, { payment_method: any(s.pms).key }, { capture: false });
        if (auth.status !== 201) return;
        const authorized = Number(auth.body.auth_amount ?? auth.body.amount);
        const amount = Math.random() < 0.5 ? undefined : money(0.5, authorized);
        const res = await this.client.write('capture', 'POST', `/v1/sales/${auth.body.key}/capture`, { token: s.token, body: amount ? { amount } : {}, key: this.key('capture') });
        this.op('capture', res.status === 200);
        return;
      }
      case 'auth_void': {
        await this.list(s);
        if (s.pms.length === 0) return;
        const auth = await this.sale(s, { payment_method: any(s.pms).key }, { capture: false });
        if (auth.status !== 201) return;
        // Three voids of one authorization at once, one per replica (issue 28's second hole), now and then.
        const n = Math.random() < 0.3 ? 3 : 1;
        const live = this.client.slots.filter((x) => x.up);
        const answers = await Promise.all(Array.from({ length: n }, (_, i) => this.client.write('void', 'POST', `/v1/sales/${auth.body.key}/void`, { token: s.token, key: this.key('void'), replica: n > 1 ? live[i % live.length] : undefined })));
        for (const a of answers) this.op(n > 1 ? 'void_concurrent' : 'void', a.status === 200);
        return;
      }
      case 'sale_refund': {
        await this.list(s);
        if (s.pms.length === 0) return;
        const sale = await this.sale(s, { payment_method: any(s.pms).key });
        if (sale.status !== 201 || sale.body.result_code === 'D') return;
        const paid = Number(sale.body.auth_amount ?? sale.body.amount);
        const part = await this.client.write('refund', 'POST', `/v1/sales/${sale.body.key}/refunds`, { token: this.internal, body: { amount: money(0.5, paid / 2) }, key: this.key('refund') });
        this.op('refund', part.status === 201);
        if (part.status === 201 && Math.random() < 0.3) {
          const rest = await this.client.write('refund', 'POST', `/v1/sales/${sale.body.key}/refunds`, { token: this.internal, key: this.key('refund') });
          this.op('refund_rest', rest.status === 201);
        }
        return;
      }
      case 'new_card_sale': {
        const sale = await this.sale(s, { payment_key: await this.paymentKey(), save_payment_method: Math.random() < 0.7 });
        this.op('new_card_sale', sale.status === 201);
        return;
      }
      case 'new_shopper': {
        const customerid = this.key('cust');
        const res = await this.client.write('customer', 'POST', '/v1/customers', { token: this.internal, body: { customerid, first_name: 'Soak', last_name: 'Shopper' }, key: this.key('create') });
        this.op('new_shopper', res.status === 201);
        if (res.status !== 201) return;
        const fresh = this.shopper(res.body.key);
        fresh.busy = true;
        try {
          await this.sale(fresh, { payment_key: await this.paymentKey(), save_payment_method: true });
        } finally {
          fresh.busy = false;
        }
        return;
      }
      case 'add_card': {
        const res = await this.client.write('add_card', 'POST', `/v1/customers/${s.custkey}/payment_methods`, { token: s.token, body: { payment_key: await this.paymentKey(), method_name: `Card ${this.seq}` }, key: this.key('card') });
        this.op('add_card', res.status === 201);
        return;
      }
      case 'remove_card': {
        await this.list(s);
        const candidates = s.pms.filter((p) => !p.default);
        if (s.pms.length < 2 || candidates.length === 0) return this.visit('add_card', s);
        const pm = any(candidates);
        const res = await this.client.send('DELETE', `/v1/customers/${s.custkey}/payment_methods/${pm.key}`, { token: s.token });
        this.op('remove_card', res.status === 204);
        if (res.status !== 204) return;
        // When, by the sandbox's clock, read once the DELETE answered: the ledger's times are on that clock and the
        // soak moves it (bank payments' jumps), so a wall-clock time called a charge made before the removal (after
        // a jump) one made after it (seen once under load: removed_card_charged 1). Read after the answer, it is late
        // by one admin round trip (a few ms), never early. Unreadable: the wall clock, strict (may only over-count).
        let at = Date.now();
        for (let i = 0; i < 3; i++) {
          const clock = await this.sandbox.admin('GET', 'clock').catch(() => undefined);
          if (clock?.now) { at = Date.parse(clock.now); break; }
        }
        this.removed.push({ custkey: s.custkey, pmkey: pm.key, at });
        // A frontend with a stale list tries the removed card: never charged (guarantee 10).
        const again = await this.sale(s, { payment_method: pm.key });
        this.op('sale_on_removed_card_refused', again.status >= 400 && again.status < 500);
        return;
      }
      case 'edit_card': {
        await this.list(s);
        if (s.pms.length === 0) return;
        const pm = any(s.pms);
        const body = Math.random() < 0.5 ? { method_name: `Renamed ${this.seq++}` } : { default: true };
        const res = await this.client.send('PATCH', `/v1/customers/${s.custkey}/payment_methods/${pm.key}`, { token: s.token, body });
        this.op('edit_card', res.status === 200);
        return;
      }
      case 'bank_sale': {
        const returns = Math.random() < RETURN_SHARE;
        const account = returns ? any(RETURN_ACCOUNTS) : ordinaryAccount();
        const sale = await this.sale(s, { payment_key: await checkPaymentKey(this.sandbox.url, this.publicKey, account), authorization: { text: AGREED } });
        this.op('bank_sale', sale.status === 201);
        if (sale.status === 201 && sale.body?.key && sale.body.result_code !== 'D') this.bankSales.set(sale.body.key, { returns });
        return;
      }
      case 'bank_refund': {
        // The merchant gives part of an earlier bank payment back (a credit once submitted). Never one from a
        // return test account: a refund racing its return's webhook is the gateway's to refuse; refunds of
        // payments tokengate knows returned are tried when the run ends (soak.js), and must never leave.
        const ordinary = [...this.bankSales].filter(([, b]) => !b.returns).map(([key]) => key);
        if (ordinary.length === 0) return this.visit('bank_sale', s);
        const key = any(ordinary);
        const res = await this.client.write('refund', 'POST', `/v1/sales/${key}/refunds`, { token: this.internal, body: { amount: '0.50' }, key: this.key('refund') });
        this.op('bank_refund', res.status === 201);
        return;
      }
      case 'unknown_sale': {
        const res = await this.client.send('GET', `/v1/sales/${crypto.randomBytes(8).toString('hex')}`, { token: s.token });
        this.op('unknown_sale_404', res.status === 404);
        return;
      }
      case 'card_data': {
        // A card number typed where a name goes: refused (422 card_data_forbidden), never stored or logged.
        const number = any(NEW_CARDS);
        const spaced = number.replace(/(\d{4})(?=\d)/g, '$1 ');
        const res = await this.client.send('PATCH', `/v1/customers/${s.custkey}/payment_methods/${s.pms[0]?.key ?? 'x'}`, { token: s.token, body: { method_name: spaced } });
        this.op('card_data_refused', res.status === 422);
        return;
      }
      default:
        throw new Error(`unknown visit ${kind}`);
    }
  }

  /** Starts `perSecond` visits a second until `stopAt`; a visit finds an idle shopper or is counted skipped. */
  async drive(perSecond, stopAt, onError) {
    const gap = 1000 / perSecond;
    let due = Date.now();
    while (Date.now() < stopAt) {
      due += gap * (0.5 + Math.random());
      await sleep(Math.max(0, due - Date.now()));
      const idle = this.shoppers.filter((s) => !s.busy);
      if (idle.length === 0) { this.skipped++; continue; }
      const s = any(idle);
      s.busy = true;
      const kind = pickVisit();
      const p = this.visit(kind, s).catch((err) => onError(kind, err)).finally(() => { s.busy = false; this.inflightVisits.delete(p); });
      this.inflightVisits.add(p);
    }
    await Promise.all([...this.inflightVisits]);
  }
}

module.exports = { Load, NEW_CARDS };
