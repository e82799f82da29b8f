/**
 * `requestId(logger)`: mount first. Sets `X-Request-Id` on every answer and attaches `req.id` and `req.log`
 * (a child of `logger` with `request_id`). The caller's value is kept only when it is a safe token; one that
 * looks like a card number is replaced too, so a 422 for card data never echoes it back in a header.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { containsPan as hasPan } from '../card/pan';
import type { Logger } from '../observability/logger';
import './types';

export const REQUEST_ID_HEADER = 'X-Request-Id';
const SAFE_ID = /^[A-Za-z0-9._-]{8,128}$/;

export function isSafeRequestId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_ID.test(value) && !hasPan(value);
}

/**
 * A fresh UUID that does not look like a card number: about 3 in 1,000 UUIDs hold a Luhn-valid digit run,
 * which the log and replay scrubbers would then redact, so the id the caller holds would not match ours.
 */
export function newRequestId(): string {
  let id = randomUUID();
  while (hasPan(id)) id = randomUUID();
  return id;
}

export function requestId(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const offered = req.headers['x-request-id'];
    const id = isSafeRequestId(offered) ? offered : newRequestId();
    req.id = id;
    req.log = logger.child({ request_id: id });
    res.setHeader(REQUEST_ID_HEADER, id);
    next();
  };
}
