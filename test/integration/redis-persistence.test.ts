import Redis from 'ioredis';
import { createLogger, CapturingStream } from '../../src/observability/logger';
import { redisPersistence, warnWithoutPersistence } from '../../src/redis/persistence';
import { canStartRedis, startPrivateRedis, type PrivateRedis } from '../support/private-redis';

/**
 * Idempotency records survive a Redis restart only with an append-only file: the boot check that says so.
 * A private redis-server, so its persistence can be switched without touching the shared one.
 */
const maybe = canStartRedis() ? describe : describe.skip;

maybe('redis persistence check at boot', () => {
  let server: PrivateRedis;
  let redis: Redis;
  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  function capture() {
    const stream = new CapturingStream();
    return { stream, logger: createLogger({ stream, level: 'debug' }) };
  }
  const warnings = (stream: CapturingStream) => stream.lines.map((l) => JSON.parse(l) as { level: string; message: string }).filter((l) => l.level === 'warn');

  it('when Redis runs without AOF in production, then the boot log warns that a retried sale could charge twice', async () => {
    await redis.config('SET', 'appendonly', 'no');
    const { stream, logger } = capture();
    const report = await warnWithoutPersistence(redis, logger, true);
    expect(report).toEqual([{ node: `127.0.0.1:${server.port}`, aof: false }]);
    expect(warnings(stream).map((l) => l.message)).toEqual([expect.stringContaining('no append-only file')]);
  });

  it('when Redis runs without AOF outside production, then it is said at debug level only', async () => {
    await redis.config('SET', 'appendonly', 'no');
    const { stream, logger } = capture();
    await warnWithoutPersistence(redis, logger, false);
    expect(warnings(stream)).toEqual([]);
    expect(stream.text()).toContain('no append-only file');
  });

  it('when AOF is on, then nothing is logged', async () => {
    await redis.config('SET', 'appendonly', 'yes');
    expect(await redisPersistence(redis)).toEqual([{ node: `127.0.0.1:${server.port}`, aof: true }]);
    const { stream, logger } = capture();
    await warnWithoutPersistence(redis, logger, true);
    expect(stream.lines).toEqual([]);
  });

  it('when INFO is refused (an ACL user without it), then the check says it could not tell, and does not throw', async () => {
    await redis.call('ACL', 'SETUSER', 'noinfo', 'on', '>pw-noinfo', '~*', '+@all', '-info');
    const limited = new Redis({ port: server.port, host: '127.0.0.1', username: 'noinfo', password: 'pw-noinfo', maxRetriesPerRequest: 1 });
    try {
      const { stream, logger } = capture();
      expect(await warnWithoutPersistence(limited, logger, true)).toEqual([{ node: `127.0.0.1:${server.port}`, aof: undefined }]);
      expect(warnings(stream).map((l) => l.message)).toEqual([expect.stringContaining('could not read redis persistence')]);
    } finally {
      limited.disconnect();
    }
  });
});
