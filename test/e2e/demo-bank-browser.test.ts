import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Frame, type Page, type Request } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, describeIfChromium, screenshotPath } from '../support/chromium';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';

/**
 * The /demo page pays by bank account (issue 38) in Debian's Chromium, against `node dist/main.js` in development
 * with its embedded sandbox and the gateway's webhooks on (GATEWAY_WEBHOOK_SECRET: the sandbox posts its ach.*
 * events to tokengate, which is how tokengate learns a bank payment moved). The account is typed into the
 * sandbox's Pay.js check form; the page sends the key and the "I agree" it showed; "Move 12 hours" moves
 * tokengate's clock (the sandbox's ACH clock follows it) and the page shows the sale as tokengate answers it.
 * Its own file and service (beside demo-browser.test.ts, whose service runs without webhooks).
 */
const describeWithChromium = describeIfChromium('demo-bank-browser');
jest.setTimeout(120_000);

const ROUTING = '011000015';
/** The sandbox's return test account for R01 (src/sandbox/README.md, ACH). */
const RETURNS_R01 = '10178101';

describeWithChromium('/demo pays by bank account (headless Chromium)', () => {
  let service: ServiceProcess;
  let browser: BrowserContext;
  let userDataDir: string;
  let page: Page;
  let sandboxOrigin = '';
  const toTokengate: Request[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    service = await startServiceProcess({ NODE_ENV: 'development', GATEWAY_WEBHOOK_SECRET: 'demo-bank-webhooks' });
    userDataDir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-chromium-bank-'));
    browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_FLAGS, timeout: 15000, viewport: { width: 900, height: 1300 } });
    page = await browser.newPage();
    page.on('request', (req) => {
      if (req.url().startsWith(service.url)) toTokengate.push(req);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()} (${msg.location().url})`);
    });
    const res = await page.goto(`${service.url}/demo`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    await page.locator('#pay-bank:not([disabled])').waitFor({ timeout: 20_000 });
    await page.locator('#bank-move:not([disabled])').waitFor({ timeout: 20_000 });
    sandboxOrigin = new URL((await page.locator('iframe[data-usaepay="payment-check"]').getAttribute('src')) ?? '').origin;
  });

  afterAll(async () => {
    await browser?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await service?.stop();
  });

  const checkFrame = async (): Promise<Frame> => {
    const frame = await (await page.locator('iframe[data-usaepay="payment-check"]').elementHandle())?.contentFrame();
    if (!frame) throw new Error('no Pay.js check form');
    return frame;
  };

  /** Types the account into the check form, ticks "I agree", pays; answers the sale key the page shows. */
  async function payByBank(account: string, amount: string): Promise<string> {
    const frame = await checkFrame();
    await frame.locator('#ach-holder').fill('Pat Doe');
    await frame.locator('#ach-routing').fill(ROUTING);
    await frame.locator('#ach-account').fill(account);
    await page.locator('#ach-agree').check();
    await page.locator('#bank-amount').fill(amount);
    const before = await page.locator('#bank-payments li[data-sale]').count();
    await page.locator('#pay-bank').click();
    await page.locator('#answer-line', { hasText: `Bank payment of ${amount} made — pending` }).waitFor({ timeout: 20_000 });
    await page.locator('#bank-payments li[data-sale]').nth(before).waitFor();
    return (await page.locator('#bank-payments li[data-sale]').first().getAttribute('data-sale')) ?? '';
  }

  /** The sandbox's last ach.* event about `sale`, as the status tokengate should then show. */
  async function sandboxSays(sale: string): Promise<string> {
    const { events } = (await (await fetch(`${sandboxOrigin}/_sandbox/webhooks`)).json()) as { events: { event_type: string; payload: unknown }[] };
    const mine = events.filter((e) => e.event_type.startsWith('ach.') && JSON.stringify(e.payload).includes(sale));
    const last = mine[mine.length - 1]?.event_type;
    return last ? last.slice('ach.'.length) : 'pending';
  }

  /**
   * Presses "Move 12 hours" until the page shows `target` for `sale`; after each press, waits for the page to show
   * what the sandbox's events say (the webhooks reach tokengate a moment after the clock moves). Answers each
   * status the page showed, in order.
   */
  async function moveUntil(sale: string, target: string, maxMoves: number): Promise<string[]> {
    const row = page.locator(`#bank-payments li[data-sale="${sale}"]`);
    const seen = [(await row.getAttribute('data-status')) ?? ''];
    for (let i = 0; i < maxMoves && seen[seen.length - 1] !== target; i++) {
      const clock = (await page.locator('#bank-clock-now').textContent()) ?? '';
      await page.locator('#bank-move').click();
      await page.locator('#bank-clock-now').filter({ hasNotText: clock }).waitFor({ timeout: 20_000 });
      const expected = await sandboxSays(sale);
      await page.locator(`#bank-payments li[data-sale="${sale}"][data-status="${expected}"]`).waitFor({ timeout: 30_000 });
      if (seen[seen.length - 1] !== expected) seen.push(expected);
    }
    return seen;
  }

  it('when an account is typed into the check form, "I agree" ticked and Pay pressed, then one sale carries the key and the text shown, never the account; as the clock moves 12 hours at a time, the page shows it pending, submitted, then settled', async () => {
    const sale = await payByBank('12345678', '25.00');
    const sent = toTokengate.filter((r) => r.method() === 'POST' && r.url().endsWith('/v1/sales')).map((r) => JSON.parse(r.postData() ?? '{}') as Record<string, unknown>);
    const mandate = ((await page.locator('#ach-mandate').textContent()) ?? '').replace(/\s+/g, ' ').trim();
    expect(sent).toEqual([{ customer: expect.any(String), payment_key: expect.any(String), amount: '25.00', authorization: { text: mandate } }]);
    expect(mandate).toMatch(/authorize .* debit/);
    const shown = await moveUntil(sale, 'settled', 6);
    expect(shown).toEqual(['pending', 'submitted', 'settled']);
    const history = await page.locator('#log li').allTextContents();
    expect(history.some((l) => l.includes('Bank payment of 25.00 is now submitted'))).toBe(true);
    expect(history.some((l) => l.includes('Bank payment of 25.00 is now settled'))).toBe(true);
  });

  it('when the return test account pays, then the page shows it settled and later returned with the bank\'s code (R01) and the amount taken back', async () => {
    const sale = await payByBank(RETURNS_R01, '31.00');
    const shown = await moveUntil(sale, 'returned', 12);
    expect(shown).toEqual(['pending', 'submitted', 'settled', 'returned']);
    await expect(page.locator(`#bank-payments li[data-sale="${sale}"]`).textContent()).resolves.toMatch(/returned \(R01, \d{4}-\d{2}-\d{2}\): 31\.00 taken back/);
    await page.screenshot({ path: screenshotPath('demo-bank.png'), fullPage: true });
  });

  it('when everything the page sent to tokengate is read, then no routing or account number was in it, and no page error was logged', () => {
    const carried = toTokengate.map((r) => [r.url(), r.postData() ?? '', ...Object.values(r.headers())].join('\n'));
    expect(carried.filter((c) => c.includes(ROUTING) || c.includes('12345678') || c.includes(RETURNS_R01))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
