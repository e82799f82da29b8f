import net from 'node:net';
import { startBff, type Bff } from '../support/bff';

/**
 * Raw bytes that break HTTP framing, against `node dist/main.js` (the server main.ts builds, which the
 * in-process suites do not use): the process must survive all of them, and (contract: "every response
 * carries X-Request-Id", errors in the envelope) answers must keep the contract even when Node's parser,
 * not Express, refuses the request.
 */

let bff: Bff;
beforeAll(async () => {
  bff = await startBff({ mode: 'process' });
});
afterAll(() => bff?.stop());

function raw(text: string): Promise<string> {
  const { port } = new URL(bff.url);
  return new Promise((resolve) => {
    let out = '';
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => socket.end(text));
    socket.on('data', (d) => (out += d.toString('latin1')));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    socket.setTimeout(5000, () => socket.destroy());
  });
}

const JUNK: Record<string, string> = {
  bareCr: 'GET /v1/sales HTTP/1.1\r\nHost: x\r\nX-A: a\rX-Injected: 1\r\n\r\n',
  obsFold: 'GET /v1/sales HTTP/1.1\r\nHost: x\r\nX-A: a\r\n folded\r\n\r\n',
  byteInPath: 'GET /v1/\x7f HTTP/1.1\r\nHost: x\r\n\r\n',
  hugeHeader: `GET /v1/sales HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  smuggling: 'POST /v1/sales HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  badVersion: 'GET / HTTP/9.9\r\nHost: x\r\n\r\n',
  notHttp: '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03', // a TLS ClientHello on the plain port
};

describe('raw framing attacks on node dist/main.js', () => {
  it('when requests break HTTP framing, then each is refused with a 4xx and the process still serves', async () => {
    const answers: Record<string, string> = {};
    for (const [name, text] of Object.entries(JUNK)) answers[name] = (await raw(text)).slice(0, 12);
    expect(Object.entries(answers).filter(([, a]) => !/^HTTP\/1\.1 4\d\d$/.test(a))).toEqual([]);
    expect((await fetch(`${bff.adminUrl}/readyz`)).status).toBe(200);
    expect((await fetch(`${bff.url}/v1/nothing`)).status).toBe(404);
  });

  // Node's parser would answer these itself (a bare 400, or 431 for a header over 16 KiB) with no envelope
  // and no X-Request-Id; src/http/client-error.ts answers them in the contract's shape.
  it('when Node\'s parser refuses a request, then the answer still carries X-Request-Id and the error envelope', async () => {
    const answer = await raw(JUNK.byteInPath as string);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nx-request-id: [A-Za-z0-9-]{8,}\r\n/i);
    expect(answer).toContain('"code":"invalid_request"');
  });
});
