-- A subscription changed only over the version it was read at (compare-and-set), its due entry in step.
-- KEYS[1] the record, KEYS[2] the due set
-- ARGV[1] key, ARGV[2] expected stored version, ARGV[3] new record JSON, ARGV[4] due ms ('' = none), ARGV[5] ttl ms
-- Returns 1 when applied, 0 when the stored version differs (or the record is gone).
local stored = redis.call('GET', KEYS[1])
if not stored then return 0 end
local version = cjson.decode(stored)['version']
if tostring(version) ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[5])
if ARGV[4] == '' then redis.call('ZREM', KEYS[2], ARGV[1]) else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1]) end
return 1
