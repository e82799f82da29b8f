import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

/**
 * Lets an unmodified client whose gateway URL is hard-coded (the official PHP SDK builds
 * `https://<subdomain>.usaepay.com/api/...`) talk to a local sandbox: an HTTP proxy that answers CONNECT for
 * *.usaepay.com:443, terminates TLS with a throw-away certificate made for this run, and pipes the plain
 * HTTP to the sandbox. The client is pointed at it with `https_proxy` and trusts the certificate through its
 * CA setting (`-d curl.cainfo=` for PHP); nothing else of the client changes.
 */

export interface TlsIntercept {
  /** http://127.0.0.1:<port>, for `https_proxy`. */
  proxyUrl: string;
  /** PEM file of the certificate, to trust as the only CA. */
  caFile: string;
  /** CONNECT requests served. */
  tunnels: () => number;
  close: () => Promise<void>;
}

const ALLOWED = /^[a-z0-9-]+\.usaepay\.com:443$/;

export async function startTlsIntercept(targetPort: number): Promise<TlsIntercept> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const caFile = path.join(dir, 'cert.pem');
  // An EC key: generated in milliseconds. Valid for the hosts the SDK builds, for two days.
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', caFile, '-days', '2',
    '-subj', '/CN=sandbox.usaepay.com', '-addext', 'subjectAltName=DNS:sandbox.usaepay.com,DNS:secure.usaepay.com,DNS:www.usaepay.com'], { stdio: 'ignore' });
  const secureContext = tls.createSecureContext({ key: readFileSync(keyFile), cert: readFileSync(caFile) });

  const open = new Set<net.Socket>();
  let tunnels = 0;
  const server = http.createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    if (!ALLOWED.test(req.url ?? '')) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    tunnels++;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    const secure = new tls.TLSSocket(client, { isServer: true, secureContext });
    const upstream = net.connect(targetPort, '127.0.0.1');
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    const end = () => {
      secure.destroy();
      upstream.destroy();
    };
    secure.on('error', end);
    upstream.on('error', end);
    secure.pipe(upstream).pipe(secure);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    proxyUrl: `http://127.0.0.1:${port}`,
    caFile,
    tunnels: () => tunnels,
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
