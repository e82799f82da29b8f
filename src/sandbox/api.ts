import type { Request, Response } from 'express';
import { checkAuthorization } from './auth';
import { normaliseIp, type SandboxCore } from './core';
import { unknownCommandAnswer } from './commands';
import { ERRORS } from './errors';
import { cardrefFor, getCustomer, getPaymentMethod, listCustomers, listPaymentMethods } from './reads';
import { adoptSale, faultMatchOfBody, handleLifecycleRoute, isLifecycleRoute, transactionHook } from './lifecycle-api';
import { deliver, failBeforeProcessing, rateLimitHeader, sendError, type Processed } from './respond';
import { faultKindOf, parseApiPath, type ApiRoute } from './routes';
import { handleCheckCommand } from './ach/check-commands';
import { parseSale } from './sale-request';
import { saveCard } from './save-card';
import { savePaymentKeyCard } from './payment-key-sale';
import { handleWalletRoute, isWalletRoute, type WalletRoute } from './wallet-api';

/**
 * The gateway API. Order of checks (README): path → IP allow-list → rate limit → authentication → faults →
 * handler. So a 404 or an IP refusal costs no rate-limit slot, while a call with bad credentials does
 * (it reached the gateway's API).
 */

/** Sale bodies are small; a cap keeps a misbehaving client from filling memory. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** A request body as read: its text, or `ok: false` when it was over BODY_LIMIT_BYTES. */
export type Body = { ok: true; text: string } | { ok: false };

function readBody(req: Request, limit: number): Promise<Body> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ ok: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        resolve({ ok: false });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') });
    });
    req.on('error', reject);
  });
}

function handleSale(core: SandboxCore, res: Response, endpointKey: string, clientIp: string, body: Body): Processed | undefined {
  if (!body.ok) {
    res.setHeader('Connection', 'close'); // the rest of an oversized body is not read
    sendError(res, ERRORS.bodyTooLarge, `at most ${BODY_LIMIT_BYTES} bytes`);
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(body.text);
  } catch {
    sendError(res, ERRORS.invalidJson);
    return undefined;
  }
  const now = core.clock.now();
  core.ach.run(now);
  // Bank payments (ach/): check:sale, check:credit, customer:sale (a saved card's comes back as its cc:sale).
  const checked = handleCheckCommand(core, json, { now });
  if (checked && 'answer' in checked) return checked.answer;
  if (checked) json = checked.json;
  // The payment lifecycle (lifecycle-api.ts): follow-ups answer here; authonly and custkey ride on the sale path.
  const hook = transactionHook(core, json, now);
  if (hook.answer) return hook.answer;
  const parsed = parseSale(hook.json, new Date(now));
  if (!parsed.ok && 'reject' in parsed) {
    sendError(res, parsed.reject, parsed.detail);
    return undefined;
  }
  if (!parsed.ok && 'unknownCommand' in parsed) {
    core.stats.saleErrors++;
    return { status: 200, body: unknownCommandAnswer() };
  }
  if (!parsed.ok && 'saveCard' in parsed) return saveCard(core.fixtures, hook.json as Record<string, unknown>, new Date(now), core.settings.deletedCardref);
  const duplicateFolding = core.settings.duplicateFolding && !hook.ignoreDuplicate;
  const foldScope = hook.authOnly ? 'authonly' : '';
  const outcome = parsed.ok
    ? core.ledger.sale(parsed.sale, { endpointKey, clientIp, now, duplicateFolding, foldScope, slowCardScale: core.settings.slowCardScale, deletedCardref: core.settings.deletedCardref })
    : core.ledger.error(parsed.saleError, parsed.invoice, now);
  if (hook.paymentKey) savePaymentKeyCard(core, outcome, hook.paymentKey, hook.custkey, (json as Record<string, unknown>).method_name, now);
  adoptSale(core, outcome, hook, now);
  if (outcome.response.result_code === 'E') core.stats.saleErrors++;
  return { status: 200, body: outcome.response, record: outcome.record, delayMs: outcome.delayMs };
}

