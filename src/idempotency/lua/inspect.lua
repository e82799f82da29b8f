-- inspect: the record's state for the reconciler (issue 12). An in_progress record whose lease is over is
-- turned 'unknown' exactly as begin does (its owner died or hung: the write may have been sent).
-- KEYS[1] record. ARGV: retention ms.
-- Returns {'absent'} | {'completed'} | {'completed', '1', response, op, customer, sale, amount, payment_method,
-- bank_authorization, bank_sec, save} (its follow-through marked pending: mark-following.lua)
-- | {'in_progress', remaining ms} | the 'unknown' reply of begin.lua.
local key = KEYS[1]
local state = redis.call('HGET', key, 'state')
if not state then return {'absent'} end
if state == 'completed' then
  if redis.call('HGET', key, 'follow') ~= '1' then return {'completed'} end
  local f = redis.call('HMGET', key, 'response', 'op', 'customer', 'sale', 'amount', 'payment_method', 'bank_authorization', 'bank_sec', 'save')
  return {'completed', '1', f[1] or '', f[2] or '', f[3] or '', f[4] or '', f[5] or '', f[6] or '', f[7] or '', f[8] or '', f[9] or ''}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if state == 'in_progress' then
  local remaining = tonumber(redis.call('HGET', key, 'lease_until')) - now
  if remaining > 0 then return {'in_progress', remaining} end
  redis.call('HSET', key, 'state', 'unknown', 'reason', 'lease_expired', 'since', string.format('%d', now))
  redis.call('HDEL', key, 'lease_until')
  redis.call('PEXPIRE', key, ARGV[1])
end
local f = redis.call('HMGET', key, 'invoice', 'reason', 'since', 'attempts', 'op', 'customer', 'sale', 'amount', 'started', 'created', 'next_look',
  'payment_method', 'bank_authorization', 'bank_sec', 'save')
return {'unknown', f[1] or '', f[2] or '', f[3] or '0', f[4] or '1', f[5] or '', f[6] or '', f[7] or '', f[8] or '', f[9] or f[10] or '0',
  f[11] or '', string.format('%d', now), f[12] or '', f[13] or '', f[14] or '', f[15] or ''}
