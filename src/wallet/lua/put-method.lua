-- put-method: a payment method write the gateway confirmed (renamed, renewed, its AVS data, stored by a sale)
-- or the default chosen, in the view in the same step as the write's answer. The method goes in only when the
-- view is loaded (an unloaded one reads the gateway's word, which has the write, when next asked); the version
-- is bumped either way, so a load that read the gateway before this write never applies over it.
-- KEYS[1] view hash, KEYS[2] guard hash. ARGV: pmkey, method JSON ('' = none), '1' = make it the default,
-- view TTL ms. Returns 0 when the method or the customer was removed (nothing written), else 1.
local v, g, pm = KEYS[1], KEYS[2], ARGV[1]
if redis.call('HEXISTS', g, 'deleted') == 1 or redis.call('HEXISTS', g, 'rm:' .. pm) == 1 then return 0 end
if ARGV[2] ~= '' and redis.call('HEXISTS', v, 'seen') == 1 then redis.call('HSET', v, 'pm:' .. pm, ARGV[2]) end
if ARGV[3] == '1' then redis.call('HSET', v, 'def', pm) end
redis.call('HINCRBY', v, 'ver', 1)
redis.call('PEXPIRE', v, tonumber(ARGV[4]))
return 1
