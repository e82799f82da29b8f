import type { Request, Response } from 'express';
import { formatRateLimitHeader } from '../gateway/rate-limit-header';
import { ERRORS, errorBody, type ErrorSpec } from './errors';
import type { InjectedFault } from './faults';
import type { Delivery } from './ledger';
import type { RateVerdict } from './rate-counter';
import type { EndpointPolicy } from './core';

/** Writing answers: the X-Rate-Limit header, gateway error bodies, and fault-aware delivery of processed answers. */

export function rateLimitHeader(res: Response, policy: EndpointPolicy, verdict: RateVerdict): void {
  res.setHeader('X-Rate-Limit', formatRateLimitHeader({ minuteUsed: verdict.minuteUsed, minuteLimit: policy.minute.limit, dayUsed: verdict.dayUsed, dayLimit: policy.day.limit }));
}

export function sendError(res: Response, e: ErrorSpec, detail?: string): void {
  // The spec names reason phrases for 429 and 401/156 (§7); Node keeps a statusMessage set before writeHead.
  if (e.reason) res.statusMessage = e.reason;
  res.status(e.status).json(errorBody(e, detail));
}

/** A non-JSON body, as a broken proxy or a truncated answer would give. */
export const GARBAGE_BODY = '<html><body>502 Bad Gateway</body></html>\n{"type":"transaction","key":';

export interface Processed {
  status: number;
  body: unknown;
  /** Set for a processed sale or follow-up: its delivery is tracked. */
  record?: { delivery: Delivery; delivered: boolean } | undefined;
  /** Extra wait before answering (slow test cards). */
  delayMs?: number;
}

function send5xx(res: Response, status: 500 | 502 | 503 | undefined): void {
  sendError(res, status === 500 ? ERRORS.internal : status === 502 ? ERRORS.badGateway : ERRORS.unavailable);
}

/** A fault that strikes BEFORE processing: nothing is recorded, the client sees the same failure as after. */
export function failBeforeProcessing(req: Request, res: Response, fault: InjectedFault): void {
  if (fault.kind === 'hang') return; // open until the client gives up or close()
  if (fault.kind === 'reset') req.socket.resetAndDestroy();
  else if (fault.kind === 'garbage') res.status(200).type('application/json').send(GARBAGE_BODY);
  else send5xx(res, fault.status);
}

/**
 * Sends the answer of a request that WAS processed, unless a fault says otherwise:
 * hang = never answer; reset = destroy the socket; garbage = 200 with a non-JSON body; 5xx (when 'after') = an
 * error status in place of the answer (the record says `lost`: the real answer never left).
 */
export async function deliver(req: Request, res: Response, answer: Processed, fault: InjectedFault | undefined, sleep: (ms: number) => Promise<void>): Promise<void> {
  const record = answer.record;
  if (record) {
    res.on('finish', () => {
      if (record.delivery === 'pending') {
        record.delivery = 'delivered';
        record.delivered = true;
      }
    });
    res.on('close', () => {
      if (record.delivery === 'pending') record.delivery = 'lost';
    });
  }
  if (fault?.kind === 'hang') return; // the socket stays open until the client gives up or close()
  if (fault?.kind === 'reset') {
    req.socket.resetAndDestroy();
    return;
  }
  if (answer.delayMs) await sleep(answer.delayMs);
  if (res.destroyed || res.headersSent) return;
  if (fault?.kind === '5xx') {
    if (record) record.delivery = 'lost';
    send5xx(res, fault.status);
    return;
  }
  if (fault?.kind === 'garbage') {
    if (record) record.delivery = 'garbled';
    res.status(200).type('application/json').send(GARBAGE_BODY);
    return;
  }
  res.status(answer.status).json(answer.body);
}
