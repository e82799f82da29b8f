/**
 * The scopes a caller's JWT can carry (contract.md, "Callers and JWTs"), with what each allows: the one table
 * the routes' requireScope takes its names from (a name not here does not compile), and the one the OpenAPI
 * description's `bearerAuth` scheme lists (scripts/openapi-scopes.js writes it, `npm run lint` checks it), so
 * the /docs Authorize dialog cannot drift from the code (issue 41: it listed 9 of 12). Only scopes a route of
 * this code checks are here.
 */
export const SCOPES = {
  'sales:create': 'charge a card: `POST /v1/sales`',
  'sales:read': 'read a sale: `GET /v1/sales/{key}`',
  'sales:capture': 'capture an authorization: `POST /v1/sales/{key}/capture`',
  'sales:void': 'void a sale not settled yet: `POST /v1/sales/{key}/void`',
  'refunds:create': 'refund a sale: `POST /v1/sales/{key}/refunds` (internal services; never in a shopper\'s token)',
  'payment_methods:read': 'list the bound customer\'s cards: `GET /v1/customers/{custkey}/payment_methods`',
  'payment_methods:write': 'add, rename, make default and remove the bound customer\'s cards; keep a card a sale paid with (`save_payment_method`)',
  'tokens:read': 'read a card reference token: `GET /v1/customers/{custkey}/payment_methods/{pmkey}/token` (internal services)',
  'customers:read': 'read the bound customer: `GET /v1/customers/{custkey}`; list customers with `customers:any`',
  'customers:write': 'update the bound customer; create and delete customers with `customers:any`',
  'events:read': 'read the payment event log: `GET /v1/events` (internal services, with `customers:any`)',
  'subscriptions:read': 'read the bound customer\'s subscriptions (any customer\'s with `customers:any`)',
  'subscriptions:write': 'create, change, pause, resume and cancel the bound customer\'s subscriptions (any customer\'s with `customers:any`)',
  'settlements:read': 'read the settlements, closed batches matched with tokengate\'s records: `GET /v1/settlements…` (internal services, with `customers:any`)',
  'customers:any': 'act for any customer (a token without `custkey`: internal services)',
  'outcomes:settle': 'settle an unknown outcome by hand, on the admin port: `POST /unknown-outcomes/settle` (operators; a token without `custkey`)',
} as const;

export type Scope = keyof typeof SCOPES;

/** The `bearerAuth` scheme's description in openapi.json: how to get a token, the claims, every scope. */
export function bearerAuthDescription(): string {
  return [
    'A JWT in `Authorization: Bearer <token>`. In development, `npm start` prints one (bound to the sandbox\'s first customer) and `npm run token -- --sub me --custkey <customer key> --scope "sales:create payment_methods:read"` mints another with the dev secret; in production your identity provider issues them.',
    '',
    'Claims: `sub` (required); `scope`, space separated; `custkey` binds the token to one customer (a token without it acts for any customer only with `customers:any`). A missing scope answers 403 `forbidden` naming it (`WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`).',
    '',
    'Scopes:',
    ...Object.entries(SCOPES).map(([scope, allows]) => `- \`${scope}\`: ${allows}`),
    '',
    'Verified with a pinned algorithm list, `iss`, `aud`, `exp` (required), `nbf`, `iat` (a number, not in the future), no `crit` header parameter (none is implemented) and no unencoded payload (`b64` other than true), clock tolerance at most 30 s; keys from config or JWKS (`kid`). At most 8 KiB.',
  ].join('\n');
}
