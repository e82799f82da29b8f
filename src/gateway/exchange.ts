import type { Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header';

/** One answer read whole: what `interpret` needs and nothing streamed. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** The exchange was stopped before its answer was read: by the deadline, or by the caller's signal. */
export class ExchangeAborted extends Error {
  constructor(readonly by: 'deadline' | 'caller') {
    super(by === 'deadline' ? 'deadline passed' : 'abandoned by the caller');
    this.name = 'ExchangeAborted';
  }
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * One request through undici's dispatcher, the whole answer read as UTF-8 text (a leading BOM dropped, as
 * undici's `body.text()` does), within `timeoutMs` over the whole exchange, answer included.
 *
 * Why not `dispatcher.request()`: for a gateway answer of a few hundred bytes read whole, that API's answer
 * stream (a Readable per call), its async-resource scope and its AbortSignal listener were most of the client's
 * cost on the sale path (issue 40, item 1: an on-CPU profile, bench/perf-sale.js). This handler (undici's
 * documented `dispatch` handler interface) collects the chunks instead; the connection pool, the connect timeout,
 * `maxResponseSize`, the parser and every transport error are undici's, unchanged, so `classifyTransportError`
 * reads the same errors.
 *
 * The deadline rejects at once, even while the request still waits for a connection; the request is then
 * aborted as soon as undici hands it a controller (before it is written, if it was not yet).
 */
export function exchange(dispatcher: Dispatcher, request: Dispatcher.DispatchOptions, timeoutMs: number, signal?: AbortSignal): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let stopped: ExchangeAborted | undefined;
    let settled = false;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    const finish = (err: Error | undefined, answer?: Answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
      if (err) reject(err);
      else resolve(answer as Answer);
    };
    const stop = (by: 'deadline' | 'caller') => {
      if (settled) return;
      stopped = new ExchangeAborted(by);
      controller?.abort(stopped);
      finish(stopped);
    };
    const onCallerAbort = () => stop('caller');
    const timer = setTimeout(stop, timeoutMs, 'deadline');
    if (signal?.aborted) {
      stop('caller');
      return;
    }
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    dispatcher.dispatch(request, {
      onRequestStart(c) {
        // Called again when undici re-sends an idempotent request on a fresh socket (a kept-alive one that had
        // closed): nothing of the first try is kept.
        controller = c;
        status = 0;
        headers = {};
        chunks.length = 0;
        if (stopped) c.abort(stopped);
      },
      onResponseStart(_c, statusCode, responseHeaders) {
        // 1xx informational answers come first and say nothing of the outcome.
        if (statusCode < 200) return;
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(_c, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        let body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
        if (body.length >= 3 && body[0] === UTF8_BOM[0] && body[1] === UTF8_BOM[1] && body[2] === UTF8_BOM[2]) body = body.subarray(3);
        finish(undefined, { status, headers, text: body.toString('utf8') });
      },
      onResponseError(_c, err) {
        finish(err);
      },
    });
  });
}
