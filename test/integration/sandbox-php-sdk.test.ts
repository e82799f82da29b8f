import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_SETTINGS, startSandbox, type RunningSandbox } from '../../src/sandbox';
import { startTlsIntercept, type TlsIntercept } from '../support/tls-intercept';

/**
 * The official USAePay PHP SDK 2.x's request code against the sandbox, unmodified: its URL is hard-coded to
 * https://<subdomain>.usaepay.com, so the run goes through an HTTPS-intercepting proxy (test/support/
 * tls-intercept.ts) that curl is pointed at with `https_proxy` and a CA file of this run only.
 *
 * The SDK itself is not committed (fetched code never is) and cannot be installed here at test time: it is on
 * Packagist only (not reachable), not on npm or Debian. So by default the driver runs
 * test/support/php/usaepay-sdk-mirror.php, a harness reproducing the SDK's request construction and answer
 * classification (it cites the SDK's files and lines). With USAEPAY_PHP_SDK_DIR set to a checkout of the SDK
 * (usaepay/usaepay-php 2.1.x: the directory holding lib/API.php) the same driver runs the real SDK.
 */

/** Why the test cannot run here, or undefined: php with curl, and openssl for the run's certificate. */
function missingPrerequisite(): string | undefined {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    return 'openssl is not installed (it makes the intercept\'s certificate)';
  }
  try {
    const modules = execFileSync('php', ['-m'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /^curl$/m.test(modules) ? undefined : 'php is installed without the curl extension (apt-get install php-curl)';
  } catch {
    return 'php is not installed (apt-get install php-cli php-curl; .ci/run does)';
  }
}

const missing = missingPrerequisite();
const sdkDir = process.env.USAEPAY_PHP_SDK_DIR;
if (missing) {
  // eslint-disable-next-line no-console -- the skip must say why, in the test output
  console.warn(`sandbox-php-sdk.test.ts skipped: ${missing}`);
}
if (sdkDir && !existsSync(path.join(sdkDir, 'lib', 'API.php'))) throw new Error(`USAEPAY_PHP_SDK_DIR=${sdkDir} holds no lib/API.php`);
const describeWithPhp = missing ? describe.skip : describe;

const DRIVER = path.resolve(__dirname, '..', 'support', 'php', 'drive-sdk.php');

type Classified = Record<string, unknown>;

function runDriver(intercept: TlsIntercept, custkey: string): Promise<Record<string, Classified>> {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, https_proxy: intercept.proxyUrl, USAEPAY_KEY: DEFAULT_SETTINGS.apiKey, USAEPAY_PIN: DEFAULT_SETTINGS.apiPin, CUSTKEY: custkey };
  if (sdkDir) env.USAEPAY_PHP_SDK_DIR = sdkDir;
  return new Promise((resolve, reject) => {
    const child = spawn('php', ['-d', `curl.cainfo=${intercept.caFile}`, '-d', 'error_reporting=E_ALL', '-d', 'display_errors=stderr', DRIVER], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`php exited ${code}: ${err || out}`));
      try {
        resolve(JSON.parse(out) as Record<string, Classified>);
      } catch {
        reject(new Error(`php printed no JSON: ${out} ${err}`));
      }
    });
  });
}

