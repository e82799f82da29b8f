-- inspect: the record's state for the reconciler (issue 12). An in_progress record whose lease is over is
-- turned 'unknown' exactly as begin does (its owner died or hung: the write may have been sent).
-- KEYS[1] record. ARGV: retention ms.
-- Returns {'absent'} | {'completed'} | {'in_progress', remaining ms} | {'unknown', since ms, attempts, reason}.
local key = KEYS[1]
local state = redis.call('HGET', key, 'state')
if not state then return {'absent'} end
if state == 'completed' then return {'completed'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if state == 'in_progress' then
  local remaining = tonumber(redis.call('HGET', key, 'lease_until')) - now
  if remaining > 0 then return {'in_progress', remaining} end
  redis.call('HSET', key, 'state', 'unknown', 'reason', 'lease_expired', 'since', string.format('%d', now))
  redis.call('HDEL', key, 'lease_until')
  redis.call('PEXPIRE', key, ARGV[1])
end
local f = redis.call('HMGET', key, 'since', 'attempts', 'reason')
return {'unknown', f[1] or '0', f[2] or '1', f[3] or ''}
