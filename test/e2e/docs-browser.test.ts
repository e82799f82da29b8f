import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS, describeIfChromium, screenshotPath } from '../support/chromium';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { SCOPES } from '../../src/http/scopes';

/**
 * The /docs page in a real browser: Debian's Chromium driven by playwright-core (the machines cannot download
 * Playwright's own browsers). Checks that the page's script renders the sale operation under the strict CSP
 * of src/http/security.ts, with no console error, page error or CSP violation, and saves a screenshot.
 * Where Chromium is absent the suite is skipped with one message; .ci/run installs it.
 */
const describeWithChromium = describeIfChromium('docs-browser');

interface Problems {
  console: string[];
  pageErrors: string[];
  failedRequests: string[];
  /** Answers of 400 and above, as `status url`. */
  badAnswers: string[];
}

/** Collects everything that would show the page misbehaving; CSP violations appear as console errors too. */
function watch(page: Page): Problems {
  const problems: Problems = { console: [], pageErrors: [], failedRequests: [], badAnswers: [] };
  page.on('console', (msg) => {
    if (msg.type() !== 'error' && msg.type() !== 'warning') return;
    problems.console.push(`${msg.type()}: ${msg.text()} (${msg.location().url})`);
  });
  page.on('pageerror', (err) => problems.pageErrors.push(err.message));
  page.on('requestfailed', (req) => problems.failedRequests.push(`${req.url()}: ${req.failure()?.errorText ?? 'failed'}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.badAnswers.push(`${res.status()} ${res.url()}`);
  });
  return problems;
}

// Runs in the page before its own scripts (added through DevTools, so the CSP does not apply to it):
// records every `securitypolicyviolation` event, the browser's own report of a blocked resource.
const RECORD_CSP_VIOLATIONS = `window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline'));
});`;

async function cspViolations(page: Page): Promise<string[]> {
  return (await page.evaluate('window.__cspViolations')) as string[];
}

describeWithChromium('docs page in headless Chromium', () => {
  let service: ServiceProcess;
  let browser: BrowserContext;
  let userDataDir: string;

  beforeAll(async () => {
    // Development mode without REDIS_URL: in-memory stores and the embedded sandbox (on port 0);
    // startServiceProcess gives PORT and ADMIN_PORT free ports.
    service = await startServiceProcess({ NODE_ENV: 'development' });
    userDataDir = mkdtempSync(path.join(os.tmpdir(), 'tokengate-chromium-'));
    // A new empty profile, as the probe used; Playwright takes it as launchPersistentContext's first argument.
    browser = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, args: CHROMIUM_FLAGS, timeout: 15000, viewport: { width: 1100, height: 1400 } });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  async function openDocs(): Promise<{ page: Page; problems: Problems }> {
    const page = await browser.newPage();
    const problems = watch(page);
    await page.addInitScript(RECORD_CSP_VIOLATIONS);
    const res = await page.goto(`${service.url}/docs`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    // Swagger UI renders one block per operation, id operations-<tag>-<operationId>.
    await page.locator('#operations-sales-createSale').waitFor({ state: 'visible', timeout: 15000 });
    return { page, problems };
  }

  it('when /docs is opened, then Swagger UI renders the sale operation and its schemas with no console error or CSP violation', async () => {
    const { page, problems } = await openDocs();

    const sale = page.locator('#operations-sales-createSale');
    expect((await sale.locator('.opblock-summary-method').textContent())?.trim()).toBe('POST');
    expect((await sale.locator('.opblock-summary-path').innerText()).replace(/\u200b/g, '').trim()).toBe('/v1/sales');
    await sale.locator('.opblock-summary').click();
    // Swagger UI renders the expanded operation after the click's own tick: wait for it before reading.
    await sale.locator('.opblock-body .responses-wrapper').waitFor({ state: 'visible', timeout: 5000 });
    const body = (await sale.innerText()).replace(/\s+/g, ' ');
    for (const piece of ['Idempotency-Key', '201', '402', '422']) expect(body).toContain(piece);
    // The request body's schema, browsed from the operation.
    await sale.locator('button', { hasText: 'Schema' }).first().click();
    await sale.locator('.model-box', { hasText: 'payment_method' }).first().waitFor({ timeout: 5000 });
    // The schemas section lists the components.
    const models = page.locator('section.models');
    await models.waitFor({ timeout: 5000 });
    expect(await models.innerText()).toContain('SaleRequest');
    // Development: "Try it out" is offered against this origin, with Authorize for the printed dev token.
    expect(await sale.locator('button.try-out__btn').count()).toBe(1);
    expect(await page.locator('button.authorize').count()).toBeGreaterThan(0);

    await page.screenshot({ path: screenshotPath('docs-screenshot.png'), fullPage: false });

    expect(await cspViolations(page)).toEqual([]);
    expect(problems).toEqual({ console: [], pageErrors: [], failedRequests: [], badAnswers: [] });
    await page.close();
  });

  it('when /docs is opened, then it begins with what the API is and how to get a dev token, and the Authorize dialog lists every scope of the code\'s table (issue 41)', async () => {
    const { page, problems } = await openDocs();
    const intro = page.locator('.information-container .description p').first();
    expect(await intro.innerText()).toMatch(/^tokengate is a payment backend-for-frontend/);
    const info = await page.locator('.information-container .description').innerText();
    expect(info.indexOf('npm run token')).toBeGreaterThan(-1);
    expect(info.indexOf('npm run token')).toBeLessThan(info.indexOf('card_data_forbidden'));
    // The card-number rule's detail lives on the card-data page, not at the top of /docs.
    expect(info).not.toMatch(/Arabic-Indic|snowflake/);
    await page.locator('button.authorize').first().click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    await dialog.waitFor({ state: 'visible', timeout: 5000 });
    const text = await dialog.innerText();
    expect(text).toContain('npm run token');
    expect(Object.keys(SCOPES).filter((scope) => !text.includes(scope))).toEqual([]);
    expect(problems).toEqual({ console: [], pageErrors: [], failedRequests: [], badAnswers: [] });
    await page.close();
  });

  it('when "Try it out" runs a sale with the dev token, then the service answers it (201) from this origin', async () => {
    const { page, problems } = await openDocs();
    const token = /export TOKEN=(\S+)/.exec(service.output())?.[1];
    expect(token).toBeTruthy();
    await page.locator('button.authorize').first().click();
    await page.locator('.modal-ux input[type=text]').first().fill(token as string);
    await page.locator('.modal-ux button.authorize').first().click();
    await page.locator('.modal-ux button.btn-done').first().click();
    const sale = page.locator('#operations-sales-createSale');
    await sale.locator('.opblock-summary').click();
    await sale.locator('button.try-out__btn').click();
    const customer = /"customer":"([^"]+)"/.exec(service.output())?.[1] as string;
    const pm = /"payment_method":"([^"]+)"/.exec(service.output())?.[1] as string;
    await sale.locator('input[placeholder="Idempotency-Key"]').fill(`docs-try-${Date.now()}`);
    await sale.locator('textarea.body-param__text').fill(JSON.stringify({ customer, payment_method: pm, amount: '1.23' }));
    await sale.locator('button.execute').click();
    await sale.locator('.responses-inner .response .response-col_status', { hasText: '201' }).first().waitFor({ timeout: 10000 });
    expect(await cspViolations(page)).toEqual([]);
    expect(problems.pageErrors).toEqual([]);
    await page.close();
  });

  it('when an inline script is injected into /docs, then the CSP blocks it and the watchers report it', async () => {
    // Proves the checks above can fail: a blocked inline script must show up in both detectors.
    const { page, problems } = await openDocs();
    await page.evaluate(`(() => { const s = document.createElement('script'); s.textContent = 'window.__ran = true'; document.body.appendChild(s); })()`);
    await page.waitForFunction('window.__cspViolations.length > 0', undefined, { timeout: 5000 });
    expect(await page.evaluate('window.__ran === true')).toBe(false);
    expect((await cspViolations(page)).join('\n')).toMatch(/script-src/);
    for (let i = 0; i < 50 && !problems.console.some((m) => m.includes('Content Security Policy')); i++) await page.waitForTimeout(100);
    expect(problems.console.join('\n')).toMatch(/Content Security Policy/);
    await page.close();
  });
});
