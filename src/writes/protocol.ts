import type { CompleteResult, IdempotencyStore, StoredResponse, UnknownRecord, WriteContext } from '../idempotency';
import type { EventDraft, EventSink } from '../events/types';
import { eventsOfWrite, type WriteOp } from '../events/write-events';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import { encodePendingWrite, type PendingWrites } from '../reconcile';
import { WriteInProgressError, WriteKeyReusedError, WriteOutcomeUnknownError } from './errors';
import { KEEP_AT_LEAST_MS, keepLater, keepNow, type LaterPart, type WhenStoreReady } from './keep-later';
import { keptBeforeFreeing, sentness, unwrapNotSent } from './not-sent';
import { writeReference } from './reference';

/**
 * The ONE idempotency protocol of every write (sales, captures, voids, refunds, adding a card; contract
 * guarantees 2 and 7): begin → run → complete, with the not-sent / maybe-sent classification of failures.
 *
 *   begin     claims the Idempotency-Key (scoped by the caller's `sub`, bound to the request's fingerprint),
 *             storing what the write is (WriteContext) so an unknown outcome can be reconciled (issue 12);
 *             a finished key replays, a running one answers in progress, a different body key-reused, an
 *             unknown one outcome_unknown (or, sales with duplicate folding on, re-sends with the same invoice).
 *   run       the use case: sends the write once and renders the answer to store and send.
 *   complete  stores that answer for replays, together with the use case's own records (`alongside`, issued in
 *             the same tick so ioredis pipelines them: no extra sequential round trip). What Redis does not take is
 *             kept later (keep-later.ts) with the answer last; an answer taken without the rest marks the key for
 *             the reconciler, which re-applies the rest if this replica dies first (neither costs the common path).
 *   failure   proven not sent → the key is freed (abandon); maybe sent → the key is marked outcome_unknown and
 *             the write is never re-sent. The error is rethrown for the HTTP edge to answer.
 */
export interface WriteSpec {
  /** The caller (JWT `sub`): keys of different callers never collide. */
  scope: string;
  key: string;
  /** fingerprintRequest(method, path, body). */
  fingerprint: string;
  /** What the write is; its `op` also names the payment event its answer makes (src/events/write-events.ts). */
  context: WriteContext & { op: WriteOp };
  /** The invoice the write carries (sales), kept for folding retries and the reconciler. */
  invoice?: string;
  /** How long the attempt may run before it counts as dead (a killed replica's key turns outcome_unknown). */
  leaseMs: number;
  /** The gateway folds duplicates of this write (same card, amount, invoice): a folding retry may re-send it. */
  foldable?: boolean;
}

export interface Attempt {
  /**
   * A stable name of this write (derived from scope and key, never the key itself): what a use case names its
   * reservations with, so the reconciler can settle them from the key alone (issue 12).
   */
  reference: string;
  /** The invoice to send: the stored one on a folding retry. */
  invoice: string | undefined;
  /** A duplicate-folding retry of an unknown outcome. */
  resumed: boolean;
}

export interface Written {
  /** The answer, stored for replays and sent. */
  response: StoredResponse;
  /** Records that must be written with the completion (e.g. the sale's ownership record); failures are logged. */
  alongside?: () => Promise<unknown>;
  /**
   * Payment events beyond what the answer carries (e.g. a removed card's object, where the answer is a 204). The
   * protocol derives every write's events from its operation and answer anyway (src/events/write-events.ts);
   * a draft given here replaces the derived one of the same change. Appended with the completion, never on a
   * replay.
   */
  events?: readonly EventDraft[];
  /**
   * The gateway processed nothing: it refused the request before acting on it (result E on a payment key it does
   * not take), so no money moved. The answer (a 4xx) is sent but not kept, and the key is freed as for a write
   * never sent, so the same key can carry the corrected request (as Stripe frees a key whose request failed
   * validation). Only a client error may say so: a sale, a decline or an unknown outcome keeps its key. A
   * duplicate-folding retry's key goes back to outcome_unknown instead (an earlier attempt may have charged).
   */
  nothingMoved?: boolean;
  /**
   * Writes of the use case's records that Redis could not take when the gateway answered (a follow-up's
   * settlement of its sale's reservation, src/sales/follow-up-service.ts): kept BEFORE the answer, each safe to
   * repeat. The answer is kept only once they are: a kept answer never leaves them undone (the reconciler drops a
   * key whose answer is kept). A replica that dies first leaves the key to its lease and the reconciler, which
   * rebuilds both from the gateway's records (or from what was kept: src/reconcile/find.ts).
   */
  before?: readonly LaterPart[];
}

