import jwt from 'jsonwebtoken';
import { DEV_DEFAULTS } from '../../src/config';
import { Secret } from '../../src/config/secret';
import { mintDevToken, runTokenCli } from '../../src/cli/token';

function run(argv: string[], env: NodeJS.ProcessEnv = { NODE_ENV: 'development' }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = runTokenCli(argv, { env, out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('dev token CLI', () => {
  it('when run with sub, custkey, scope and ttl, then it prints only a token that verifies with the dev secret', () => {
    const { code, out, err } = run(['--sub', 'U', '--custkey', 'K', '--scope', 'sales:create payment_methods:read', '--ttl', '600']);
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(out).toHaveLength(1);
    const claims = jwt.verify(out[0] as string, DEV_DEFAULTS.jwtSecret, { algorithms: ['HS256'], issuer: 'tokengate-dev', audience: 'tokengate' }) as jwt.JwtPayload;
    expect(claims).toMatchObject({ sub: 'U', custkey: 'K', scope: 'sales:create payment_methods:read' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
  });

  it('when NODE_ENV is production, then it refuses with exit 2 and one line', () => {
    const { code, out, err } = run(['--sub', 'U'], { NODE_ENV: 'production' });
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/production/);
  });

  it('when --sub is missing, an option is unknown, or ttl is not a number, then exit 2', () => {
    expect(run([]).code).toBe(2);
    expect(run(['--sub', 'U', '--admin']).code).toBe(2);
    expect(run(['--sub', 'U', '--ttl', '1h']).code).toBe(2);
    expect(run(['--sub', 'U', '--ttl', '0']).code).toBe(2);
  });

  const config = {
    jwt: {
      issuer: 'tokengate-dev', audience: 'tokengate', algorithms: ['HS256'], secret: new Secret(DEV_DEFAULTS.jwtSecret),
      publicKey: undefined, jwksUrl: undefined, clockToleranceSec: 30, jwksCooldownMs: 30000,
    },
  };

  it('when the config has no HS secret, then minting refuses', () => {
    expect(() => mintDevToken({ env: 'test', jwt: { ...config.jwt, secret: undefined } }, { sub: 'U' })).toThrow(/HS secret/);
    expect(() => mintDevToken({ env: 'test', jwt: { ...config.jwt, algorithms: ['RS256'] } }, { sub: 'U' })).toThrow(/HS secret/);
    expect(() => mintDevToken({ env: 'production', jwt: config.jwt }, { sub: 'U' })).toThrow(/production/);
  });

  it('when minting directly, then claims and the configured iss/aud are used', () => {
    const secret = new Secret('another-dev-secret-0123456789');
    const token = mintDevToken({ env: 'test', jwt: { ...config.jwt, secret, issuer: 'me', audience: 'you' } }, { sub: 'svc', scope: ' customers:read   customers:any ' }, 60);
    const claims = jwt.verify(token, secret.reveal(), { algorithms: ['HS256'], issuer: 'me', audience: 'you' }) as jwt.JwtPayload;
    expect(claims.scope).toBe('customers:read customers:any');
    expect(claims.custkey).toBeUndefined();
  });
});
