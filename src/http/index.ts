/**
 * The HTTP edge, in mounting order for app.ts:
 *   app.disable('x-powered-by');
 *   app.use(requestId(logger));                 // X-Request-Id, req.id, req.log
 *   app.use(helmet(helmetOptions));
 *   app.use(cors(config));
 *   app.use(docsRouter());                      // GET /openapi.json, /docs (public; each route runs cardGuard itself)
 *   app.use(jsonBody(config));                  // 16 KiB strict JSON, raw-text PAN scan, __proto__ guard
 *   app.use(cardGuard());                       // 422 card_data_forbidden for headers, path, query, body
 *   const { authenticate } = createAuthenticator({ jwt: config.jwt, logger });
 *   router.post('/v1/sales', authenticate, requireScope('sales:create'), …);   // parseSaleRequest, …
 *   app.use(notFoundHandler);
 *   app.use(errorHandler(logger));
 */
export * from './errors';
export { errorHandler, notFoundHandler, toApiError } from './error-handler';
export { requestId, isSafeRequestId, newRequestId, REQUEST_ID_HEADER } from './request-id';
export { answerClientErrors } from './client-error';
export { API_SERVER_OPTIONS, createAppServer } from './server';
export { createAuthenticator, requireAuth, requireScope, requireAnyCustomer, canAccessCustomer, assertCustomerAccess, ANY_CUSTOMER_SCOPE, MAX_TOKEN_BYTES } from './auth';
export type { Authenticator, AuthenticatorOptions } from './auth';
export { cardGuard, findCardData, findRawPaymentData, containsCardData, isCardLikeName } from './card-guard';
export { containsPan as hasPan } from '../card/pan';
export { createJwksKeySource, KeyUnavailable } from './jwks';
export type { CardDataLocation } from './card-guard';
export { jsonBody, hasForbiddenKey } from './json-body';
export { parseSaleRequest, parseListQuery, parsePathKey, parseIdempotencyKey, toCents } from './validation';
export type { SaleInput, ListQuery } from './validation';
export { cors, CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS } from './cors';
export { docsRouter } from './docs';
export { helmetOptions } from './security';
export type { AuthContext } from './types';
