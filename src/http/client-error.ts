import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../observability/logger';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';

/**
 * Requests Node's HTTP parser refuses before Express sees them (bad bytes, folded or oversized headers,
 * smuggling attempts) get our error envelope and an X-Request-Id too, instead of Node's bare 400/431
 * (contract: every response carries X-Request-Id; 431 is not in the error table). The connection closes.
 */
export function answerClientErrors(server: http.Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's own handler: nothing may be written once a response on this socket has started.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const id = newRequestId();
    // A refused HEAD request gets the status and headers only: a body would corrupt the client's framing.
    const raw = (err as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket;
    const head = raw !== undefined && raw.subarray(0, 5).toString('latin1').toUpperCase() === 'HEAD ';
    const body = head ? '' : JSON.stringify({ error: { code: 'invalid_request', message: 'The request is invalid.', request_id: id } });
    logger.debug('request refused by the HTTP parser', { code: err.code, request_id: id });
    socket.end(
      'HTTP/1.1 400 Bad Request\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `${REQUEST_ID_HEADER}: ${id}\r\n` +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
