import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

/** Error code for a connection that did not open in time: the request was certainly not sent. */
export const CONNECT_TIMEOUT = 'ECONNECT_TIMEOUT';

type Connect = (options: http.ClientRequestArgs, cb?: (err: Error | null, socket: Duplex) => void) => Duplex;

// Node's agents have no connect timeout of their own: this destroys a socket still connecting after `ms`,
// so "could not connect" (safe to fail over) is told apart from "no answer after sending" (outcome unknown).
function withConnectTimeout(create: Connect, ms: number, readyEvent: 'connect' | 'secureConnect'): Connect {
  return (options, cb) => {
    const socket = create(options, cb);
    if ((socket as { connecting?: boolean }).connecting) {
      const timer = setTimeout(() => socket.destroy(Object.assign(new Error('connect timeout'), { code: CONNECT_TIMEOUT })), ms);
      timer.unref();
      socket.once(readyEvent, () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    }
    return socket;
  };
}

export interface Agents {
  http: http.Agent;
  https: https.Agent;
  destroy(): void;
}

/** Keep-alive agents shared by every call (one TLS handshake per connection, not per call). */
export function createAgents(connectTimeoutMs: number): Agents {
  const options = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: 64, maxFreeSockets: 16, scheduling: 'lifo' as const };
  const httpAgent = new http.Agent(options);
  const httpsAgent = new https.Agent(options);
  // createConnection is a documented override point of http.Agent; the typings declare it loosely.
  const h = httpAgent as unknown as { createConnection: Connect };
  h.createConnection = withConnectTimeout(h.createConnection.bind(httpAgent), connectTimeoutMs, 'connect');
  const s = httpsAgent as unknown as { createConnection: Connect };
  s.createConnection = withConnectTimeout(s.createConnection.bind(httpsAgent), connectTimeoutMs, 'secureConnect');
  return {
    http: httpAgent,
    https: httpsAgent,
    destroy() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
