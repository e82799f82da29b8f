-- reserve: money bounds checked and taken in one atomic step (contract guarantee 7), so concurrent captures,
-- voids and refunds on any replicas can never together exceed the authorization or what was captured, and never
-- send two voids of one sale (issue 25, item 5).
-- KEYS[1] record hash. ARGV: op ('capture' | 'refund' | 'void'), reservation id, amount in cents ('' = all
-- available). Returns {1, amount, whole} or {0, reason, available}. Reservations are fields
-- 'res:<id>' = '<op>:<cents>' ('void:0:<state before>' for a void). Every reservation bumps `ver`.
-- A bank payment (`ach_status` set: contract, "Bank payments") is voidable only while pending (P, or M awaiting
-- approval), and a returned (R) or failed (E) one has nothing to refund ({0, 'returned', 0}): checked here, in the
-- same step as the bounds, so a return heard on one replica and a refund on another cannot both go through. A
-- pending one (P or M, or no step heard yet: `bank_sec` set, `ach_status` not) is voided, not refunded ({0,
-- 'pending', 0}): the gateway refuses a refund of a check not yet submitted (sandbox README, ACH), so none is sent.
local f = redis.call('HMGET', KEYS[1], 'state', 'authorized', 'captured', 'refunded', 'pending_refund', 'ach_status', 'bank_sec')
if not f[1] then return {0, 'absent', 0} end
local state = f[1]
local asked = ARGV[3] ~= '' and tonumber(ARGV[3]) or nil
if ARGV[1] == 'capture' then
  local authorized = tonumber(f[2])
  if state ~= 'authorized' then return {0, 'not_capturable', 0} end
  local amount = asked or authorized
  if amount <= 0 or amount > authorized then return {0, 'not_capturable', authorized} end
  redis.call('HSET', KEYS[1], 'state', 'capturing', 'res:' .. ARGV[2], 'capture:' .. amount)
  redis.call('HINCRBY', KEYS[1], 'ver', 1)
  return {1, amount}
end
if ARGV[1] == 'void' then
  if state == 'voided' or state == 'declined' then return {0, 'not_voidable', 0} end
  if f[6] and f[6] ~= 'P' and f[6] ~= 'M' then return {0, 'not_voidable', 0} end
  -- Another void, a capture or a refund in flight (or of unknown outcome): its end decides what a void can do.
  if state ~= 'authorized' and state ~= 'captured' or tonumber(f[5]) ~= 0 then return {0, 'busy', 0} end
  redis.call('HSET', KEYS[1], 'state', 'voiding', 'res:' .. ARGV[2], 'void:0:' .. state)
  redis.call('HINCRBY', KEYS[1], 'ver', 1)
  return {1, 0, 0}
end
-- refund: only captured money comes back; a voided, declined or uncaptured sale has none.
if f[6] == 'R' or f[6] == 'E' then return {0, 'returned', 0} end
if f[6] == 'P' or f[6] == 'M' or (not f[6] and f[7]) then return {0, 'pending', 0} end
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
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return {1, amount, whole}
