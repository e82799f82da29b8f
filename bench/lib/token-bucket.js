'use strict';
/**
 * The "plain token bucket" peer of the budget comparison: capacity N, refilling continuously at N per window,
 * shared by all processes through one Redis hash, time from Redis TIME. A process serves its callers FIFO:
 * only the head polls, sleeping until the next token is due. Over any span of one window it lets through up
 * to N (full bucket) + N (refill) ≈ 2N calls, which is the trap issue 4 describes.
 */
const LUA = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local v = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(v[1]) or cap
local ts = tonumber(v[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - ts) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], 600000)
return wait
`;

function createTokenBucket({ redis, key, capacity, refillPerMs }) {
  redis.defineCommand('benchTokenBucketTake', { numberOfKeys: 1, lua: LUA });
  const waiters = [];
  let pumping = false;
  let closed = false;

  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (waiters.length > 0 && !closed) {
        const wait = Number(await redis.benchTokenBucketTake(key, capacity, refillPerMs));
        if (wait === 0) waiters.shift().resolve();
        else await new Promise((r) => setTimeout(r, wait));
      }
    } catch (err) {
      while (waiters.length > 0) waiters.shift().reject(err);
    } finally {
      pumping = false;
    }
  }

  return {
    take() {
      return new Promise((resolve, reject) => {
        waiters.push({ resolve, reject });
        void pump();
      });
    },
    async close() {
      closed = true;
    },
  };
}

module.exports = { createTokenBucket, TOKEN_BUCKET_LUA: LUA };
