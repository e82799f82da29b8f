-- refresh: the gateway's view of a sale folded into its record (a stale view refreshed, a GET that asked for the
-- gateway's word, a refund the gateway refused as too large). Guarantee 9: a refresh never overwrites a newer
-- write, so it applies only over the version it read (`ver`) and only while nothing moves on the sale (no capture,
-- void or refund in flight or unknown). Money moves only toward less left, as the console can only return money.
-- KEYS[1] record hash. ARGV: version read, refunded cents seen, '1' voided, '1' settled, then the refunds the
-- gateway lists as name, value pairs ('rx:<key>' = '<refnum>|<cents>|<created>|<status>': made outside tokengate,
-- or lending their status to tokengate's own 'rf:' entry of the same key), which replace the record's.
-- Returns 1 when applied.
local f = redis.call('HMGET', KEYS[1], 'state', 'refunded', 'pending_refund', 'ver')
local state = f[1]
if not state then return 0 end
if (f[4] or '0') ~= ARGV[1] then return 0 end
if state == 'capturing' or state == 'voiding' or tonumber(f[3] or '0') ~= 0 then return 0 end
if (state == 'captured' or state == 'authorized') and ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'state', 'voided') end
if state == 'captured' and tonumber(ARGV[2]) > tonumber(f[2]) then redis.call('HSET', KEYS[1], 'refunded', ARGV[2]) end
if ARGV[4] == '1' then redis.call('HSET', KEYS[1], 'settled', '1') end
local all = redis.call('HKEYS', KEYS[1])
for _, name in ipairs(all) do
  if string.sub(name, 1, 3) == 'rx:' then redis.call('HDEL', KEYS[1], name) end
end
if #ARGV > 4 then redis.call('HSET', KEYS[1], unpack(ARGV, 5)) end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'seen', string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)))
redis.call('HINCRBY', KEYS[1], 'ver', 1)
return 1
