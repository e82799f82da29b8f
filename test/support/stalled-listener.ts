import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export interface StalledListener {
  port: number;
  close(): void;
}

/**
 * A TCP port on 127.0.0.1 where a new connection never completes its handshake: a socket listening with a
 * backlog of 0 that never accepts, its queue already full, so the kernel drops further SYNs. What a
 * firewalled or overloaded host looks like from a client. Node always accepts, hence python3 (Debian's).
 */
export async function startStalledListener(): Promise<StalledListener> {
  const py: ChildProcess = spawn('python3', ['-c', [
    'import socket, sys, time',
    's = socket.socket()',
    "s.bind(('127.0.0.1', 0))",
    's.listen(0)',
    'print(s.getsockname()[1], flush=True)',
    'sys.stdin.read()',
  ].join('\n')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    py.once('error', (err) => reject(new Error(`python3 is needed for the stalled-listener harness: ${err.message}`)));
    py.stdout?.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
  });
  // Fill the accept queue: after these, the kernel drops every SYN to the port.
  const fillers = [0, 1, 2].map(() => net.connect(port, '127.0.0.1').on('error', () => undefined));
  await new Promise((r) => setTimeout(r, 100));
  return {
    port,
    close() {
      for (const s of fillers) s.destroy();
      py.stdin?.end();
      py.kill();
    },
  };
}
