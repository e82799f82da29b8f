import type { Cluster, Redis } from 'ioredis';
import { guarded } from '../redis/guarded';
import { withSettlementScripts } from './scripts';
import { heldBy, SETTLEMENT_TTL_MS, type CreditReturn, type DueBatch, type Settlement, type SettlementLine, type SettlementStore, type SettlementSummary } from './types';

export interface RedisSettlementStoreOptions {
  redis: Redis | Cluster;
  keyPrefix: string;
  ttlMs?: number;
  opTimeoutMs?: number;
  now?: () => number;
}

/**
 * SettlementStore on Redis, every key under one hash tag `{<prefix>:settlements}` (one Cluster slot, so each
 * script's keys share it): `:s:<batch>` (hash: summary, lines as JSON), `:list` (sorted set: the batch's close
 * ms → batch), `:claim:<batch>` (the replica reading it), `:due` (sorted set: when to take it → batch, the batches
 * to read) with `:due-of` (hash: batch → JSON {heardMs, tries}). Batch keys are the gateway's, URI-encoded.
 */
/** A line's entry in the open bank lines' index: [member, end of review ms], -1 when the line is not open. */
export function openOf(batch: string, line: SettlementLine): [string, number] {
  const until = line.bank === 'open' && line.open_until ? Date.parse(line.open_until) : -1;
  return [JSON.stringify([batch, line.transaction]), Number.isFinite(until) ? until : -1];
}

/** How long a start's held-index backfill may take before another start takes it over (the mark is a claim till then). */
const HELD_BACKFILL_CLAIM_MS = 10 * 60_000;
/** The due set lives this long after its last write (the look's lookback, and a day). */
const DUE_TTL_MS = 8 * 24 * 3600_000;

