-- A subscription created once under its key (derived from the caller and the create's Idempotency-Key).
-- KEYS[1] the record (string, JSON), KEYS[2] the due set, KEYS[3] the customer's set of subscriptions
-- ARGV[1] key, ARGV[2] record JSON, ARGV[3] due ms ('' = none), ARGV[4] ttl ms, ARGV[5] created ms (list order)
-- Returns {1, json} when created, {0, stored json} when it existed.
local existing = redis.call('GET', KEYS[1])
if existing then return {0, existing} end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[4])
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1]) end
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return {1, ARGV[2]}
