-- observe: folds into the record what the gateway's own record shows was done outside tokengate (a refund or a
-- void made in the merchant console), so a later "refund all" asks for what is really left. Only while nothing
-- moves on the sale (no capture or refund in flight or unknown) and only toward less money available.
-- KEYS[1] record hash. ARGV: refunded cents as the caller read them (a compare-and-set: anything settled since
-- leaves the record alone), refunded cents to set (never lower), '1' when the gateway shows the sale voided.
-- Returns 1 when the record was changed, 0 otherwise. Never creates a record.
local f = redis.call('HMGET', KEYS[1], 'state', 'refunded', 'pending_refund')
local state = f[1]
if (state ~= 'captured' and state ~= 'authorized') or tonumber(f[3] or '0') ~= 0 or f[2] ~= ARGV[1] then return 0 end
local changed = 0
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], 'state', 'voided')
  changed = 1
end
if state == 'captured' and tonumber(ARGV[2]) > tonumber(f[2]) then
  redis.call('HSET', KEYS[1], 'refunded', ARGV[2])
  changed = 1
end
return changed