export interface WriteResult {
  response: StoredResponse;
  /** A stored answer sent again (`Idempotent-Replayed: true`). */
  replayed: boolean;
}

export interface WriteProtocol {
  execute(spec: WriteSpec, run: (attempt: Attempt) => Promise<Written>, log?: Logger): Promise<WriteResult>;
}

export interface WriteProtocolDeps {
  idempotency: IdempotencyStore;
  logger: Logger;
  metrics?: Metrics;
  /** GATEWAY_DUPLICATE_FOLDING: only if the merchant enabled folding on the key. */
  duplicateFolding: boolean;
  /**
   * The reconciler's due set (issue 12): every attempt is tracked from begin (due at its lease end, so a
   * replica killed mid-call is noticed), due at once when its outcome becomes unknown, untracked when it ends.
   */
  pending: PendingWrites;
  /** Retry-After of an outcome_unknown before the reconciler has planned a look (seconds). */
  unknownRetryAfterSec: number;
  /**
   * Calls `listener` each time the store's connection is ready again (Redis back after a restart or a failover):
   * a write's answer kept later is kept at once then, before the next request reads it. Returns the unsubscribe.
   */
  whenStoreReady?: WhenStoreReady;
  /** The payment event log (src/events); none: events are dropped. */
  events?: EventSink;
  /** Called after this replica appended events (the delivery looks at once instead of at its next poll). */
  appended?: () => void;
  /**
   * Resolves once the store's writes so far are on its replicas (REDIS_WRITE_REPLICAS, src/redis/replicas.ts),
   * rejects with StoreUnavailableError otherwise; none: a write is final when the master has it.
   */
  replicated?: () => Promise<void>;
}

/** The metric label of a stored answer. */
function resultOf(status: number): string {
  if (status < 300) return 'ok';
  if (status === 402) return 'declined';
  return status < 500 ? 'refused' : 'error';
}

