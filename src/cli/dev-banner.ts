import { DEV_DEFAULTS } from '../config';
import type { Config } from '../config/types';
import type { RunningSandbox } from '../sandbox';
import { canMintDevToken, mintDevToken } from './token';

/** Whether the embedded sandbox posts the gateway's webhooks to tokengate (src/sandbox/embedded.ts), and how to turn them on. */
function webhooksLine(receiver: string | undefined): string {
  return receiver
    ? `  gateway webhooks:         posted by the embedded sandbox to ${receiver} (signed with your GATEWAY_WEBHOOK_SECRET)`
    : '  gateway webhooks:         off (set GATEWAY_WEBHOOK_SECRET, any 8+ characters, to have the embedded sandbox post them here)';
}

/** The scopes of the banner's dev token, and of the command it prints for minting one. */
const DEV_SCOPE = 'sales:create payment_methods:read tokens:read';

/**
 * What `npm start` prints in development: the URL, a ready dev token bound to the sandbox's first customer,
 * and a curl for a sale that succeeds as printed (the approved test card 4000100011112224). The contract's
 * JWT_SECRET default is "a printed dev secret in development only": the shipped dev secret is printed beside
 * the token so callers can sign their own; a secret the operator set is never printed, and production prints
 * no banner at all (main.ts).
 * With the embedded sandbox it says whether that sandbox posts the gateway's webhooks to `webhookReceiver` (with
 * GATEWAY_WEBHOOK_SECRET set) or how to turn them on; the secret itself is never printed.
 * With an external gateway (GATEWAY_BASE_URL) the banner knows no customer: it prints no token (one bound to a
 * placeholder custkey would only answer 404), says how to mint one for a real customer, and says the curls'
 * CUSTOMER_KEY and PAYMENT_METHOD_KEY must be replaced.
 */
export function devBanner(config: Config, url: string, adminUrl: string, sandbox: RunningSandbox | undefined, webhookReceiver?: string): string {
  const customer = sandbox?.fixtures.firstCustomer();
  const approved = customer ? sandbox?.fixtures.paymentMethods(customer.key).find((p) => p.number.endsWith('2224')) : undefined;
  const custkey = customer?.key ?? 'CUSTOMER_KEY';
  const pmkey = approved?.key ?? 'PAYMENT_METHOD_KEY';
  const placeholders = !customer || !approved;
  const body = JSON.stringify({ customer: custkey, payment_method: pmkey, amount: '10.00' });
  // With JWTs verified by a public key or JWKS (no HS secret), there is nothing to sign a dev token with:
  // tokens come from the caller's own issuer, and the demo page (which needs one) is off.
  const minting = canMintDevToken(config);
  const devSecret = config.env === 'development' && config.jwt.secret?.reveal() === DEV_DEFAULTS.jwtSecret;
  const secretLines = !minting
    ? []
    : devSecret
      ? [`Dev JWT secret (JWT_SECRET, ${config.jwt.algorithms.join(', ')}; development only; iss ${config.jwt.issuer}, aud ${config.jwt.audience}):`, `  ${DEV_DEFAULTS.jwtSecret}`]
      : ['Tokens are signed with your JWT_SECRET (not printed).'];
  const tokenLines = !minting
    ? [`No dev token: JWTs are verified with ${config.jwt.algorithms.join(', ')} and no HS secret; set TOKEN to one from your issuer`, `  (iss ${config.jwt.issuer}, aud ${config.jwt.audience}, custkey ${customer ? custkey : '<customer key>'}, scope "sales:create payment_methods:read").`]
    : !customer
      ? [
        ...secretLines,
        'No dev token: the gateway is not the embedded sandbox, so no customer is known here. Mint one for a real',
        `customer of that gateway${devSecret ? '' : ' (with the same JWT_SECRET set)'}, then export TOKEN=<the token it prints>:`,
        `  npm run token -- --sub dev --custkey <customer key> --scope "${DEV_SCOPE}"`,
      ]
      : [...secretLines, 'Dev token (sub dev-user, customer ' + custkey + ', 24 h):', `  export TOKEN=${mintDevToken(config, { sub: 'dev-user', custkey, scope: DEV_SCOPE }, 24 * 3600)}`];
  const replace = placeholders ? ` (replace ${[...(customer ? [] : ['CUSTOMER_KEY']), ...(approved ? [] : ['PAYMENT_METHOD_KEY'])].join(' and ')} with real keys first)` : '';
  return [
    '',
    `tokengate (development) listening on ${url}`,
    `  admin (health, metrics):  ${adminUrl}`,
    `  API docs:                 ${url}/docs`,
    ...(sandbox && minting ? [`  demo checkout page:       ${url}/demo   (add a test card through Pay.js, charge, void, refund)`] : []),
    sandbox ? `  embedded sandbox gateway: ${sandbox.baseUrl}` : `  gateway:                  ${config.gateway.baseUrl ?? ''}`,
    ...(sandbox ? [webhooksLine(webhookReceiver)] : []),
    '',
    ...tokenLines,
    '',
    placeholders ? `Charge a customer's stored card${replace}:` : 'Charge the customer\'s stored card (approved test card):',
    `  curl -s -X POST ${url}/v1/sales \\`,
    '    -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \\',
    '    -H "Idempotency-Key: demo-$RANDOM-$RANDOM" \\',
    `    -d '${body}'`,
    '',
    customer ? 'List the customer\'s payment methods:' : 'List a customer\'s payment methods (replace CUSTOMER_KEY first):',
    `  curl -s ${url}/v1/customers/${custkey}/payment_methods -H "Authorization: Bearer $TOKEN"`,
    '',
  ].join('\n');
}
