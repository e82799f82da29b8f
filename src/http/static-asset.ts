import { hash } from 'node:crypto';
import type { Response } from 'express';

/**
 * A handler for a static file held in memory, with a strong ETag computed once: `no-cache` makes browsers
 * revalidate, and express answers 304 when If-None-Match matches (the app turns express's per-response ETag
 * hashing off for the API). `headers` are added to every answer (the demo's CSP).
 */
export function staticAsset(type: string, body: string | Buffer, headers: Record<string, string> = {}): (req: unknown, res: Response) => void {
  const etag = `"${hash('sha256', body, 'base64url').slice(0, 27)}"`;
  return (_req, res) => {
    res.set({ 'Cache-Control': 'no-cache', ETag: etag, ...headers }).type(type).send(body);
  };
}
