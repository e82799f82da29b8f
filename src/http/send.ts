import type { Response } from 'express';
import type { StoredResponse } from '../idempotency';
import type { WriteResult } from '../writes';

/** Sends a write's stored or fresh answer (`Idempotent-Replayed: true` on a replay). */
export function send(res: Response, result: WriteResult | { response: StoredResponse; replayed: boolean }): void {
  res.status(result.response.status).set(result.response.headers);
  if (result.replayed) res.set('Idempotent-Replayed', 'true');
  res.json(result.response.body);
}