export function createWriteProtocol(deps: WriteProtocolDeps): WriteProtocol {
  const { idempotency, metrics, pending } = deps;
  const count = (operation: string, result: string) => metrics?.writes.inc({ operation, result });
  const event = (name: string) => metrics?.idempotency.inc({ event: name });

  /**
   * Frees the key of a write proven not sent, once what the use case must record first is kept
   * (WriteNotSentError.before: a follow-up's release of its sale's reservation). What Redis cannot take now is kept
   * later, the key freed after it; a replica that dies first leaves the key to its lease and the reconciler, which
   * finds the write absent at the gateway and releases the reservation itself.
   */
  async function freeKey(err: unknown, free: () => Promise<unknown>, log: Logger, op: string, leaseMs: number): Promise<void> {
    const left = await keepNow(keptBeforeFreeing(err));
    if (left.length === 0) {
      await free();
      return;
    }
    log.error('could not record a write that was not sent; freeing its key once it is', { op, parts: left.map((p) => p.what) });
    keepLater([{ what: `${left.map((p) => p.what).join(', then ')}, then free the key`, keep: async () => {
      for (const p of left) await p.keep();
      await free();
    } }], { untilMs: Date.now() + Math.max(leaseMs, KEEP_AT_LEAST_MS), log, op, whenReady: deps.whenStoreReady });
  }

  return {
    async execute(spec, run, log = deps.logger) {
      const { scope, key, fingerprint, context } = spec;
      const options = { leaseMs: spec.leaseMs, invoice: spec.invoice, context };
      const member = encodePendingWrite({ scope, key });
      // Tracked in the same tick as the claim (one pipelined write, no extra round trip). A replay or a
      // conflict leaves a harmless entry: the reconciler finds the record final and drops it.
      // The replicas' acknowledgement (REDIS_WRITE_REPLICAS) goes behind the claim on the same connection, in the
      // same pipelined write: no round trip of its own. Only a started attempt looks at it.
      const heldByReplicas = () => deps.replicated?.().then(() => undefined, (err: unknown) => err);
      let [begun, , unreplicated] = await Promise.all([
        idempotency.begin(scope, key, fingerprint, options), pending.track(member, Date.now() + spec.leaseMs), heldByReplicas(),
      ]);
      if (begun.kind === 'outcome_unknown' && deps.duplicateFolding && spec.foldable) {
        // Duplicate folding is on for the merchant key: re-send with the SAME invoice; the gateway answers the
        // original transaction (is_duplicate Y) if the first attempt went through (contract, guarantee 2).
        [begun, unreplicated] = await Promise.all([idempotency.retryUnknown(scope, key, fingerprint, options), heldByReplicas()]);
      }
      switch (begun.kind) {
        case 'completed':
          event('replay');
          count(context.op, 'replay');
          // The entry this replay tracked has nothing to wait for (not awaited: a replay answers at once), unless the
          // key's follow-through is marked pending: the entry is the reconciler's, which re-applies it.
          if (!begun.following) pending.untrack(member).catch((err: unknown) => log.debug('could not untrack a replayed key', { err }));
          return { response: begun.response, replayed: true };
        case 'in_progress':
          event('conflict');
          throw new WriteInProgressError(begun.retryAfterSec);
        case 'mismatch':
          event('mismatch');
          throw new WriteKeyReusedError();
        case 'outcome_unknown':
          event('outcome_unknown');
          throw new WriteOutcomeUnknownError(unknownRetryAfter(begun.record, deps.unknownRetryAfterSec));
        case 'started':
          break;
      }

      const { attempt } = begun;
      const invoice = begun.invoice ?? spec.invoice;
      if (unreplicated !== undefined) {
        // The claim must outlive a failover before anything is sent: a claim only the old master held would let
        // a retry on the new one send the write again. Short of replicas, nothing is sent: 503, key freed.
        log.warn('write refused: its claim is not on the Redis replicas', { op: context.op });
        await Promise.all([idempotency.abandon(scope, key, attempt), pending.untrack(member)]).catch(() => undefined);
        throw unreplicated;
      }
      const reference = writeReference(scope, key);
      let written: Written;
      try {
        written = await run({ invoice, resumed: begun.resumed, reference });
      } catch (err) {
        const sent = sentness(err);
        const reason = codeOf(unwrapNotSent(err));
        log.warn('write failed', { op: context.op, sent, reason });
        count(context.op, sent === 'no' ? 'not_sent' : 'outcome_unknown');
        try {
          if (sent === 'no') await freeKey(err, () => Promise.all([idempotency.abandon(scope, key, attempt), pending.untrack(member)]), log, context.op, spec.leaseMs);
          else await Promise.all([idempotency.markOutcomeUnknown(scope, key, attempt, { invoice, reason }), pending.track(member, Date.now())]);
        } catch (storeErr) {
          // Maybe sent and not marked: the key turns outcome_unknown when its lease ends, so never twice.
          log.error('idempotency transition failed', { err: storeErr });
        }
        throw err;
      }

      const { response, alongside } = written;
      // What the use case could not record then: tried once more now (Redis may be back); what still fails holds
      // the answer back until it is kept (below).
      const before = written.before?.length ? await keepNow(written.before) : [];
      count(context.op, resultOf(response.status));
      if (written.nothingMoved && response.status >= 400 && response.status < 500 && response.status !== 402) {
        event('released');
        try {
          await Promise.all([idempotency.abandon(scope, key, attempt), pending.untrack(member)]);
        } catch (err) {
          // Not freed: the key turns outcome_unknown at its lease end and the reconciler finds nothing to keep.
          log.warn('could not free the key of a write the gateway refused before processing', { op: context.op, err });
        }
        return { response, replayed: false };
      }
      // The write's payment events, from its operation and answer: every write emits, and the reconciler's
      // resolution of an unknown one emits the same (src/events/write-events.ts).
      const events = deps.events ? eventsOfWrite({ context, response, reference }, written.events) : [];
      /** What storing the answer means for the reconciler's due entry. */
      const settled = async (result: CompleteResult): Promise<void> => {
        if (begun.resumed) return;
        if (result === 'done') pending.forget(member); // its due entry, in a batch with others
        // The lease ran out mid-call and the reconciler may have opened an unknown entry: close it (rare).
        else if (result === 'done_after_unknown') await pending.untrack(member).catch((err: unknown) => log.warn('could not untrack a late write', { op: context.op, err }));
      };
      /** Stores the answer; kept later, it stops once another attempt or the reconciler owns the key. */
      const complete = async (): Promise<void> => {
        const result = await idempotency.complete(scope, key, attempt, response);
        await settled(result);
      };
      // Issued in the same tick: ioredis auto-pipelining sends them in one write (one round trip). Only a resumed
      // attempt can sit in the reconciler's unknown set here, so only it untracks now.
      const [stored, records, untracked, appended] = await Promise.allSettled([
        before.length > 0 ? Promise.reject(new Error('kept once the use case\'s records are')) : idempotency.complete(scope, key, attempt, response), alongside?.(), begun.resumed ? pending.untrack(member) : undefined,
        events.length > 0 ? deps.events?.append(events) : undefined,
      ]);
      if (appended.status === 'fulfilled' && events.length > 0) deps.appended?.();
      // The write happened: answer it. Whatever Redis could not take now (a restart, a failover) is kept later:
      // the answer for replays, the use case's records (a sale's record makes it its customer's: without it the
      // shopper's own sale answers 404) and the events; until then the key reads in progress, and once its lease
      // ends, outcome_unknown, never free.
      // Taken by the master but not by its replicas (REDIS_WRITE_REPLICAS): a failover could still lose them, so
      // every part is kept again (each is safe to repeat) until the replicas hold it.
      const replicated = stored.status === 'fulfilled' && records.status === 'fulfilled' && appended.status === 'fulfilled' && deps.replicated
        ? await deps.replicated().then(() => true, () => false) : true;
      const late: LaterPart[] = [];
      const recordsPart: LaterPart = { what: 'records', keep: () => alongside?.() ?? Promise.resolve() };
      const eventsPart: LaterPart = { what: 'events', keep: async () => { await deps.events?.append(events); deps.appended?.(); } };
      // What the write records beside its answer and Redis did not take (or a failover could lose).
      const follow = [...(records.status === 'rejected' || !replicated ? [recordsPart] : []), ...(events.length > 0 && (appended.status === 'rejected' || !replicated) ? [eventsPart] : [])];
      if (stored.status === 'rejected' || !replicated) {
        // One part, in order, the answer last: the use case's records kept before it (Written.before), then the
        // records and events Redis did not take (each safe to repeat), then the answer. Kept apart, a replica could
        // keep the answer and die before the rest, and the reconciler drops a key whose answer is kept: the sale's
        // record (its customer's 404) and its event lost for good. Until the answer is kept, the key reads in
        // progress, and at its lease end the reconciler rebuilds all of it from the gateway (it knows a record this
        // write kept as its own: the record names the write, src/reconcile/find.ts).
        const steps = [...before, ...follow];
        late.push({ what: [...steps.map((p) => p.what), 'answer'].join(', then '), keep: async () => {
          for (const p of steps) await p.keep();
          await complete();
        } });
        if (stored.status === 'fulfilled') await settled(stored.value);
      } else if (follow.length > 0) {
        // The answer is kept and the rest refused (a Cluster node down while the answer's is up): the key is marked
        // and stays in the reconciler's due set (due at its lease end, never forgotten now), so that if this replica
        // dies before keeping the rest, the reconciler re-applies it to the completed key (src/reconcile). Only on
        // this path: the common completion pays nothing for it.
        late.push({ what: 'follow-through mark', keep: () => Promise.all([idempotency.markFollowing(scope, key), pending.track(member, Date.now() + spec.leaseMs)]) });
        late.push(...follow);
      } else {
        await settled(stored.value);
      }
      if (late.length > 0) {
        log.error('could not keep all of a write\'s answer now; keeping it when Redis is back', { op: context.op, parts: late.map((l) => l.what) });
        keepLater(late, { untilMs: Date.now() + Math.max(spec.leaseMs, KEEP_AT_LEAST_MS), log, op: context.op, whenReady: deps.whenStoreReady, replicated: deps.replicated });
      }
      if (untracked.status === 'rejected') log.debug('could not untrack a finished write', { op: context.op, err: untracked.reason });
      return { response, replayed: false };
    },
  };
}

/** A stable code for logs and the unknown record: the error's `code` when it has one. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown';
}

export { writeReference };

/** Seconds until the reconciler's planned look (guarantee 6), or the default while none is planned. */
function unknownRetryAfter(record: UnknownRecord, fallbackSec: number): number {
  if (record.nextLookMs === undefined || record.nowMs === undefined) return fallbackSec;
  return Math.max(1, Math.ceil((record.nextLookMs - record.nowMs) / 1000));
}
