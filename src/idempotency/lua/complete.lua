-- complete: store the answer if ARGV[1] still owns the key (also after its lease expired, as long as no
-- retry took over: the real answer beats "outcome unknown"). KEYS[1] record.
-- ARGV: attempt id, response JSON, retention ms. Returns 1 when stored, 2 when stored after the lease ran out
-- and the key was seen as unknown (the writer then clears the reconciler's unknown entry too), 0 when not the owner.
local f = redis.call('HMGET', KEYS[1], 'state', 'owner')
if f[2] ~= ARGV[1] or (f[1] ~= 'in_progress' and f[1] ~= 'unknown') then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'state', 'completed', 'response', ARGV[2], 'completed_at', t[1])
redis.call('HDEL', KEYS[1], 'owner', 'lease_until')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if f[1] == 'unknown' then return 2 end
return 1