function handleRead(core: SandboxCore, req: Request, route: Exclude<ApiRoute, { kind: 'sale' | 'test-root' } | WalletRoute>): Processed {
  if (isLifecycleRoute(route)) return handleLifecycleRoute(core, req, route);
  if (route.kind === 'publickey') return { status: 200, body: core.publicKey };
  // A GET body (the .NET client sends `{}`) is never read, so any body is accepted, as at the gateway.
  const query = req.query as Record<string, unknown>;
  const format = core.settings.wireFormat;
  if (route.kind === 'customers') return listCustomers(core.fixtures, query, format);
  if (route.kind === 'customer') return getCustomer(core.fixtures, route.customer, format);
  if (route.kind === 'payment_methods') return listPaymentMethods(core.fixtures, route.customer, query, format);
  if (route.kind === 'payment_method') return getPaymentMethod(core.fixtures, route.customer, route.method, format);
  return cardrefFor(core.fixtures, route.customer, route.method);
}

export function createApiHandler(core: SandboxCore) {
  return async function api(req: Request, res: Response): Promise<void> {
    await core.sleep(core.latency());
    if (core.closed || res.destroyed) return;
    const ip = normaliseIp(req.socket.remoteAddress);
    // The rate windows are the gateway's real ones: the wall clock, which the sandbox's test clock never moves.
    const now = Date.now();
    const { endpointKey, route } = parseApiPath(req.method, req.path);
    // A POST transactions body is read first, so faults can match on its command (capture, refund, …); the
    // wallet's writes carry bodies too.
    const posted = route?.kind === 'sale' || (route && isWalletRoute(route)) ? await readBody(req, BODY_LIMIT_BYTES) : undefined;
    if (core.closed || res.destroyed) return;
    const known = endpointKey === undefined ? undefined : core.policy(endpointKey);
    // Unknown endpoint keys and paths outside /api still carry the header, counted as on v2.
    const policy = known ?? (core.policy('v2') as NonNullable<typeof known>);
    const counterId = `${policy.key}|${ip}`;
    const mode = core.settings.rateMode;
    rateLimitHeader(res, policy, core.counter.peek(counterId, now, mode, policy.minute, policy.day));
    if (!known || !route) {
      if (known) core.stats.call(known.key);
      sendError(res, ERRORS.pathNotFound);
      return;
    }
    core.stats.call(policy.key);

    if (policy.allowIps && !policy.allowIps.includes(ip)) {
      core.stats.unauthorized(policy.key);
      sendError(res, ERRORS.accessDenied);
      return;
    }

    const kind = posted && route.kind === 'sale' ? faultMatchOfBody(posted.ok ? posted.text : undefined) : faultKindOf(route);
    if (kind && core.faults.take(kind, 'rate')) {
      core.stats.rateLimited(policy.key, true);
      sendError(res, ERRORS.rateLimited);
      return;
    }
    const verdict = core.counter.tryAcquire(counterId, now, mode, policy.minute, policy.day);
    rateLimitHeader(res, policy, verdict);
    if (!verdict.accepted) {
      core.stats.rateLimited(policy.key, false);
      sendError(res, ERRORS.rateLimited);
      return;
    }
    core.stats.accepted(policy.key, now, core.settings.rateWindowMs, kind);

    if (route.kind === 'test-root') {
      res.status(200).json({});
      return;
    }

    const auth = checkAuthorization(req.headers.authorization, core.settings.apiKey, core.settings.apiPin);
    if (!auth.ok) {
      core.stats.unauthorized(policy.key);
      sendError(res, auth.error);
      return;
    }

    const fault = kind ? core.faults.take(kind, 'handler') : undefined;
    if (fault?.when === 'before') {
      failBeforeProcessing(req, res, fault);
      return;
    }
    const answer = route.kind === 'sale'
      ? posted && handleSale(core, res, policy.key, ip, posted)
      : isWalletRoute(route) ? handleWalletRoute(core, route, posted as Body, new Date(core.clock.now())) : handleRead(core, req, route);
    if (!answer) return;
    await deliver(req, res, answer, fault, (ms) => core.sleep(ms));
  };
}
