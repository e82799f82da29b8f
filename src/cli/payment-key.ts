/**
 * `npm run payment-key -- --card 4000100011112224 [--exp 1230] [--cvc 123] [--url http://127.0.0.1:8080]`
 * A single-use Pay.js `payment_key` for a test card without a browser (issue 41, item 7), for scripts, tests and
 * curl: it asks tokengate at `--url` for its payment config (`GET /v1/payment-config`, with a dev token signed
 * by the configured secret), then makes the call the sandbox's card form makes, `POST <pay.js origin>/js/v2/
 * payment_key` with `public_key` and `card` {`number`, `expiration`, `cvc`} (contract, "The sandbox emulator";
 * docs/checkout.md). Prints only the key. Development and test only: refused, with one line and exit code 2,
 * under NODE_ENV=production, and for a Pay.js that is not on a loopback host (the real gateway's card form is
 * a browser's business). Errors never repeat the card number.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { DevTokenRefused, mintDevToken, type CliIo } from './token';

const USAGE = 'usage: npm run payment-key -- --card <test card number> [--exp MMYY] [--cvc 123] [--url http://127.0.0.1:8080]';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

class Refused extends Error {}

/** What the gateway's card form would send for this card: the number without spaces or dashes. */
function cardOf(values: { card?: string; exp?: string; cvc?: string }): { number: string; expiration: string; cvc: string } {
  const number = (values.card ?? '').replace(/[\s-]/g, '');
  if (!/^\d{12,19}$/.test(number)) throw new Refused(`--card must be 12 to 19 digits (${USAGE})`);
  const expiration = (values.exp ?? '1230').replace('/', '');
  if (!/^(0[1-9]|1[0-2])\d{2}$/.test(expiration)) throw new Refused('--exp must be MMYY, e.g. 1230');
  const cvc = values.cvc ?? '123';
  if (!/^\d{3,4}$/.test(cvc)) throw new Refused('--cvc must be 3 or 4 digits');
  return { number, expiration, cvc };
}

/** Runs the command; resolves the exit code (0, or 2 for any refusal or failure). */
export async function runPaymentKeyCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    if (io.env.NODE_ENV === 'production') throw new Refused('refusing to make a payment key with NODE_ENV=production (development and test only)');
    let values: { card?: string; exp?: string; cvc?: string; url?: string };
    try {
      ({ values } = parseArgs({ args: [...argv], options: { card: { type: 'string' }, exp: { type: 'string' }, cvc: { type: 'string' }, url: { type: 'string' } }, strict: true }));
    } catch {
      throw new Refused(USAGE);
    }
    const card = cardOf(values);
    const config = loadConfig({ env: io.env });
    const base = (values.url ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
    const token = mintDevToken(config, { sub: 'payment-key-cli' }, 60);
    const answer = await fetch(`${base}/v1/payment-config`, { headers: { authorization: `Bearer ${token}` } }).catch(() => undefined);
    if (!answer) throw new Refused(`tokengate does not answer at ${base} (is npm start running? --url names another)`);
    if (answer.status !== 200) throw new Refused(`GET ${base}/v1/payment-config answered ${answer.status}`);
    const payment = (await answer.json()) as { public_key: string; pay_js_url: string };
    const payJs = new URL(payment.pay_js_url);
    if (!LOOPBACK.has(payJs.hostname)) throw new Refused(`Pay.js is at ${payJs.origin}, not a sandbox on this machine: a real gateway's card form is the browser's (development and test only)`);
    const made = await fetch(`${payJs.origin}/js/v2/payment_key`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ public_key: payment.public_key, card }),
    });
    const body = (await made.json().catch(() => ({}))) as { payment_key?: string; errorcode?: number };
    // The sandbox's messages name fields, never values; only its code is repeated here all the same.
    if (made.status !== 200 || !body.payment_key) throw new Refused(`the sandbox refused the card (HTTP ${made.status}${body.errorcode === undefined ? '' : `, errorcode ${body.errorcode}`})`);
    io.out(body.payment_key);
    return 0;
  } catch (err) {
    if (err instanceof Refused || err instanceof DevTokenRefused) io.err(`payment-key: ${err.message}`);
    else if (err instanceof ConfigError) io.err(`payment-key: invalid configuration: ${err.problems.join('; ')}`);
    else throw err;
    return 2;
  }
}

if (require.main === module) {
  void runPaymentKeyCli(process.argv.slice(2), {
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => console.error(line),
  }).then((code) => {
    process.exitCode = code;
  });
}