describeWithPhp(`the USAePay PHP SDK (${sdkDir ? 'real code from USAEPAY_PHP_SDK_DIR' : 'mirror harness'}) against the sandbox`, () => {
  let sb: RunningSandbox;
  let intercept: TlsIntercept;
  let out: Record<string, Classified>;
  let firstCustomer: ReturnType<RunningSandbox['fixtures']['firstCustomer']>;

  beforeAll(async () => {
    sb = await startSandbox({ settings: { ratePerMinute: 10_000, wireFormat: 'wire' } });
    intercept = await startTlsIntercept(Number(new URL(sb.url).port));
    firstCustomer = sb.fixtures.firstCustomer();
    out = await runDriver(intercept, firstCustomer.key);
  });
  afterAll(async () => {
    await intercept?.close();
    await sb?.close();
  });

  it('when the SDK runs, then every call went through the intercept to the sandbox and was signed as the sandbox expects', () => {
    expect(out.sdk).toBe(sdkDir ? 'real' : 'mirror');
    expect(intercept.tunnels()).toBe(22); // one curl handle, one tunnel, per SDK call
    expect(sb.stats().endpoints.v2?.calls).toBe(22);
    expect(sb.stats().endpoints.v2).toMatchObject({ unauthorized: 1 }); // only the deliberate wrong PIN
  });

  it('when it sells with an approved, a declined and a partial card, then it reads A, D and P as at the real sandbox', () => {
    expect(out.approved).toMatchObject({ type: 'transaction', result_code: 'A', result: 'Approved', auth_amount: '10.00', trantype: 'Credit Card Sale', card: '4000xxxxxxxx2224', batchrefnum: expect.any(Number) });
    expect(out.declined).toMatchObject({ result_code: 'D', result: 'Declined', error: 'Card Declined (00)', error_code: '10127' });
    expect(out.partial).toMatchObject({ result_code: 'P', result: 'Partially Approved', auth_amount: '10.00' });
    expect(sb.transactions().map((t) => [t.invoice, t.result_code, t.amount])).toEqual(expect.arrayContaining([['php-1', 'A', '10.00'], ['php-2', 'D', '5.25'], ['php-3', 'P', '20.00']]));
  });

  it('when it sends an unknown command, then it gets the transaction object back (no exception) with error_code 20019', () => {
    expect(out.unknownCommand).toMatchObject({ type: 'transaction', result_code: 'E', error: 'Unknown command', error_code: 20019 });
  });

  it('when it lists and reads customers and payment methods, then the wire shapes come back', () => {
    expect(out.customers).toEqual({ type: 'list', total: '21', count: 5, first: firstCustomer.key, first_name: firstCustomer.firstname });
    expect(out.customer).toEqual({ type: 'customer', key: firstCustomer.key, custom_fields: 20, payment_methods: firstCustomer.payment_methods.length });
    expect(out.paymentMethods).toEqual({ type: 'list', total: String(firstCustomer.payment_methods.length), keys: firstCustomer.payment_methods.map((m) => m.key), expires: firstCustomer.payment_methods[0]!.expiration });
    expect(out.paymentMethod).toEqual({ type: 'customerpaymentmethod', key: firstCustomer.payment_methods[0]!.key, ccnum4last: '2224' });
  });

  it('when it reads the cardref and charges it (and the token save_card gave) as a Token Sale, then both are approved', () => {
    const pm = firstCustomer.payment_methods[0]!;
    expect(out.cardref).toEqual({ type: 'token', cardref: sb.fixtures.cardrefFor(firstCustomer.key, pm.key), expires: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    expect(out.tokenSale).toMatchObject({ result_code: 'A', auth_amount: '3.00', card: '4000xxxxxxxx2224' });
    expect(out.approved!.savedcard).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
    expect(out.savedCardSale).toMatchObject({ result_code: 'A', auth_amount: '4.00' });
  });

  it('when it creates, updates and deletes a customer and its payment methods, then the SDK reads each answer (arrays, success statuses) and its errors', () => {
    expect(out.customerCreated).toEqual({ type: 'customer', key: expect.stringMatching(/^[a-z0-9]{16}$/), custid: expect.any(Number), postalcode: '90038', payment_methods: null });
    expect(out.customerUpdated).toEqual({ company: 'PHP Shop 2', postalcode: '', first_name: 'Php' });
    expect(out.methodsAdded).toEqual([{ sortord: 0, ccnum4last: '2224', pmid: false }, { sortord: 2, ccnum4last: '2226', pmid: false }]);
    expect(out.methodUpdated).toEqual({ key: true, method_name: 'Renamed', sortord: '2' });
    expect(out.methodDeleted).toEqual({ status: 'success' });
    expect(out.methodGone).toEqual({ ueException: { message: 'Payment Method Not Found', code: 40453 } });
    expect(out.notAnArray).toEqual({ ueException: { message: 'Request body must be a JSON array of payment methods', code: 40014 } });
    expect(out.customerDeleted).toEqual({ status: 'success' });
    expect(out.customerGone).toEqual({ ueException: { message: 'Customer Not Found', code: 99999 } });
    expect(sb.fixtures.customers).toHaveLength(21);
  });

  it('when the gateway answers an error object, then the SDK throws ueException with the gateway\'s code', () => {
    expect(out.missingCustomer).toEqual({ ueException: { message: 'Customer Not Found', code: 99999 } });
    expect(out.wrongPin).toEqual({ ueException: { message: 'API authentication failed', code: 21002 } });
  });
});
