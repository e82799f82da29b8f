import type { Response } from 'express';
import type { StoredResponse } from '../idempotency';
import { jsonOf } from '../idempotency/json-once';
import type { WriteResult } from '../writes';

/**
 * Sends a write's stored or fresh answer (`Idempotent-Replayed: true` on a replay): what `res.json` would send
 * (same status, headers, `Content-Type: application/json; charset=utf-8`, Content-Length, JSON text; no ETag, as
 * the app sets none), written as one string. Express's `send` turns a body of 1,000 characters or more (a sale's)
 * into a Buffer, which Node then writes beside the header block with writev; a string goes with the header block
 * in one write (issue 40, item 1).
 */
export function send(res: Response, result: WriteResult | { response: StoredResponse; replayed: boolean }): void {
  res.status(result.response.status).set(result.response.headers);
  if (result.replayed) res.set('Idempotent-Replayed', 'true');
  // The text the answer was kept with (json-once.ts), not a second stringify of the same body.
  const body = jsonOf(result.response.body);
  // A 204 (a removal) or 304 has no body and no content headers, as Express's send strips them.
  if (body === undefined || res.statusCode === 204 || res.statusCode === 304) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body, 'utf8'));
  if (res.req.method === 'HEAD') res.end();
  else res.end(body, 'utf8');
}