export function createRedisSettlementStore(options: RedisSettlementStoreOptions): SettlementStore {
  const redis = withSettlementScripts(options.redis);
  const ttlMs = options.ttlMs ?? SETTLEMENT_TTL_MS;
  const now = options.now ?? Date.now;
  const timeoutMs = options.opTimeoutMs ?? 2000;
  const call = <T>(what: string, op: () => Promise<T>): Promise<T> => guarded(`settlements ${what}`, timeoutMs, op);
  const tag = `{${options.keyPrefix}:settlements}`;
  const settlementKey = (batch: string) => `${tag}:s:${encodeURIComponent(batch)}`;
  const claimKey = (batch: string) => `${tag}:claim:${encodeURIComponent(batch)}`;
  const listKey = `${tag}:list`;
  const sweptKey = `${tag}:swept`;
  // Which kept settlement holds each sale (a line of its batch): written by save.lua (passed as its KEYS), read by the sweep for
  // `missing` and by a bank payment's return. Open bank lines, by the end of their review: `openKey`.
  const heldKey = (sale: string) => `${tag}:of:${encodeURIComponent(sale)}`;
  const openKey = `${tag}:open`;
  const sweepClaimKey = `${tag}:sweep`;
  const heldBackfillKey = `${tag}:of-backfilled:credits`;
  // A credit of tokengate's that came back (JSON CreditReturn), kept as long as settlements: `:back:<credit>`.
  const backKey = (credit: string) => `${tag}:back:${encodeURIComponent(credit)}`;
  // The batches due to be read (look.ts), by when to take each, and what each entry knows (JSON {heardMs, tries}).
  // Written in one MULTI (both under the tag: one slot). Both expire DUE_TTL_MS after their last write: a batch
  // due longer than the look's lookback is past reading by any path.
  const dueKey = `${tag}:due`;
  const dueOfKey = `${tag}:due-of`;
  /** Each id's value under keyOf(id), where one is kept: MGET 500 keys at a time (all under the store's one tag). */
  const readEach = async <T>(what: string, ids: readonly string[], keyOf: (id: string) => string, parse: (raw: string) => T): Promise<Map<string, T>> => {
    const out = new Map<string, T>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const values = await call(what, () => redis.mget(...chunk.map(keyOf)));
      chunk.forEach((id, n) => {
        const raw = values[n];
        if (raw) out.set(id, parse(raw));
      });
    }
    return out;
  };

  const get = async (batch: string): Promise<Settlement | undefined> => {
    const [summary, lines] = await call('get', () => redis.hmget(settlementKey(batch), 'summary', 'lines'));
    if (!summary || !lines) return undefined;
    return { ...(JSON.parse(summary) as SettlementSummary), lines: JSON.parse(lines) as SettlementLine[] };
  };

  return {
    get,
    async list(after, limit) {
      let start = 0;
      if (after !== undefined) {
        const rank = await call('rank', () => redis.zrevrank(listKey, after));
        if (rank === null) return [];
        start = rank + 1;
      }
      const batches = await call('list', () => redis.zrevrange(listKey, start, start + limit - 1));
      if (batches.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const b of batches) pipeline.hget(settlementKey(b), 'summary');
      const replies = (await call('summaries', () => pipeline.exec())) ?? [];
      return replies.flatMap(([err, value]) => (err || typeof value !== 'string' ? [] : [JSON.parse(value) as SettlementSummary]));
    },
    async claim(batch, owner, claimTtlMs) {
      const answer = await call('claim', () => redis.tgSettleClaim(settlementKey(batch), claimKey(batch), owner, claimTtlMs));
      return answer === 'kept' || answer === 'busy' ? answer : 'claimed';
    },
    async save(settlement: Settlement, owner, closedMs) {
      const { lines, ...summary } = settlement;
      const held = lines.flatMap((l) => { const key = heldBy(l); return key !== undefined ? [heldKey(key)] : []; });
      const open = lines.map((l) => openOf(settlement.batch, l)).filter(([, until]) => until >= 0);
      const kept = await call('save', () =>
        redis.tgSettleSave(4 + held.length, settlementKey(settlement.batch), listKey, claimKey(settlement.batch), openKey, ...held, settlement.batch, JSON.stringify(summary), JSON.stringify(lines), closedMs, ttlMs, owner, now() - ttlMs, JSON.stringify(open)),
      );
      return kept === 1;
    },
    async release(batch, owner) {
      await call('release', () => redis.tgSettleRelease(claimKey(batch), owner));
    },
    async amend(batch, lines) {
      if (lines.length === 0) return [];
      const open = lines.map((l) => openOf(batch, l));
      const changed = await call('amend', () => redis.tgSettleAmend(settlementKey(batch), openKey, JSON.stringify(lines), JSON.stringify(open), ttlMs));
      // cjson writes an empty array as {}.
      const parsed = JSON.parse(String(changed)) as SettlementLine[] | Record<string, never>;
      return Array.isArray(parsed) ? parsed : [];
    },
    heldIn(sales) {
      return readEach('held', sales, heldKey, (batch) => batch);
    },
    async backfillHeld(indexed) {
      // Once (a mark). `:of-backfilled` was the mark of releases that indexed sales only; credits joined the index
      // in c1c84fd, so this one runs again where that one ran: SET NX changes no entry already there. The mark is a
      // claim until the end: a replica that dies mid-way leaves it to expire, and the next start does it all again.
      if ((await call('held backfill', () => redis.set(heldBackfillKey, 'running', 'PX', HELD_BACKFILL_CLAIM_MS, 'NX'))) !== 'OK') return 0;
      let count = 0;
      try {
        // Every kept settlement is in `:list` (save.lua adds it in the step that keeps it, under the same hash tag,
        // so on one node of a Cluster): no SCAN of the keyspace is needed to find them. At most 400 days of
        // settlements, one a day or so: read one by one, each one's sales and credits set in one pipeline.
        for (const batch of await call('held backfill list', () => redis.zrange(listKey, '0', '-1'))) {
          const kept = await get(batch);
          const keys = kept?.lines.flatMap((l) => { const key = heldBy(l); return key !== undefined ? [key] : []; }) ?? [];
          if (!kept || keys.length === 0) continue;
          const pipeline = redis.pipeline();
          for (const key of keys) pipeline.set(heldKey(key), batch, 'PX', ttlMs, 'NX');
          await call('held backfill set', () => pipeline.exec());
          count += 1;
          await indexed?.(kept);
        }
      } catch (err) {
        await call('held backfill release', () => redis.del(heldBackfillKey)).catch(() => undefined);
        throw err;
      }
      await call('held backfill done', () => redis.set(heldBackfillKey, 'done'));
      return count;
    },
    async keepCreditReturn(credit, back) {
      await call('credit return', () => redis.set(backKey(credit), JSON.stringify(back), 'PX', ttlMs, 'NX'));
    },
    creditReturns(credits) {
      return readEach('credit returns', credits, backKey, (raw) => JSON.parse(raw) as CreditReturn);
    },
    async openBankLines(dueMs, limit) {
      const members = await call('open', () => redis.zrangebyscore(openKey, '-inf', dueMs, 'LIMIT', 0, limit));
      const out: Array<{ batch: string; closed_at: string; line: SettlementLine }> = [];
      const settlements = new Map<string, Settlement | undefined>();
      for (const member of members) {
        const [batch, transaction] = JSON.parse(member) as [string, string];
        if (!settlements.has(batch)) settlements.set(batch, await get(batch));
        const kept = settlements.get(batch);
        const line = kept?.lines.find((l) => l.transaction === transaction);
        if (kept && line?.bank === 'open') out.push({ batch, closed_at: kept.closed_at, line });
        // Gone (its settlement's ttl) or no longer open: the index entry is stale.
        else await call('open trim', () => redis.zrem(openKey, member));
      }
      return out;
    },
    async claimSweep(owner, dueSinceMs, claimTtlMs) {
      return Number(await call('sweep claim', () => redis.tgSettleSweepClaim(sweptKey, sweepClaimKey, owner, dueSinceMs, claimTtlMs))) === 1;
    },
    async sweepDone(owner, endedMs) {
      await call('sweep done', () => redis.tgSettleSweepDone(sweptKey, sweepClaimKey, owner, endedMs, ttlMs));
    },
    async markDue(batch, heardMs, atMs) {
      await call('due', () => redis.multi().zadd(dueKey, 'NX', atMs, batch).hsetnx(dueOfKey, batch, JSON.stringify({ heardMs, tries: 0 }))
        .pexpire(dueKey, DUE_TTL_MS).pexpire(dueOfKey, DUE_TTL_MS).exec());
    },
    async takeDue(nowMs, leaseMs, limit) {
      const batches = await call('due take', () => redis.zrangebyscore(dueKey, '-inf', nowMs, 'LIMIT', 0, limit));
      if (batches.length === 0) return [];
      // Not atomic with the read above: two replicas may take one batch; the claim still makes one read of it.
      const multi = redis.multi();
      for (const b of batches) multi.zadd(dueKey, 'XX', nowMs + leaseMs, b);
      multi.hmget(dueOfKey, ...batches);
      const replies = (await call('due lease', () => multi.exec())) ?? [];
      const [err, raw] = replies[replies.length - 1] ?? [null, []];
      const infos = err ? [] : (raw as Array<string | null>);
      return batches.map((batch, i): DueBatch => {
        const info = infos[i] ? (JSON.parse(infos[i] as string) as { heardMs?: number; tries?: number }) : {};
        return { batch, heardMs: info.heardMs ?? nowMs, tries: info.tries ?? 0 };
      });
    },
    async dueAgain({ batch, heardMs, tries }, atMs) {
      // A batch done meanwhile (kept by another replica) is not made due again (XX); its info field may linger
      // until the hash expires.
      await call('due again', () => redis.multi().zadd(dueKey, 'XX', atMs, batch).hset(dueOfKey, batch, JSON.stringify({ heardMs, tries })).pexpire(dueOfKey, DUE_TTL_MS).exec());
    },
    async dueDone(batch) {
      await call('due done', () => redis.multi().zrem(dueKey, batch).hdel(dueOfKey, batch).exec());
    },
  };
}
