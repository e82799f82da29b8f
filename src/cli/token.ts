/**
 * `npm run token -- --sub U [--custkey K] [--scope "sales:create payment_methods:read"] [--ttl 3600]`
 * Mints a development JWT signed with the configured HS secret (iss/aud from config) and prints only the
 * token. Refuses, with one line and exit code 2, under NODE_ENV=production or without an HS secret.
 * `mintDevToken(config, claims, ttlSec)` is exported for tests and main.ts's startup banner.
 */
import { parseArgs } from 'node:util';
import jwt, { type Algorithm } from 'jsonwebtoken';
import { ConfigError, loadConfig, type Config } from '../config';

export interface DevClaims {
  sub: string;
  custkey?: string;
  /** Space-separated scopes. */
  scope?: string;
}

export class DevTokenRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DevTokenRefused';
  }
}

export const DEFAULT_TTL_SEC = 3600;
const MAX_TTL_SEC = 7 * 24 * 3600;

/** The HS algorithm a development token is signed with, or undefined when JWTs are verified otherwise (RS, JWKS). */
function devAlgorithm(config: Pick<Config, 'jwt'>): Algorithm | undefined {
  return config.jwt.secret ? (config.jwt.algorithms.find((a) => a.startsWith('HS')) as Algorithm | undefined) : undefined;
}

/** Whether mintDevToken can work here: development or test, with an HS secret and algorithm configured. */
export function canMintDevToken(config: Pick<Config, 'env' | 'jwt'>): boolean {
  return config.env !== 'production' && devAlgorithm(config) !== undefined;
}

export function mintDevToken(config: Pick<Config, 'env' | 'jwt'>, claims: DevClaims, ttlSec = DEFAULT_TTL_SEC): string {
  if (config.env === 'production') throw new DevTokenRefused('refusing to mint a development token in production');
  const secret = config.jwt.secret;
  const alg = devAlgorithm(config);
  if (!secret || !alg) throw new DevTokenRefused('no HS secret and algorithm configured (JWT_SECRET, JWT_ALGORITHMS): cannot mint a development token');
  if (!claims.sub) throw new DevTokenRefused('--sub is required');
  if (!Number.isInteger(ttlSec) || ttlSec < 1 || ttlSec > MAX_TTL_SEC) throw new DevTokenRefused(`--ttl must be a whole number of seconds from 1 to ${MAX_TTL_SEC}`);
  const payload: Record<string, string> = { sub: claims.sub };
  if (claims.scope) payload.scope = claims.scope.trim().split(/\s+/).join(' ');
  if (claims.custkey) payload.custkey = claims.custkey;
  return jwt.sign(payload, secret.reveal(), { algorithm: alg, expiresIn: ttlSec, issuer: config.jwt.issuer, audience: config.jwt.audience });
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: (line: string) => void;
  err: (line: string) => void;
}

/** Runs the command; returns the exit code (0, or 2 for any refusal). */
export function runTokenCli(argv: readonly string[], io: CliIo): number {
  try {
    if (io.env.NODE_ENV === 'production') throw new DevTokenRefused('refusing to mint a development token with NODE_ENV=production');
    let values: { sub?: string; custkey?: string; scope?: string; ttl?: string };
    try {
      ({ values } = parseArgs({
        args: [...argv],
        options: { sub: { type: 'string' }, custkey: { type: 'string' }, scope: { type: 'string' }, ttl: { type: 'string' } },
        strict: true,
      }));
    } catch {
      throw new DevTokenRefused('usage: npm run token -- --sub U [--custkey K] [--scope "s1 s2"] [--ttl 3600]');
    }
    if (!values.sub) throw new DevTokenRefused('--sub is required (usage: npm run token -- --sub U [--custkey K] [--scope "s1 s2"] [--ttl 3600])');
    const ttl = values.ttl === undefined ? DEFAULT_TTL_SEC : /^\d+$/.test(values.ttl) ? Number(values.ttl) : NaN;
    const config = loadConfig({ env: io.env });
    const claims: DevClaims = { sub: values.sub };
    if (values.custkey) claims.custkey = values.custkey;
    if (values.scope) claims.scope = values.scope;
    io.out(mintDevToken(config, claims, ttl));
    return 0;
  } catch (err) {
    if (err instanceof DevTokenRefused) io.err(`token: ${err.message}`);
    else if (err instanceof ConfigError) io.err(`token: invalid configuration: ${err.problems.join('; ')}`);
    else throw err;
    return 2;
  }
}

if (require.main === module) {
  process.exitCode = runTokenCli(process.argv.slice(2), {
    env: process.env,
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => console.error(line),
  });
}
