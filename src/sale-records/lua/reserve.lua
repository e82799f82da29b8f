-- reserve: money bounds checked and taken in one atomic step (contract guarantee 7), so concurrent captures
-- and refunds on any replicas can never together exceed the authorization or what was captured.
-- KEYS[1] record hash. ARGV: op ('capture' | 'refund'), reservation id, amount in cents ('' = all available).
-- Returns {1, amount, whole} or {0, reason, available}. Reservations are fields 'res:<id>' = '<op>:<cents>'.
local f = redis.call('HMGET', KEYS[1], 'state', 'authorized', 'captured', 'refunded', 'pending_refund')
if not f[1] then return {0, 'absent', 0} end
local state = f[1]
local asked = ARGV[3] ~= '' and tonumber(ARGV[3]) or nil
if ARGV[1] == 'capture' then
  local authorized = tonumber(f[2])
  if state ~= 'authorized' then return {0, 'not_capturable', 0} end
  local amount = asked or authorized
  if amount <= 0 or amount > authorized then return {0, 'not_capturable', authorized} end
  redis.call('HSET', KEYS[1], 'state', 'capturing', 'res:' .. ARGV[2], 'capture:' .. amount)
  return {1, amount}
end
-- refund: only captured money comes back; a voided, declined or uncaptured sale has none.
local available = 0
if state == 'captured' then available = tonumber(f[3]) - tonumber(f[4]) - tonumber(f[5]) end
local amount = asked or available
if amount <= 0 or amount > available then return {0, 'exceeds', math.max(available, 0)} end
-- 'whole': this reservation takes all that is left (a creditvoid then voids an unsettled sale, whose earlier
-- partial refunds only lowered its authorization, instead of refunding it).
local whole = 0
if amount == available then whole = 1 end
redis.call('HINCRBY', KEYS[1], 'pending_refund', amount)
redis.call('HSET', KEYS[1], 'res:' .. ARGV[2], 'refund:' .. amount)
return {1, amount, whole}
