/**
 * Caller authentication and authorisation (contract.md, "Callers and JWTs").
 *
 *   const { authenticate } = createAuthenticator({ jwt: config.jwt, logger });
 *   router.post('/v1/sales', authenticate, requireScope('sales:create'), handler);
 *   // in a handler: assertCustomerAccess(requireAuth(req), custkey)  → throws NotFound when not bound
 *
 * Verification: `Authorization: Bearer <JWT>` only, at most 8 KiB; the algorithm list comes from config,
 * never from the token (alg none and HS/RS confusion fail there); no `crit`, no unencoded payload; `iss`, `aud`,
 * `exp` (required), `nbf`, `iat` (a number, not in the future), clock tolerance ≤ 30 s (token-checks.ts). Keys:
 * the HS secret, a PEM public key, or JWKS (jwks.ts, jose's remote key set). Every failure is the same 401 with a
 * fixed message and `WWW-Authenticate: Bearer` (`error="invalid_token"` when a Bearer credential was sent); the
 * reason code goes to the debug log, the token never does.
 * A refused token costs about what the cheapest accepted request does, not 2.5-3.3 times it (issue 30, item 5;
 * bench/auth.js): the rules, the key and the signature answer with a reason, not an exception (token-checks.ts,
 * token-signature.ts), the two 401 errors are made once and sent from here, and a debug line is free while
 * debug is off (logger.ts). What is left is the work itself: a wrong signature costs one HMAC (or RSA/EC
 * verify) that a remembered valid token skips. jsonwebtoken's verify then runs on every token those checks let
 * through, so they can only add refusals to its own.
 * A token that passed is remembered by its SHA-256 until its exp (+ tolerance), at most 60 s, and is not
 * verified again meanwhile (verified-tokens.ts: 5-8 % of a sale's CPU); failures are never remembered.
 */
import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import type { RequestHandler, Request } from 'express';
import jwt, { type Algorithm } from 'jsonwebtoken';
import type { JwtConfig } from '../config/types';
import type { Logger } from '../observability/logger';
import { sendApiError } from './error-handler';
import { Forbidden, NotFound, Unauthenticated } from './errors';
import { createJwksKeySource, KeyUnavailable } from './jwks';
import { ANY_CUSTOMER_SCOPE, callerOf, checkToken, type CheckedToken, type TokenRules } from './token-checks';
import { signatureMatches } from './token-signature';
import type { Scope } from './scopes';
import type { AuthContext } from './types';
import { createVerifiedTokens } from './verified-tokens';

export { ANY_CUSTOMER_SCOPE };
export const MAX_TOKEN_BYTES = 8 * 1024;
const MAX_CLOCK_TOLERANCE_SEC = 30;
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/i;
const BEARER_PRESENTED = /^Bearer[ \t]+\S/i;

const ALGORITHMS: readonly Algorithm[] = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

export interface AuthenticatorOptions {
  jwt: JwtConfig;
  logger: Logger;
  /** How long a verified token is trusted without verifying it again (ms, default 60 s; 0 turns it off). */
  verifiedTokenMaxAgeMs?: number;
}

export interface Authenticator {
  authenticate: RequestHandler;
  /** The same check without Express, for callers that hold a token (e.g. a future WebSocket upgrade). */
  verifyToken(token: string): Promise<AuthContext>;
}

/** Why a token failed, for verifyToken's callers; logged at debug, never sent to the caller. */
class Rejected extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** The caller, or the reason the token is refused. */
type Outcome = AuthContext | string;

/** The key for a token's alg and kid, or the reason there is none (JWKS only). */
type KeyResolver = (alg: string, kid: string | undefined) => KeyObject | Promise<KeyObject | string>;

function keyResolver(options: AuthenticatorOptions, algorithms: readonly Algorithm[]): KeyResolver {
  const { jwt: config } = options;
  const hs = algorithms.some((a) => a.startsWith('HS'));
  const asymmetric = algorithms.some((a) => !a.startsWith('HS'));
  // loadConfig refuses this too; repeated here because the factory may be handed any JwtConfig.
  if (hs && asymmetric) throw new Error('jwt.algorithms must not mix HS* with asymmetric algorithms');
  if (hs) {
    if (!config.secret) throw new Error('jwt.secret is required for HS* algorithms');
    // A KeyObject made once: given a string, jsonwebtoken 9 first tries createPublicKey on it on EVERY
    // verify (a throw and catch, ~0.5 ms, measured in bench/); a secret KeyObject verifies in ~10 µs.
    const key = createSecretKey(Buffer.from(config.secret.reveal(), 'utf8'));
    return () => key;
  }
  if (config.jwksUrl) {
    // jose picks the key by kid and type and refuses a JWK whose own `alg` differs from the token's.
    const source = createJwksKeySource({ uri: config.jwksUrl, cooldownMs: config.jwksCooldownMs });
    return (alg, kid) => source(alg, kid).catch((err: unknown) => (err instanceof KeyUnavailable ? err.reason : 'jwks_error'));
  }
  if (config.publicKey) {
    const key = createPublicKey(config.publicKey);
    return () => key;
  }
  throw new Error('jwt.publicKey or jwt.jwksUrl is required for asymmetric algorithms');
}

