-- settle: ends a reservation from the gateway's answer. KEYS[1] record hash.
-- ARGV: reservation id, how ('applied' | 'released' | 'unknown'), applied cents ('' = the reserved amount),
-- refund key ('' = none: an applied refund's own gateway transaction, kept as 'rk:<key>' = reservation id),
-- listed refund ('' = none: '<key>|<refnum>|<method>' of an applied refund's answer, kept as
-- 'rf:<id>' = '<key>|<refnum>|<cents>|<unix s>|<method>' so the sale's view lists it, issue 25 item 6).
-- 'unknown' keeps the reservation (the money may have moved) and only marks it, with the time, for the
-- reconciler (issue 12): 'res:<id>' = '<op>:<cents>:unknown:<ms>'. Applied: the gateway's answer is the record's
-- newest match with it (`seen`). Every settlement bumps `ver`.
-- Returns 1 when a reservation was settled, 0 when there was none (already settled, or expired).
local field = 'res:' .. ARGV[1]
local res = redis.call('HGET', KEYS[1], field)
if not res then return 0 end
local op, cents = string.match(res, '^(%a+):(%d+)')
cents = tonumber(cents)
local how = ARGV[2]
local t = redis.call('TIME')
local nowMs = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('HINCRBY', KEYS[1], 'ver', 1)
if how == 'unknown' then
  -- When it became unknown (Redis TIME, like the idempotency record's `since`): the reconciler tells several
  -- unknown refunds of one sale apart only once none of them can still land (src/reconcile/find.ts).
  if not string.find(res, ':unknown') then
    local rest = ''
    if op == 'void' then rest = ':' .. (string.match(res, '^void:%d+:(%a+)') or 'captured') end
    redis.call('HSET', KEYS[1], field, op .. ':' .. cents .. rest .. ':unknown:' .. nowMs)
  end
  return 1
end
local applied = ARGV[3] ~= '' and tonumber(ARGV[3]) or cents
redis.call('HDEL', KEYS[1], field)
if how == 'applied' then redis.call('HSET', KEYS[1], 'seen', nowMs) end
if op == 'refund' then
  redis.call('HINCRBY', KEYS[1], 'pending_refund', -cents)
  if how == 'applied' then
    redis.call('HINCRBY', KEYS[1], 'refunded', applied)
    if ARGV[4] and ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'rk:' .. ARGV[4], ARGV[1]) end
    if ARGV[5] and ARGV[5] ~= '' then
      local key, refnum, method = string.match(ARGV[5], '^([^|]*)|([^|]*)|(%a+)$')
      if key then redis.call('HSET', KEYS[1], 'rf:' .. ARGV[1], key .. '|' .. refnum .. '|' .. applied .. '|' .. t[1] .. '|' .. method) end
    end
  end
elseif op == 'void' then
  if how == 'applied' then
    redis.call('HSET', KEYS[1], 'state', 'voided')
  elseif redis.call('HGET', KEYS[1], 'state') == 'voiding' then
    -- Proven not sent, or refused: the sale is as it was before the void.
    redis.call('HSET', KEYS[1], 'state', string.match(res, '^void:%d+:(%a+)') or 'captured')
  end
else
  if how == 'applied' then
    redis.call('HSET', KEYS[1], 'state', 'captured', 'captured', applied)
  elseif redis.call('HGET', KEYS[1], 'state') == 'capturing' then
    redis.call('HSET', KEYS[1], 'state', 'authorized')
  end
end
return 1
