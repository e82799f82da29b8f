import path from 'node:path';
import express, { Router, type Request, type Response } from 'express';
import { readBankAccount } from './ach/bank';
import { isCardNumber } from './cards';
import type { SandboxCore } from './core';
import { ERRORS } from './errors';
import { sendError } from './respond';
import { expirationState } from './sale-request';

/**
 * The Pay.js stand-in (gateway-facts.md, "Adding a card without touching card data"), on the sandbox's own
 * origin as the real script is on the gateway's host:
 *   GET  /js/v2/pay.js, /js/v2/card-frame.html, /js/v2/card-frame.js, /js/v2/frame.js (what both forms share), …   static files of ./payjs
 *   POST /js/v2/payment_key   the card form's call: {public_key, card {number, expiration MMYY, cvc, …}} →
 *                             {payment_key}; refused with the gateway's error shape (400) otherwise.
 * Unsigned: it is called by the browser from the card iframe (same origin), as the real form's call is.
 */
export const PAYJS_DIR = path.join(__dirname, 'payjs');

const FRAME_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  // Any merchant's page may show the card form, as at the real gateway.
  'frame-ancestors *',
].join('; ');

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const optional = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length <= max);

export function payJsRouter(core: SandboxCore): Router {
  const router = Router();
  router.post('/js/v2/payment_key', express.json({ limit: '4kb', strict: true }), (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    const b: unknown = req.body;
    if (isRecord(b) && isRecord(b.check) && b.card === undefined) {
      // The check form (gateway-facts.md, ACH): a bank payment key. The routing number's shape is checked here, its
      // ABA checksum by the sale (error 38, as the gateway answers it); the detail names a field, never a value.
      if (b.public_key !== core.publicKey) return sendError(res, ERRORS.unknownPublicKey);
      const read = readBankAccount(b.check);
      if ('problem' in read) return sendError(res, ERRORS.invalidField, `check.${read.problem}`);
      return void res.status(200).json({ payment_key: core.paymentKeys.mintCheck(core.publicKey, read.account, core.settings.paymentKeyTtlMs) });
    }
    if (!isRecord(b) || !isRecord(b.card)) return sendError(res, ERRORS.missingCard, 'card');
    if (b.public_key !== core.publicKey) return sendError(res, ERRORS.unknownPublicKey);
    const c = b.card;
    const number = typeof c.number === 'string' ? c.number.replace(/[\s-]/g, '') : '';
    // Never echoed: the detail names the field, not its value.
    if (!isCardNumber(number)) return sendError(res, ERRORS.invalidField, 'card.number is not a valid card number');
    const expiration = typeof c.expiration === 'string' ? c.expiration.replace(/\s|\//g, '') : '';
    const state = expirationState(expiration, new Date(core.clock.now()));
    if (state !== 'ok') return sendError(res, ERRORS.invalidField, state === 'expired' ? 'card.expiration has passed' : 'card.expiration must be MMYY');
    if (c.cvc !== undefined && (typeof c.cvc !== 'string' || !/^\d{3,4}$/.test(c.cvc))) return sendError(res, ERRORS.invalidField, 'card.cvc must be 3 or 4 digits');
    for (const f of ['cardholder', 'avs_street', 'avs_postalcode'] as const) if (!optional(c[f], 255)) return sendError(res, ERRORS.invalidField, `card.${f} must be a string`);
    const key = core.paymentKeys.mint(core.publicKey, {
      number,
      expiration,
      ...(typeof c.cvc === 'string' ? { cvc: c.cvc } : {}),
      ...(typeof c.cardholder === 'string' && c.cardholder ? { cardholder: c.cardholder } : {}),
      ...(typeof c.avs_street === 'string' && c.avs_street ? { avs_street: c.avs_street } : {}),
      ...(typeof c.avs_postalcode === 'string' && c.avs_postalcode ? { avs_postalcode: c.avs_postalcode } : {}),
    }, core.settings.paymentKeyTtlMs);
    res.status(200).json({ payment_key: key });
  });
  router.use('/js/v2', express.static(PAYJS_DIR, {
    index: false,
    fallthrough: true,
    setHeaders: (res, file) => {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cache-Control', 'no-cache');
      if (file.endsWith('.html')) res.setHeader('Content-Security-Policy', FRAME_CSP);
    },
  }));
  return router;
}
