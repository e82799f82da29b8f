import { achFail, AchFailError } from './ach/failure';
import { achNote, AchNoteError } from './ach/notice';
import { cardUpdate, CardUpdateError, type CardUpdateRequest } from './card-updater';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { brandOf } from './cards';
import { consoleEntry } from './console';
import { isLoopback, normaliseIp, type SandboxCore } from './core';
import { FaultError, parseFaultRequest } from './faults';
import { SettingsError } from './settings';
import { ledgerView } from './ledger-view';
import { webhookAdminRouter } from './webhooks/admin-routes';
import { publicWebhookSettings } from './webhooks/settings';

/**
 * Admin routes for tests and benchmarks in other processes. Loopback clients only (others get the same 404 as
 * any unknown path), and outside /api/ so they can never collide with a gateway path.
 */

export function publicSettings(core: SandboxCore): Record<string, unknown> {
  // The sandbox PIN is test data, but it still never goes over the wire.
  return { ...core.settings, apiPin: '[redacted]', ...publicWebhookSettings(core.settings) };
}

function fixturesView(core: SandboxCore): unknown[] {
  return core.fixtures.customers.map((c) => ({
    key: c.key,
    custid: c.custid,
    firstname: c.firstname,
    lastname: c.lastname,
    payment_methods: c.payment_methods.map((m) => (m.check
      ? { key: m.key, pmid: m.pmid, pay_type: 'check', account_number: m.check.account.slice(-4), routing_number: m.check.routing.slice(-4) }
      : { key: m.key, pmid: m.pmid, card_type: brandOf(m.number), ccnum4last: m.number.slice(-4), ...core.fixtures.token(m) })),
  }));
}

function stringField(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (typeof v !== 'string' || v.length === 0) throw new SettingsError(`${name} must be a non-empty string`);
  return v;
}

export function createAdminRouter(core: SandboxCore, notFound: (req: Request, res: Response) => void): Router {
  const router = express.Router();
  router.use((req, res, next) => (isLoopback(normaliseIp(req.socket.remoteAddress)) ? next() : notFound(req, res)));
  router.use(express.json({ limit: '64kb', strict: false }));

  router.get('/stats', (_req, res) => void res.json(core.stats.snapshot(core.ledger, core.faults.injected)));
  router.get('/transactions', (_req, res) => void res.json(core.ledger.transactions()));
  const ledger = ledgerView(core);
  router.get('/ledger', (_req, res) => void res.json(ledger.entries()));
  router.get('/ledger/:key', (req, res) => {
    const entry = ledger.get(String(req.params.key));
    if (entry) res.json(entry);
    else notFound(req, res);
  });
  router.get('/operations', (_req, res) => void res.json(ledger.operations()));
  // {"fail": "<reason>"}: the close fails (settlement.batch.failure, response E); the batch stays open.
  router.post('/batches/close', (req, res) => {
    const fail = (req.body as { fail?: unknown } | undefined)?.fail;
    if (fail === undefined) return void res.json({ key: ledger.closeBatch() });
    if (typeof fail !== 'string' || !/^[\w .,'-]{1,120}$/.test(fail)) throw new SettingsError('fail must be a reason of 1-120 letters, digits, spaces or .,\'-');
    res.json({ key: ledger.failBatchClose(fail), failed: true });
  });
  router.post('/batches/current/console', (req, res) => void res.json(consoleEntry(core, req.body, core.clock.now())));
  // The sandbox's own clock (clock.ts; contract, "Subscriptions"): only forward.
  router.get('/clock', (_req, res) => void res.json({ now: new Date(core.clock.now()).toISOString() }));
  router.post('/clock', (req, res) => {
    const advance = (req.body as { advance_ms?: unknown } | undefined)?.advance_ms;
    if (typeof advance !== 'number' || !Number.isInteger(advance) || advance < 0 || advance > 10 * 366 * 86_400_000) {
      throw new SettingsError('advance_ms must be an integer from 0 to ten years of milliseconds');
    }
    res.json({ now: new Date(core.clock.advance(advance)).toISOString() });
  });
  router.get('/settings', (_req, res) => void res.json(publicSettings(core)));
  router.get('/fixtures', (_req, res) => void res.json(fixturesView(core)));
  router.get('/faults', (_req, res) => void res.json({ pending: core.faults.pending(), rates: core.faults.rates() }));
  router.post('/faults', (req, res) => {
    const parsed = parseFaultRequest(req.body);
    if ('next' in parsed) core.faults.next(parsed.next);
    else core.faults.set(parsed.set);
    res.json({ pending: core.faults.pending(), rates: core.faults.rates() });
  });
  router.delete('/faults', (_req, res) => {
    core.faults.clear();
    res.status(204).end();
  });
  router.post('/reset', (_req, res) => {
    core.reset();
    res.status(204).end();
  });
  router.post('/settings', (req, res) => {
    core.update(req.body as Partial<typeof core.settings>);
    res.json(publicSettings(core));
  });
  router.post('/rotate-cardref', (req, res) => {
    const cardref = core.fixtures.rotate(stringField(req.body, 'custkey'), stringField(req.body, 'pmkey'));
    res.json({ cardref });
  });
  router.post('/token-expires', (req, res) => {
    core.fixtures.setExpires(stringField(req.body, 'custkey'), stringField(req.body, 'pmkey'), stringField(req.body, 'expires'));
    res.status(204).end();
  });
  router.post('/declines', (req, res) => {
    const body = req.body as { attempts?: unknown; error_code?: unknown } | undefined;
    core.ledger.scripted.set(stringField(req.body, 'pmkey'), Number(body?.attempts), typeof body?.error_code === 'string' ? body.error_code : undefined);
    res.status(204).end();
  });
  router.post('/card-updates', (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const opt = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
    const kind = opt('kind') as CardUpdateRequest['kind'];
    const expiration = opt('expiration');
    const number = opt('number');
    const sourceTransaction = opt('source_transaction');
    core.webhooks.announce(cardUpdate(core, {
      custkey: stringField(req.body, 'custkey'), pmkey: stringField(req.body, 'pmkey'), kind,
      ...(expiration ? { expiration } : {}), ...(number ? { number } : {}), ...(sourceTransaction ? { sourceTransaction } : {}),
    }, core.clock.now()));
    res.status(204).end();
  });
  router.post('/ach/notes', (req, res) => {
    const note = (req.body as Record<string, unknown> | undefined)?.note;
    core.webhooks.announce(achNote(core, stringField(req.body, 'trankey'), typeof note === 'string' ? note : undefined));
    res.status(204).end();
  });
  router.post('/ach/failures', (req, res) => {
    core.webhooks.announce(achFail(core, stringField(req.body, 'trankey')));
    res.status(204).end();
  });
  router.use('/webhooks', webhookAdminRouter(core.webhooks));
  router.use((req, res) => notFound(req, res));
  // Express 5 needs the four-argument signature to recognise an error handler.
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const message = err instanceof FaultError || err instanceof SettingsError || err instanceof CardUpdateError || err instanceof AchNoteError || err instanceof AchFailError ? err.message : err instanceof Error && /fixtures|expires|attempts|error_code/.test(err.message) ? err.message : 'bad admin request';
    res.status(400).json({ error: message });
  });
  return router;
}
