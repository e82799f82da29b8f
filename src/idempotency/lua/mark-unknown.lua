-- markOutcomeUnknown: the sale may have been sent (timeout, reset after sending). Never re-sent unless a
-- duplicate-folding retry takes it over. KEYS[1] record.
-- ARGV: attempt id, invoice ('' = keep the one from begin), reason, retention ms. Returns 1 or 0 (not owner).
local f = redis.call('HMGET', KEYS[1], 'state', 'owner')
if f[2] ~= ARGV[1] or (f[1] ~= 'in_progress' and f[1] ~= 'unknown') then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'state', 'unknown', 'reason', ARGV[3], 'since', string.format('%d', now))
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'invoice', ARGV[2]) end
redis.call('HDEL', KEYS[1], 'owner', 'lease_until')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
