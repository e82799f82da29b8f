import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import winston from 'winston';
import { CapturingStream } from '../../src/observability/logger';
import { authorizationHeader, startSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';
import { eventually } from '../support/wait';
import { startWebhookReceiver } from '../support/webhook-receiver';

const ROOT = path.resolve(__dirname, '..', '..');
// Runs src/sandbox/main.ts without a build: TypeScript's own transpiler as a require hook.
const RUN_MAIN = `
const fs = require('fs'); const ts = require('typescript');
require.extensions['.ts'] = (m, f) => m._compile(ts.transpileModule(fs.readFileSync(f, 'utf8'), { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText, f);
require('./src/sandbox/main.ts');`;

describe('sandbox main and logging', () => {
  it('when main runs with SANDBOX_* settings, then it prints its URL, serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['-e', RUN_MAIN], { cwd: ROOT, env: { ...process.env, NODE_ENV: 'development', SANDBOX_PORT: '0', SANDBOX_RATE_PER_MINUTE: '7', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 90_000;
    while (!/http:\/\/127\.0\.0\.1:\d+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];
    expect(url).toBeDefined();
    expect(out.trim().split('\n')).toHaveLength(1);
    const r = await callSandbox(`${url}/api/v2/`, 'GET', 'customers?limit=1');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-rate-limit')).toBe('1 of 7/min; 1 of 5000/day');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('when requests carry credentials and card data, then the sandbox logs none of them', async () => {
    const stream = new CapturingStream();
    // A logger WITHOUT redaction, so a leak would show.
    const logger = winston.createLogger({ level: 'silly', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] });
    const sb = await startSandbox({ logger });
    try {
      const header = authorizationHeader(sb.settings.apiKey, sb.settings.apiPin, 'seedseedseed');
      await callSandbox(sb.baseUrl, 'POST', 'transactions', { auth: header, body: { command: 'cc:sale', amount: '1.00', creditcard: { number: '4000100011112224', expiration: '1230', cvc: '123' } } });
      await callSandbox(sb.baseUrl, 'GET', 'customers', { apiPin: '999999' });
      // Each request's line is written when its answer ends: waited for, not slept on (issue 41).
      await eventually(() => (stream.text().match(/sandbox request/g) ?? []).length >= 2);
      const text = stream.text();
      for (const secret of [header.slice(6), '4000100011112224', sb.settings.apiPin, 's2/seedseedseed']) expect(text).not.toContain(secret);
    } finally {
      await sb.close();
    }
  });

  it('when main runs with SANDBOX_WEBHOOK_* set, then a sale voided straight at it (the demo of docs/sandbox.md) posts both events, signed, and logs neither key nor body', async () => {
    const receiver = await startWebhookReceiver();
    const child = spawn(process.execPath, ['-e', RUN_MAIN], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'development', SANDBOX_PORT: '0', LOG_LEVEL: 'http', SANDBOX_WEBHOOK_URLS: receiver.url, SANDBOX_WEBHOOK_SECRET: 'demo-hook-key', SANDBOX_WEBHOOK_RETRY_SCHEDULE_MS: '100,100' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually(() => /http:\/\/127\.0\.0\.1:\d+/.test(out), 20_000);
      const base = `${/http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0]}/api/v2/`;
      // The documented example header (gateway-facts.md), as the curl of docs/sandbox.md sends it.
      const auth = authorizationHeader('_V87Qtb513Cd3vabM7RC0TbtJWeSo8p7', '123456', 'abcdefghijklmnop');
      const sale = await callSandbox(base, 'POST', 'transactions', { auth, body: { command: 'cc:sale', amount: '5.00', creditcard: { number: '4000100011112224', expiration: '1230', cvc: '123' } } });
      const key = (sale.json as { key: string }).key;
      await callSandbox(base, 'POST', 'transactions', { auth, body: { command: 'void', trankey: key } });
      await eventually(() => receiver.hits.length >= 2);
      expect(receiver.hits.map((h) => [h.payload.event_type, h.payload.event_body.object.key]).sort()).toEqual([['transaction.sale.success', key], ['transaction.sale.voided', key]]);
      for (const h of receiver.hits) expect(h.headers['x-signature']).toBe(createHmac('sha256', 'demo-hook-key').update(h.raw).digest('hex'));
      await eventually(() => (out.match(/sandbox webhook delivered/g) ?? []).length >= 2);
      for (const leak of ['demo-hook-key', '4000xxxxxxxx2224', key]) expect(out).not.toContain(leak);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await receiver.close();
    }
  });
});
