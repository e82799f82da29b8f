-- Token read-through, one round trip for both a hit and a miss that takes the lock.
-- KEYS[1] value, KEYS[2] lock (same hash tag). ARGV[1] owner token, ARGV[2] lock TTL in ms.
-- Returns {1, value} on a hit, {2} when the lock is now ours, {3, pttl} when another owner loads.
local v = redis.call('GET', KEYS[1])
if v then return {1, v} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {2} end
return {3, redis.call('PTTL', KEYS[2])}
