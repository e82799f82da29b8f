-- put-customer: a customer's fields as the gateway answered a create or an update, in the view in the same step.
-- A created customer is loaded at once with no payment method (it has none), so its first list costs no call.
-- KEYS[1] view hash, KEYS[2] guard hash. ARGV: customer JSON, '1' = just created, view TTL ms. Returns 0 when the
-- customer was removed (nothing written), else 1.
local v, g = KEYS[1], KEYS[2]
if redis.call('HEXISTS', g, 'deleted') == 1 then return 0 end
if ARGV[2] == '1' then
  local t = redis.call('TIME')
  redis.call('HSET', v, 'cust', ARGV[1], 'seen', string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
elseif redis.call('HEXISTS', v, 'seen') == 1 then
  redis.call('HSET', v, 'cust', ARGV[1])
end
redis.call('HINCRBY', v, 'ver', 1)
redis.call('PEXPIRE', v, tonumber(ARGV[3]))
return 1
