import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { DEV_DEFAULTS } from '../../src/config';
import { startSandbox, type RunningSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import { ROOT, runServiceToExit, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { eventually } from '../support/wait';

/**
 * The contract's "`npm ci && npm start` on a fresh clone prints a curl that succeeds against it as printed".
 * `npm start` is a build when a source is newer than dist/ (prestart) then `node dist/main.js` in development mode; the test runs the
 * built file as a process (npm is not run inside a test), reads the banner from its stdout, and runs the
 * printed `export TOKEN=...` line and curl commands through bash, byte for byte as printed.
 */

interface Banner {
  exportLine: string;
  saleCurl: string;
  methodsCurl: string;
}

/** Finds the banner's commands in the process output (log lines are interleaved; the banner is one write). */
function parseBanner(output: string): Banner | undefined {
  const lines = output.split('\n');
  const exportLine = lines.find((l) => /^\s*export TOKEN=\S+$/.test(l));
  const start = lines.findIndex((l) => /^\s*curl -s -X POST /.test(l));
  const methodsCurl = lines.find((l) => /^\s*curl -s \S+\/payment_methods /.test(l));
  if (!exportLine || start < 0 || !methodsCurl) return undefined;
  let end = start;
  while (end < lines.length - 1 && (lines[end] ?? '').endsWith('\\')) end++;
  return { exportLine, saleCurl: lines.slice(start, end + 1).join('\n'), methodsCurl };
}

async function waitForBanner(service: ServiceProcess, timeoutMs = 5000): Promise<Banner> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const banner = parseBanner(service.output());
    if (banner) return banner;
    if (Date.now() > deadline) throw new Error(`no dev banner on stdout:\n${service.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface CurlAnswer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Runs the printed lines in `bash -c`, unchanged. The status and content type are read without editing the
 * command: curl also reads its config file from CURL_HOME, where this test puts one `write-out` option.
 */
function runAsPrinted(script: string, curlHome: string): Promise<CurlAnswer> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: curlHome, CURL_HOME: curlHome }, timeout: 10000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`bash -c failed (${err.message}): ${stderr}`));
      const match = /\n__curl__ (\d{3}) (.*)$/.exec(stdout);
      if (!match) return reject(new Error(`no status line in curl output: ${stdout.slice(0, 500)}`));
      resolve({ status: Number(match[1]), contentType: match[2] ?? '', body: stdout.slice(0, match.index) });
    });
  });
}

describe('npm start in development prints commands that work as printed', () => {
  let service: ServiceProcess;
  let banner: Banner;
  let curlHome: string;

  beforeAll(async () => {
    // What `npm start` runs after its build; no REDIS_URL, so in-memory stores and the embedded sandbox.
    // startServiceProcess passes free PORT and ADMIN_PORT (the defaults 8080/9090 could be taken here).
    service = await startServiceProcess({ NODE_ENV: 'development' });
    banner = await waitForBanner(service);
    curlHome = mkdtempSync(path.join(os.tmpdir(), 'tokengate-curl-'));
    writeFileSync(path.join(curlHome, '.curlrc'), 'write-out = "\\n__curl__ %{http_code} %{content_type}"\n');
  });

  afterAll(async () => {
    await service?.stop();
    if (curlHome) rmSync(curlHome, { recursive: true, force: true });
  });

  it('when the service starts in development, then the banner names its own URL, the docs and a dev token', () => {
    const out = service.output();
    expect(out).toContain(`tokengate (development) listening on ${service.url}\n`);
    expect(out).toContain(`API docs:                 ${service.url}/docs`);
    expect(banner.saleCurl.split('\n')[0]).toContain(` ${service.url}/v1/sales \\`);
    expect(banner.methodsCurl).toContain(` ${service.url}/v1/customers/`);
    expect(banner.exportLine).toMatch(/export TOKEN=[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('when the service starts in development, then the banner prints the dev JWT secret, and a token signed with it is accepted', async () => {
    const lines = service.output().split('\n');
    const heading = lines.findIndex((l) => l.startsWith('Dev JWT secret (JWT_SECRET, HS256; development only'));
    expect(heading).toBeGreaterThanOrEqual(0);
    const printed = (lines[heading + 1] ?? '').trim();
    expect(printed).toBe(DEV_DEFAULTS.jwtSecret);
    const custkey = /\/v1\/customers\/([^/]+)\/payment_methods/.exec(banner.methodsCurl)?.[1] ?? '';
    const own = jwt.sign({ sub: 'own-signer', custkey, scope: 'payment_methods:read' }, printed, { algorithm: 'HS256', issuer: 'tokengate-dev', audience: 'tokengate', expiresIn: 300 });
    const res = await fetch(`${service.url}/v1/customers/${custkey}/payment_methods`, { headers: { authorization: `Bearer ${own}` } });
    expect(res.status).toBe(200);
  });

  it('when the printed export and sale curl are run in bash, then the sale is approved with 201 JSON', async () => {
    const answer = await runAsPrinted(`${banner.exportLine}\n${banner.saleCurl}`, curlHome);
    expect({ status: answer.status, contentType: answer.contentType }).toEqual({ status: 201, contentType: expect.stringMatching(/^application\/json/) });
    const sale = JSON.parse(answer.body) as { result_code?: string; amount?: string; creditcard?: { number?: string } };
    expect(sale).toMatchObject({ result_code: 'A', amount: '10.00', creditcard: { number: '4000xxxxxxxx2224' } });
  });

  it('when the printed sale curl is pasted a second time, then it charges again (a new Idempotency-Key each run)', async () => {
    const first = await runAsPrinted(`${banner.exportLine}\n${banner.saleCurl}`, curlHome);
    const second = await runAsPrinted(`${banner.exportLine}\n${banner.saleCurl}`, curlHome);
    expect([first.status, second.status]).toEqual([201, 201]);
    const keys = [first, second].map((a) => (JSON.parse(a.body) as { key?: string }).key);
    expect(keys[0]).toEqual(expect.any(String));
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('when the service starts in development without GATEWAY_WEBHOOK_SECRET, then the banner says the gateway\'s webhooks are off and how to turn them on, and /v1/webhooks/gateway answers 404', async () => {
    expect(service.output()).toContain('  gateway webhooks:         off (set GATEWAY_WEBHOOK_SECRET, any 8+ characters, to have the embedded sandbox post them here)\n');
    const res = await fetch(`${service.url}/v1/webhooks/gateway`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(404);
  });

  it('when the printed payment-methods curl is run in bash, then 200 JSON lists only masked cards', async () => {
    const answer = await runAsPrinted(`${banner.exportLine}\n${banner.methodsCurl}`, curlHome);
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^application\/json/);
    const list = JSON.parse(answer.body) as { type?: string; data?: { ccnum4last?: string }[] };
    expect(list.type).toBe('list');
    expect(list.data?.length).toBeGreaterThan(0);
    for (const method of list.data ?? []) expect(method.ccnum4last).toMatch(/^\d{4}$/);
    expect(list.data?.map((m) => m.ccnum4last)).toContain('2224');
    // No full card number anywhere in the answer (masked forms such as 4000xxxxxxxx2224 only).
    expect(answer.body).not.toMatch(/\d{12,}/);
  });
});

describe('npm start in development with GATEWAY_WEBHOOK_SECRET: the embedded sandbox posts the gateway\'s webhooks to tokengate', () => {
  let service: ServiceProcess;
  const secret = 'dev-webhook-key-7f3a91';

  beforeAll(async () => {
    service = await startServiceProcess({ NODE_ENV: 'development', GATEWAY_WEBHOOK_SECRET: secret });
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('when a sale is voided at the sandbox directly (as in the gateway\'s console), then the sale\'s view shows it voided, confirmed by one gateway read in spare budget, and the payment events hold sale.succeeded then sale.voided', async () => {
    const banner = await waitForBanner(service);
    const out = service.output();
    const receiver = `${service.url}/v1/webhooks/gateway`;
    expect(out).toContain(`  gateway webhooks:         posted by the embedded sandbox to ${receiver} (signed with your GATEWAY_WEBHOOK_SECRET)\n`);
    expect(out).not.toContain(secret);
    const sandboxBase = /^\s*embedded sandbox gateway: (\S+)$/m.exec(out)?.[1] ?? '';
    const sandboxOrigin = new URL(sandboxBase).origin;
    // The printed sale curl's body names the dev customer and its approved card; an internal service's token reads the events.
    const body = JSON.parse(/-d '(.*)'/.exec(banner.saleCurl)?.[1] ?? '{}') as { customer: string; payment_method: string };
    const bearer = jwt.sign({ sub: 'dev-ledger', scope: 'customers:any sales:create sales:read events:read' }, DEV_DEFAULTS.jwtSecret, { algorithm: 'HS256', issuer: 'tokengate-dev', audience: 'tokengate', expiresIn: 300 });
    const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
    const sale = await fetch(`${service.url}/v1/sales`, { method: 'POST', headers: { ...headers, 'idempotency-key': `dev-hooks-${Date.now().toString(36)}` }, body: JSON.stringify({ ...body, amount: '6.00' }) });
    expect(sale.status).toBe(201);
    const key = ((await sale.json()) as { key: string }).key;
    const typesOf = async () => (((await (await fetch(`${service.url}/v1/events?limit=1000`, { headers })).json()) as { data: { type: string; data: { key: string } }[] }).data).filter((e) => e.data.key === key).map((e) => e.type);
    /** Gateway reads tokengate made (the sandbox's own count): transaction look-ups, lists and batches. */
    const reads = async () => Object.values(((await callSandbox(sandboxOrigin, 'GET', '/_sandbox/stats', { auth: false })).json as { endpoints: Record<string, { acceptedByKind: Record<string, number> }> }).endpoints)
      .reduce((n, e) => n + (e.acceptedByKind.lookup ?? 0) + (e.acceptedByKind.batches ?? 0), 0);
    const before = await reads();

    const voided = await callSandbox(sandboxBase, 'POST', 'transactions', { body: { command: 'void', trankey: key } });
    expect(voided.json).toMatchObject({ result_code: 'A' });
    await eventually(async () => (await typesOf()).includes('sale.voided'), 5000);
    const view = await fetch(`${service.url}/v1/sales/${key}`, { headers });
    expect(((await view.json()) as { status: string }).status).toBe('voided');
    expect(view.headers.get('cache-status')).toMatch(/hit/);
    expect(await typesOf()).toEqual(['sale.succeeded', 'sale.voided']);
    // A change tokengate did not make is checked against the gateway (guarantee 12): one read, no more.
    await eventually(async () => (await reads()) === before + 1, 5000);
    // The sandbox's own record: the void's webhook went to tokengate's receiver and was taken (204).
    const tries = ((await callSandbox(sandboxOrigin, 'GET', '/_sandbox/webhooks', { auth: false })).json as { attempts: { url: string; event_type: string; outcome: string; status?: number }[] }).attempts;
    expect(tries.filter((a) => a.event_type === 'transaction.sale.voided')).toEqual([expect.objectContaining({ url: receiver, outcome: 'delivered', status: 204 })]);
  });
});

describe('npm start in development with an external gateway (GATEWAY_BASE_URL)', () => {
  let sandbox: RunningSandbox;
  let service: ServiceProcess;

  beforeAll(async () => {
    // An emulator started apart stands in for an external sandbox: the service knows none of its customers.
    sandbox = await startSandbox({ port: 0 });
    service = await startServiceProcess({ NODE_ENV: 'development', GATEWAY_BASE_URL: sandbox.baseUrl });
  });

  afterAll(async () => {
    await service?.stop();
    await sandbox?.close();
  });

  async function bannerText(): Promise<string> {
    const deadline = Date.now() + 5000;
    while (!/List a customer's payment methods/.test(service.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return service.output();
  }

  it('when it starts, then the banner prints no token bound to a placeholder, but how to mint one, and says the curls\' placeholders must be replaced', async () => {
    const out = await bannerText();
    expect(out).toContain(`  gateway:                  ${sandbox.baseUrl}`);
    expect(out).not.toMatch(/^\s*export TOKEN=/m);
    expect(out).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
    expect(out).toContain('  npm run token -- --sub dev --custkey <customer key> --scope "sales:create payment_methods:read tokens:read"');
    expect(out).toContain("Charge a customer's stored card (replace CUSTOMER_KEY and PAYMENT_METHOD_KEY with real keys first):");
    expect(out).toContain("List a customer's payment methods (replace CUSTOMER_KEY first):");
  });

  it('when the printed mint command is run for a real customer, then its token lists that customer\'s payment methods', async () => {
    const command = /^\s*npm run token -- (.*)$/m.exec(await bannerText())?.[1] ?? '';
    const custkey = sandbox.fixtures.firstCustomer().key;
    // What `npm run token --` runs (package.json), with the placeholder replaced as the banner says.
    const token = await new Promise<string>((resolve, reject) => {
      execFile('bash', ['-c', `node dist/cli/token.js ${command.replace('<customer key>', custkey)}`], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development' } }, (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim())));
    });
    const res = await fetch(`${service.url}/v1/customers/${custkey}/payment_methods`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});

describe('npm start in development with JWTs verified by a public key (RS256, no HS secret)', () => {
  let service: ServiceProcess;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  beforeAll(async () => {
    service = await startServiceProcess({
      NODE_ENV: 'development',
      JWT_ALGORITHMS: 'RS256',
      JWT_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    });
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('when it starts, then it stays up without a dev token, serves a sale signed by the caller\'s key, and has no demo page', async () => {
    const deadline = Date.now() + 5000;
    while (!service.output().includes('No dev token') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(service.output()).toContain('No dev token: JWTs are verified with RS256');
    expect(service.output()).not.toMatch(/export TOKEN=/);
    const fixtures = (await import('../../config/sandbox-fixtures.json')).customers;
    const customer = fixtures[0]?.key as string;
    const paymentMethod = fixtures[0]?.payment_methods[0]?.key as string;
    const bearer = jwt.sign({ sub: 'rs-user', custkey: customer, scope: 'sales:create' }, privateKey, { algorithm: 'RS256', issuer: 'tokengate-dev', audience: 'tokengate', expiresIn: 300 });
    const sale = await fetch(`${service.url}/v1/sales`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'idempotency-key': `rs-${Date.now().toString(36)}` },
      body: JSON.stringify({ customer, payment_method: paymentMethod, amount: '10.00' }),
    });
    expect(sale.status).toBe(201);
    expect((await fetch(`${service.url}/demo`)).status).toBe(404);
    expect(service.child.exitCode).toBeNull();
  });
});

describe('npm start in development with an operator\'s own JWT_SECRET', () => {
  let service: ServiceProcess;
  const ownSecret = 'operator-chosen-secret-0123456789';

  beforeAll(async () => {
    service = await startServiceProcess({ NODE_ENV: 'development', JWT_SECRET: ownSecret });
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('when it starts, then the banner still prints a dev token but never that secret', async () => {
    const deadline = Date.now() + 5000;
    while (!/export TOKEN=/.test(service.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(service.output()).toContain('Tokens are signed with your JWT_SECRET (not printed).');
    expect(service.output()).not.toContain(ownSecret);
    expect(service.output()).not.toContain(DEV_DEFAULTS.jwtSecret);
  });
});

describe('npm start in development when a port is taken', () => {
  let blocker: net.Server;
  let takenPort: number;

  beforeAll(async () => {
    blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    takenPort = (blocker.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((r) => blocker.close(r));
  });

  it('when PORT is taken, then it exits 1 with one line naming PORT and the port, and no stack', async () => {
    const { code, out, err } = await runServiceToExit({ NODE_ENV: 'development', HOST: '127.0.0.1', PORT: String(takenPort), ADMIN_PORT: '0' });
    expect(code).toBe(1);
    expect(err).toBe(`tokengate: PORT ${takenPort} is already in use\n`);
    expect(out).not.toMatch(/unhandled rejection|EADDRINUSE|export TOKEN=/);
  });

  it('when ADMIN_PORT is taken, then it exits 1 with one line naming ADMIN_PORT and the port', async () => {
    const { code, out, err } = await runServiceToExit({ NODE_ENV: 'development', HOST: '127.0.0.1', PORT: '0', ADMIN_PORT: String(takenPort) });
    expect(code).toBe(1);
    expect(err).toBe(`tokengate: ADMIN_PORT ${takenPort} is already in use\n`);
    expect(out).not.toMatch(/unhandled rejection|EADDRINUSE/);
  });
});
