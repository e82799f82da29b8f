import { execFile } from 'node:child_process';
import { ROOT, startServiceProcess, type ServiceProcess } from '../support/service-process';
import { TEST_JWT_ENV } from '../support/bff';

/**
 * `npm run payment-key -- --card …` (issue 41, item 7): a Pay.js payment key for a test card without a browser,
 * against what `npm start` runs (the built service in development mode, its embedded sandbox); the key pays a
 * sale through tokengate. Refused in production, and it never repeats the card number it was given.
 */

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '-s', 'payment-key', '--', ...args], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }, (error, out, err) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

describe('npm run payment-key', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startServiceProcess({ NODE_ENV: 'development' });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('when a test card is given with the running service\'s URL, then it prints one payment key, and a sale paid with it is approved', async () => {
    const made = await run(['--card', '4000100011112224', '--url', service.url], { NODE_ENV: 'development' });
    expect([made.code, made.err]).toEqual([0, '']);
    const key = made.out.trim();
    expect(key).toMatch(/^[A-Za-z0-9_-]+$/);
    const session = (await (await fetch(`${service.url}/demo/session`)).json()) as { customer: string; token: string };
    const sale = await fetch(`${service.url}/v1/sales`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json', 'idempotency-key': `pk-cli-${Date.now()}` },
      body: JSON.stringify({ customer: session.customer, payment_key: key, amount: '2.50' }),
    });
    expect(sale.status).toBe(201);
    expect(((await sale.json()) as { amount: string; result_code: string })).toMatchObject({ amount: '2.50', result_code: 'A' });
  });

  it('when the card is not a card number, then exit 2 with a line that does not repeat it', async () => {
    const bad = await run(['--card', '4000100011112225', '--url', service.url], { NODE_ENV: 'development' });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^payment-key: the sandbox refused the card/);
    expect(bad.out + bad.err).not.toContain('4000100011112225');
  });

  it('when NODE_ENV is production, then exit 2 and nothing is asked of anyone', async () => {
    const refused = await run(['--card', '4000100011112224', '--url', service.url], { NODE_ENV: 'production', ...TEST_JWT_ENV });
    expect([refused.code, refused.out]).toEqual([2, '']);
    expect(refused.err).toMatch(/^payment-key: refusing .*NODE_ENV=production/);
  });
});