/** jsonwebtoken's refusal of a token our checks let through (they should agree; this names where not). */
function verifyReason(err: unknown): string {
  if (err instanceof jwt.TokenExpiredError) return 'expired';
  if (err instanceof jwt.NotBeforeError) return 'not_yet_valid';
  const message = err instanceof Error ? err.message : '';
  if (message.includes('issuer')) return 'bad_issuer';
  if (message.includes('audience')) return 'bad_audience';
  if (message.includes('signature')) return 'bad_signature';
  return 'invalid';
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { jwt: config, logger } = options;
  const algorithms = config.algorithms.filter((a): a is Algorithm => (ALGORITHMS as readonly string[]).includes(a));
  if (algorithms.length === 0 || algorithms.length !== config.algorithms.length) throw new Error('jwt.algorithms holds no or unknown algorithms');
  const resolveKey = keyResolver(options, algorithms);
  const clockTolerance = Math.min(Math.max(config.clockToleranceSec, 0), MAX_CLOCK_TOLERANCE_SEC);
  const rules: TokenRules = { algorithms, issuer: config.issuer, audience: config.audience, clockToleranceSec: clockTolerance };
  const verifyOptions: jwt.VerifyOptions = { algorithms: [...algorithms], issuer: config.issuer, audience: config.audience, clockTolerance };
  // The two answers of a refusal, made once: an Error captures its stack when made (~7 µs a refusal). Both are
  // read-only: sendApiError renders them, nothing mutates them.
  const refused = new Unauthenticated(true);
  const missing = new Unauthenticated(false);

  const verified = createVerifiedTokens({ maxAgeMs: options.verifiedTokenMaxAgeMs });

  /** The signature, then jsonwebtoken's verify, of a token whose header and claims passed; remembered if good. */
  const verifyWith = (token: string, checked: CheckedToken, key: KeyObject | string): Outcome => {
    if (typeof key === 'string') return key;
    if (!signatureMatches(checked.alg, checked.signingInput, checked.signature, key)) return 'bad_signature';
    try {
      jwt.verify(token, key, verifyOptions);
    } catch (err) {
      return verifyReason(err);
    }
    const auth = callerOf(checked);
    // jwt.verify refuses from the second exp + tolerance on (it compares whole seconds).
    verified.set(token, auth, (checked.exp + clockTolerance) * 1000);
    return auth;
  };

  /** Synchronous unless the key comes from the JWKS: a refusal or a remembered token costs no promise. */
  const check = (token: string): Outcome | Promise<Outcome> => {
    if (Buffer.byteLength(token) > MAX_TOKEN_BYTES) return 'too_large';
    const known = verified.get(token);
    if (known) return known;
    const checked = checkToken(token, rules, Math.floor(Date.now() / 1000));
    if (typeof checked === 'string') return checked;
    const key = resolveKey(checked.alg, checked.kid);
    return key instanceof Promise ? key.then((k) => verifyWith(token, checked, k)) : verifyWith(token, checked, key);
  };

  const verifyToken = async (token: string): Promise<AuthContext> => {
    const outcome = await check(token);
    if (typeof outcome === 'string') throw new Rejected(outcome);
    return outcome;
  };

  const authenticate: RequestHandler = (req, res, next) => {
    const header = req.headers.authorization;
    // A Bearer credential was sent (whatever its shape): the challenge says invalid_token (RFC 6750 §3.1).
    const presented = header !== undefined && BEARER_PRESENTED.test(header);
    const settle = (outcome: Outcome) => {
      if (typeof outcome !== 'string') {
        req.auth = outcome;
        return next();
      }
      (req.log ?? logger).debug('authentication failed', { reason: outcome });
      // Answered here, as the error handler would: no handler ran, nothing was sent.
      sendApiError(req, res, presented ? refused : missing);
    };
    if (header === undefined) return settle('missing');
    if (header.length > MAX_TOKEN_BYTES + 16) return settle('too_large');
    const match = BEARER.exec(header);
    if (!match) return settle('malformed');
    // Anything unexpected fails closed: logged, and the same 401.
    const fail = (err: unknown) => {
      (req.log ?? logger).warn('authentication error', { err });
      sendApiError(req, res, refused);
    };
    let outcome: Outcome | Promise<Outcome>;
    try {
      outcome = check(match[1] as string);
    } catch (err) {
      return fail(err);
    }
    if (outcome instanceof Promise) outcome.then(settle, fail);
    else settle(outcome);
  };

  return { authenticate, verifyToken };
}

/** The verified caller; throws 401 when `authenticate` did not run (a wiring mistake fails closed). */
export function requireAuth(req: Request): AuthContext {
  if (!req.auth) throw new Unauthenticated();
  return req.auth;
}

/** 403 forbidden unless the token carries `scope`. Mount after `authenticate`. */
export function requireScope(scope: Scope): RequestHandler {
  return (req, _res, next) => {
    const auth = req.auth;
    if (!auth) return next(new Unauthenticated());
    if (!auth.scopes.has(scope)) {
      req.log?.debug('scope missing', { scope });
      return next(new Forbidden([scope]));
    }
    next();
  };
}

/** 403 forbidden unless the caller acts for any customer (`customers:any`, no `custkey`): e.g. listing customers. */
export function requireAnyCustomer(): RequestHandler {
  return (req, _res, next) => {
    if (!req.auth) return next(new Unauthenticated());
    next(req.auth.anyCustomer ? undefined : new Forbidden(['customers:any']));
  };
}

/** Whether this caller may act for `custkey` (contract: a bound token touches only its customer). */
export function canAccessCustomer(auth: AuthContext, custkey: string): boolean {
  if (auth.custkey !== undefined) return auth.custkey === custkey;
  return auth.anyCustomer;
}

/** Throws 404 not_found, with no hint, when the caller is not bound to `custkey`. */
export function assertCustomerAccess(auth: AuthContext, custkey: string): void {
  if (!canAccessCustomer(auth, custkey)) throw new NotFound();
}
