'use strict';
/**
 * The soak's HTTP client, as a merchant's frontends and services behave behind a load balancer: each request
 * goes to the next live replica (a refused or reset connection is tried on another one), and a write is sent
 * again under its Idempotency-Key until its answer is definitive. Every answer of every key is kept: the judge
 * replays keys and compares with the sandbox's ledger from them.
 */
const { Agent } = require('undici');

/** Answers after which a client stops retrying a write: the outcome is known. */
const DEFINITIVE = (status, code) => (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 429 && status !== 408 && !(status === 409 && (code === 'outcome_unknown' || code === 'idempotency_in_progress')));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class SoakClient {
  constructor(slots, { requestTimeoutMs = 60_000 } = {}) {
    this.slots = slots;
    this.next = 0;
    this.agent = new Agent({ connections: 64, keepAliveTimeout: 4_000, headersTimeout: requestTimeoutMs, bodyTimeout: requestTimeoutMs });
    this.keys = new Map();
    this.tally = SoakClient.emptyTally();
    this.totals = { total: 0, by_status: {} };
    this.inflight = new Map(slots.map((s) => [s.name, 0]));
  }

  static emptyTally() {
    return { answers: { '2xx': 0, '4xx': 0, '409': 0, '429': 0, '5xx': 0, net: 0 }, sales_ok: 0 };
  }

  /** The counts since the last call (one sample interval). */
  takeTally() {
    const t = this.tally;
    this.tally = SoakClient.emptyTally();
    return t;
  }

  count(status) {
    const cls = status === 'net' ? 'net' : status === 409 ? '409' : status === 429 ? '429' : status >= 500 ? '5xx' : status >= 400 ? '4xx' : '2xx';
    this.tally.answers[cls]++;
    this.totals.total++;
    this.totals.by_status[status] = (this.totals.by_status[status] ?? 0) + 1;
  }

  pick(skip) {
    const live = this.slots.filter((s) => s.up && !skip.has(s.name));
    if (live.length === 0) return undefined;
    return live[this.next++ % live.length];
  }

  /**
   * One request, tried on up to every live replica while the connection fails (what a load balancer does for
   * a refused connection; a reset mid-answer is an answer lost, reported as `net`).
   */
  async send(method, path, { token, body, key, headers = {}, replica } = {}) {
    const tried = new Set();
    for (;;) {
      const slot = replica ?? this.pick(tried);
      if (!slot) {
        this.count('net');
        return { status: 'net', body: undefined, headers: {} };
      }
      tried.add(slot.name);
      const h = { authorization: `Bearer ${token}`, ...headers };
      if (body !== undefined) h['content-type'] = 'application/json';
      if (key) h['idempotency-key'] = key;
      this.inflight.set(slot.name, this.inflight.get(slot.name) + 1);
      try {
        const res = await fetch(`${slot.url()}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), dispatcher: this.agent });
        const text = await res.text();
        this.count(res.status);
        let parsed;
        try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = text; }
        return { status: res.status, body: parsed, headers: Object.fromEntries(res.headers), replica: slot.name };
      } catch (err) {
        const refused = /ECONNREFUSED/.test(String(err?.cause?.code ?? err?.cause ?? err));
        if (!refused || replica) {
          this.count('net');
          return { status: 'net', body: undefined, headers: {}, replica: slot.name };
        }
        // Refused before anything was sent: another replica takes it, as an ingress would.
      } finally {
        this.inflight.set(slot.name, this.inflight.get(slot.name) - 1);
      }
    }
  }

  /**
   * A write under `key`, sent again while its outcome is not known (no connection, 5xx, 429, 409 in progress or
   * unknown), honouring Retry-After, for at most `patienceMs`. Resolves with the last answer.
   */
  async write(op, method, path, { token, body, key, patienceMs = 30_000, replica }) {
    const rec = this.keys.get(key) ?? { key, op, method, path, token, body, answers: [], first2xx: undefined };
    this.keys.set(key, rec);
    const until = Date.now() + patienceMs;
    for (let attempt = 0; ; attempt++) {
      const res = await this.send(method, path, { token, body, key, replica: attempt === 0 ? replica : undefined });
      const code = res.body?.error?.code;
      rec.answers.push({ at: Date.now(), status: res.status, code });
      if (typeof res.status === 'number' && res.status >= 200 && res.status < 300 && rec.first2xx === undefined) rec.first2xx = { status: res.status, body: res.body };
      if (typeof res.status === 'number' && DEFINITIVE(res.status, code)) {
        rec.final = { status: res.status, code, body: res.body };
        return res;
      }
      if (Date.now() >= until) return res;
      const retryAfter = Number(res.headers?.['retry-after']);
      const wait = Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter * 1000, 5000) : Math.min(250 * 2 ** attempt, 3000);
      await sleep(Math.min(wait, Math.max(0, until - Date.now())) * (0.75 + Math.random() * 0.5));
    }
  }

  close() {
    return this.agent.close();
  }
}

module.exports = { SoakClient, DEFINITIVE, sleep };
