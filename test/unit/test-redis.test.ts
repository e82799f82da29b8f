import Redis from 'ioredis';
import { redisUrl } from '../support/redis';

/**
 * The suite's Redis is its own by default (issue 41: runs left thousands of `{tgtest:…}` keys, some with no
 * expiry, in the developer's Redis at 6379): a redis-server the global setup started, with no persistence, that
 * the global teardown stops. TEST_REDIS_URL opts into another one.
 */
const own = process.env.TEST_REDIS_URL === undefined;

(own ? describe : describe.skip)('the suite\'s Redis', () => {
  it('when no TEST_REDIS_URL is given, then the suite runs on a redis-server of its own (not 6379), which persists nothing', async () => {
    expect(new URL(redisUrl()).port).not.toBe('6379');
    expect(Number(process.env.TOKENGATE_TEST_REDIS_PID)).toBeGreaterThan(0);
    const redis = new Redis(redisUrl(), { maxRetriesPerRequest: 1 });
    try {
      expect(await redis.config('GET', 'save')).toEqual(['save', '']);
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'no']);
    } finally {
      redis.disconnect();
    }
  });
});
