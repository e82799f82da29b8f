import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A local webhook receiver (node http on port 0 by default) that keeps every request's raw bytes. */

export interface ReceivedHook {
  /** The body exactly as it arrived (what X-Signature signs). */
  raw: Buffer;
  headers: http.IncomingHttpHeaders;
  path: string;
  /** Epoch ms when the body had fully arrived. */
  at: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read nested fields of the event freely
  payload: any;
}

/** A status to answer, or 'hang': keep the request open without answering. */
export type Reply = number | 'hang';

export interface WebhookReceiver {
  url: string;
  port: number;
  hits: ReceivedHook[];
  /** How the n-th request (1-based) is answered; 200 unless a test says otherwise. */
  reply: (hit: ReceivedHook, n: number) => Reply;
  /** Connections accepted so far, and requests open right now / at most at once. */
  connections: number;
  open: number;
  maxOpen: number;
  openSockets(): number;
  clear(): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const sockets = new Set<Socket>();
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    hits: [],
    reply: () => 200,
    connections: 0,
    open: 0,
    maxOpen: 0,
    openSockets: () => sockets.size,
    clear() {
      receiver.hits.length = 0;
      receiver.reply = () => 200;
      receiver.maxOpen = receiver.open;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
  const server = http.createServer((req, res) => {
    receiver.open++;
    receiver.maxOpen = Math.max(receiver.maxOpen, receiver.open);
    res.on('close', () => receiver.open--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let payload: unknown;
      try {
        payload = JSON.parse(raw.toString('utf8'));
      } catch {
        payload = undefined;
      }
      const hit: ReceivedHook = { raw, headers: req.headers, path: req.url ?? '', at: Date.now(), payload };
      receiver.hits.push(hit);
      const reply = receiver.reply(hit, receiver.hits.length);
      if (reply === 'hang') return;
      res.statusCode = reply;
      res.end();
    });
  });
  server.on('connection', (s: Socket) => {
    receiver.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/gateway`;
  return receiver;
}
