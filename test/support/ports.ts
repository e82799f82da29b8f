import net from 'node:net';

/**
 * Ports for the servers tests start, taken below Linux's ephemeral range (32768-60999 by default).
 *
 * Asking the OS for port 0 and closing it again hands back a port from the ephemeral range, which any outbound
 * connection of the box (a Redis client, the sandbox's keep-alive pool) may take as its local port before the
 * server under test binds it: CI once saw a replica die with EADDRINUSE that way. Below the range, only a
 * listener can hold a port, and each Jest worker walks its own slice, so two workers never pick the same one.
 */
const LOW = 20000;
const HIGH = 32000;
const SLICES = 16;
const SLICE = Math.floor((HIGH - LOW) / SLICES);
const worker = Number(process.env.JEST_WORKER_ID ?? '0') || 0;
const sliceStart = LOW + (worker % SLICES) * SLICE;
let next = Math.floor(Math.random() * SLICE);

/** Whether a listener could bind `port` on every interface right now. */
export function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '0.0.0.0', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A port free on every interface right now, not in the ephemeral range, not handed out before by this worker. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (next++ % SLICE);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}-${sliceStart + SLICE - 1}`);
}
