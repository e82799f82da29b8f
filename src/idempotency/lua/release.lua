-- release: the reconciler proved the write absent from the gateway's records after the gateway's longest
-- processing time (issue 12): nothing was charged, so the key is freed and a retry with it runs once.
-- KEYS[1] record. ARGV: attempts seen by inspect. Returns 1, or 0 when the record moved on.
local f = redis.call('HMGET', KEYS[1], 'state', 'attempts')
if f[1] ~= 'unknown' or (f[2] or '1') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
