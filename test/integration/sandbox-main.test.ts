import { spawn } from 'node:child_process';
import path from 'node:path';
import winston from 'winston';
import { CapturingStream } from '../../src/observability/logger';
import { authorizationHeader, startSandbox } from '../../src/sandbox';
import { callSandbox } from '../../src/sandbox/client';

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
    const deadline = Date.now() + 20_000;
    while (!/http:\/\/127\.0\.0\.1:\d+/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];
    expect(url).toBeDefined();
    expect(out.trim().split('\n')).toHaveLength(1);
    const r = await callSandbox(`${url}/api/v2/`, 'GET', 'customers?limit=1');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-rate-limit')).toBe('1 of 7/min; 1 of 5000/day');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);

  it('when requests carry credentials and card data, then the sandbox logs none of them', async () => {
    const stream = new CapturingStream();
    // A logger WITHOUT redaction, so a leak would show.
    const logger = winston.createLogger({ level: 'silly', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] });
    const sb = await startSandbox({ logger });
    try {
      const header = authorizationHeader(sb.settings.apiKey, sb.settings.apiPin, 'seedseedseed');
      await callSandbox(sb.baseUrl, 'POST', 'transactions', { auth: header, body: { command: 'cc:sale', amount: '1.00', creditcard: { number: '4000100011112224', expiration: '1230', cvc: '123' } } });
      await callSandbox(sb.baseUrl, 'GET', 'customers', { apiPin: '999999' });
      await new Promise((r) => setTimeout(r, 50));
      const text = stream.text();
      expect(text).toContain('sandbox request');
      for (const secret of [header.slice(6), '4000100011112224', sb.settings.apiPin, 's2/seedseedseed']) expect(text).not.toContain(secret);
    } finally {
      await sb.close();
    }
  });
});
