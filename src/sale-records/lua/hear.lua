-- hear: what a gateway webhook says happened to a sale, applied by what it means, never by when it arrived
-- (contract, "Gateway webhooks (in)"): an event older than what the record knows never undoes it. Every change
-- bumps `ver`, so a refresh that read the record before it never overwrites it (refresh.lua). Never creates a
-- record. KEYS[1] record hash. ARGV[1] the kind, then its values:
--   sale                          nothing to change (the sale exists): answers the state
--   voided                        authorized, captured, capturing or voiding → voided (a void in flight keeps its
--                                 reservation: its own answer, or the reconciler, settles it)
--   captured  cents, fields…      authorized → captured (cents), with the batch fields given (name, value pairs)
--   settled                       a captured sale's batch closed: settled
--   refunded  key, entry          a refund with its own transaction: listed already (tokengate's own, credited, or
--                                 seen) → 'listed'; any refund of the sale in flight → 'busy' (it may be that one:
--                                 its answer or the reconciler accounts for it); else folded in as seen at the
--                                 gateway ('rx:<key>' = entry '<refnum>|<cents>|<created>|<status>'), refunded
--                                 raised by its cents (never past what was captured) → 'applied'
--   adjusted  cents, sale key     the gateway's new amount (issue 36): an authorization holds it → 'applied';
--                                 a captured sale has that much left: equal → 'listed' (tokengate's own
--                                 refund:adjust); less → refunded raised, more → refunded lowered (and captured
--                                 raised past it: an incremental authorization) → 'applied' and the cents moved
--                                 (positive: given back); a capture, void or refund in flight → 'busy'. What
--                                 the sale has left is compared without its standing credits (refunds with a
--                                 transaction of their own: their key is not the sale's), which stay refunded
--   refund_voided key             a refund the record lists (tokengate's own 'rf:', or seen 'rx:') voided at the
--                                 gateway: its cents no longer refunded, marked 'rv:<key>' → 'applied' and the
--                                 cents; voided already → 'listed'; not listed → 'unknown_refund'
--   refund_restored key           a refund marked voided that the gateway shows standing (a webhook it
--                                 contradicts): counted as refunded again (never past what was captured) →
--                                 'applied' and the cents; not marked → 'unchanged'
--   unvoided                      a voided sale restored: captured (or authorized when nothing was captured) →
--                                 'changed'; a void of tokengate's in flight → 'busy'
-- Returns {result, state, extra}: result 'absent' | 'unchanged' | 'changed' | 'listed' | 'busy' | 'applied'.
local f = redis.call('HMGET', KEYS[1], 'state', 'captured', 'refunded', 'pending_refund', 'settled')
local state = f[1]
if not state then return {'absent', '', 0} end
local kind = ARGV[1]
local function bump() redis.call('HINCRBY', KEYS[1], 'ver', 1) end
if kind == 'voided' then
  if state == 'authorized' or state == 'captured' or state == 'capturing' or state == 'voiding' then
    redis.call('HSET', KEYS[1], 'state', 'voided')
    bump()
    return {'changed', 'voided', 0}
  end
  return {'unchanged', state, 0}
end
if kind == 'captured' then
  if state == 'authorized' then
    redis.call('HSET', KEYS[1], 'state', 'captured', 'captured', ARGV[2])
    if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
    bump()
    return {'changed', 'captured', 0}
  end
  return {'unchanged', state, 0}
end
if kind == 'settled' then
  if state == 'captured' and f[5] ~= '1' then
    redis.call('HSET', KEYS[1], 'settled', '1')
    bump()
    return {'changed', state, 0}
  end
  return {'unchanged', state, 0}
end
if kind == 'refunded' then
  if redis.call('HEXISTS', KEYS[1], 'rk:' .. ARGV[2]) == 1 or redis.call('HEXISTS', KEYS[1], 'rx:' .. ARGV[2]) == 1 then return {'listed', state, 0} end
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 3) == 'rf:' and string.sub(all[i + 1], 1, #ARGV[2] + 1) == ARGV[2] .. '|' then return {'listed', state, 0} end
  end
  if tonumber(f[4] or '0') ~= 0 then return {'busy', state, 0} end
  if state ~= 'captured' then return {'unchanged', state, 0} end
  local cents = tonumber(string.match(ARGV[3], '^[^|]*|(%d+)|') or '0')
  local refunded = math.min(tonumber(f[2]), tonumber(f[3]) + cents)
  redis.call('HSET', KEYS[1], 'rx:' .. ARGV[2], ARGV[3], 'refunded', refunded)
  bump()
  return {'applied', state, cents}
end
if kind == 'adjusted' then
  local there = tonumber(ARGV[2])
  if state == 'authorized' then
    if tonumber(redis.call('HGET', KEYS[1], 'authorized') or '0') == there then return {'listed', state, 0} end
    redis.call('HSET', KEYS[1], 'authorized', there)
    bump()
    return {'applied', state, 0}
  end
  if state ~= 'captured' then return {'unchanged', state, 0} end
  if tonumber(f[4] or '0') ~= 0 then return {'busy', state, 0} end
  local captured = tonumber(f[2])
  -- The gateway's amount is what the sale itself has left: a refund with a transaction of its own (a credit of a
  -- settled sale: 'rf:' of another key than the sale's, or one seen 'rx:') does not lower it, so standing credits
  -- are left out of the comparison and kept in `refunded` (an adjustment delivered after a later credit once
  -- undid the credit: soak, 2026-11-28).
  local credits = 0
  local all = redis.call('HGETALL', KEYS[1])
  local voided = {}
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 3) == 'rv:' then voided[string.sub(all[i], 4)] = true end
  end
  for i = 1, #all, 2 do
    local kind3 = string.sub(all[i], 1, 3)
    local key, cents
    if kind3 == 'rf:' then
      key, cents = string.match(all[i + 1], '^([^|]*)|[^|]*|(%d+)|')
    elseif kind3 == 'rx:' then
      key, cents = string.sub(all[i], 4), string.match(all[i + 1], '^[^|]*|(%d+)|')
    end
    if key and cents and key ~= ARGV[3] and not voided[key] then credits = credits + tonumber(cents) end
  end
  local left = captured - (tonumber(f[3]) - credits)
  if there == left then return {'listed', state, 0} end
  if there > captured then
    captured = there
    redis.call('HSET', KEYS[1], 'captured', captured)
  end
  redis.call('HSET', KEYS[1], 'refunded', math.min(captured, credits + captured - there))
  bump()
  return {'applied', state, left - there}
end
if kind == 'refund_voided' then
  local key = ARGV[2]
  local was = redis.call('HGET', KEYS[1], 'rv:' .. key)
  if was then return {'listed', state, tonumber(was)} end
  local cents = nil
  local seen = redis.call('HGET', KEYS[1], 'rx:' .. key)
  if seen then cents = tonumber(string.match(seen, '^[^|]*|(%d+)|')) end
  if not cents then
    local all = redis.call('HGETALL', KEYS[1])
    for i = 1, #all, 2 do
      if string.sub(all[i], 1, 3) == 'rf:' and string.sub(all[i + 1], 1, #key + 1) == key .. '|' then
        cents = tonumber(string.match(all[i + 1], '^[^|]*|[^|]*|(%d+)|'))
      end
    end
  end
  if not cents then return {'unknown_refund', state, 0} end
  redis.call('HSET', KEYS[1], 'rv:' .. key, cents, 'refunded', math.max(0, tonumber(f[3]) - cents))
  bump()
  return {'applied', state, cents}
end
if kind == 'refund_restored' then
  local was = redis.call('HGET', KEYS[1], 'rv:' .. ARGV[2])
  if not was then return {'unchanged', state, 0} end
  redis.call('HDEL', KEYS[1], 'rv:' .. ARGV[2])
  redis.call('HSET', KEYS[1], 'refunded', math.min(tonumber(f[2]), tonumber(f[3]) + tonumber(was)))
  bump()
  return {'applied', state, tonumber(was)}
end
if kind == 'unvoided' then
  if state == 'voiding' then return {'busy', state, 0} end
  if state ~= 'voided' then return {'unchanged', state, 0} end
  local back = 'authorized'
  if tonumber(f[2]) > 0 then back = 'captured' end
  redis.call('HSET', KEYS[1], 'state', back)
  bump()
  return {'changed', back, 0}
end
return {'unchanged', state, 0}
