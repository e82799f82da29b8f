-- refresh: the gateway's view of a sale folded into its record (a stale view refreshed, a GET that asked for the
-- gateway's word, a refund the gateway refused as too large). Guarantee 9: a refresh never overwrites a newer
-- write, so it applies only over the version it read (`ver`) and only while nothing moves on the sale (no capture,
-- void or refund in flight or unknown). Guarantee 12: the gateway's word wins in both directions (issue 36): the
-- refunded and captured amounts it confirms are set as they are (a voided refund, an adjustment up, a wrong
-- webhook undone), and a sale the gateway shows restored (unvoided) is restored.
-- KEYS[1] record hash. ARGV: version read, refunded cents confirmed, '1' voided, '1' settled, captured cents
-- confirmed, the state a voided record is restored to ('' none), then the refunds the
-- gateway lists as name, value pairs ('rx:<key>' = '<refnum>|<cents>|<created>|<status>': made outside tokengate,
-- or lending their status to tokengate's own 'rf:' entry of the same key), which replace the record's.
-- Returns {1, voided now (1/0), settled now (1/0), refunded before, refunded after, captured, state, unvoided now, then the keys of
-- refunds listed for the first time that are not tokengate's own} when applied (what changed is reported as
-- payment events: src/sales/sale-events.ts), 0 when not.
local f = redis.call('HMGET', KEYS[1], 'state', 'refunded', 'pending_refund', 'ver', 'settled', 'captured')
local state = f[1]
if not state then return 0 end
if (f[4] or '0') ~= ARGV[1] then return 0 end
if state == 'capturing' or state == 'voiding' or tonumber(f[3] or '0') ~= 0 then return 0 end
local voidedNow, settledNow, unvoidedNow = 0, 0, 0
local refunded = tonumber(f[2])
if (state == 'captured' or state == 'authorized') and ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'voided')
  voidedNow = 1
elseif state == 'voided' and ARGV[3] ~= '1' and ARGV[6] ~= '' then
  redis.call('HSET', KEYS[1], 'state', ARGV[6])
  state = ARGV[6]
  unvoidedNow = 1
end
if state == 'captured' and voidedNow == 0 then
  redis.call('HSET', KEYS[1], 'refunded', ARGV[2], 'captured', ARGV[5])
  refunded = tonumber(ARGV[2])
  f[6] = ARGV[5]
end
if ARGV[4] == '1' then
  if f[5] ~= '1' then settledNow = 1 end
  redis.call('HSET', KEYS[1], 'settled', '1')
end
-- What was listed before, and which refund keys are tokengate's own (credited 'rk:', or answered 'rf:').
local before, own = {}, {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local name = all[i]
  if string.sub(name, 1, 3) == 'rx:' then
    before[name] = true
    redis.call('HDEL', KEYS[1], name)
  elseif string.sub(name, 1, 3) == 'rk:' then
    own[string.sub(name, 4)] = true
  elseif string.sub(name, 1, 3) == 'rf:' then
    own[string.match(all[i + 1], '^([^|]*)|') or ''] = true
  end
end
local fresh = {}
for i = 7, #ARGV - 1, 2 do
  if not before[ARGV[i]] and not own[string.sub(ARGV[i], 4)] then fresh[#fresh + 1] = string.sub(ARGV[i], 4) end
end
if #ARGV > 6 then redis.call('HSET', KEYS[1], unpack(ARGV, 7)) end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'seen', string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)))
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return {1, voidedNow, settledNow, tonumber(f[2]), refunded, tonumber(f[6] or '0'), redis.call('HGET', KEYS[1], 'state'), unvoidedNow, unpack(fresh)}
