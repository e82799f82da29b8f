-- refresh: the gateway's word about a customer (its fields and all its payment methods) replaces the view, only
-- over the version it read (guarantee 9: a refresh never overwrites a newer write), never on a deleted customer,
-- and never bringing back a tombstoned method. The chosen default stays while its method is listed.
-- KEYS[1] view hash, KEYS[2] guard hash. ARGV: version read, view TTL ms, customer JSON, then pmkey, method JSON
-- pairs. Returns 1 applied, 0 stale (written meanwhile), -1 deleted.
local v, g = KEYS[1], KEYS[2]
if redis.call('HEXISTS', g, 'deleted') == 1 then return -1 end
if (redis.call('HGET', v, 'ver') or '0') ~= ARGV[1] then return 0 end
for _, name in ipairs(redis.call('HKEYS', v)) do
  if string.sub(name, 1, 3) == 'pm:' then redis.call('HDEL', v, name) end
end
redis.call('HSET', v, 'cust', ARGV[3])
local listed = {}
for i = 4, #ARGV, 2 do
  if redis.call('HEXISTS', g, 'rm:' .. ARGV[i]) == 0 then
    redis.call('HSET', v, 'pm:' .. ARGV[i], ARGV[i + 1])
    listed[ARGV[i]] = true
  end
end
local def = redis.call('HGET', v, 'def')
if def and not listed[def] then redis.call('HDEL', v, 'def') end
local t = redis.call('TIME')
redis.call('HSET', v, 'seen', string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)))
redis.call('HINCRBY', v, 'ver', 1)
redis.call('PEXPIRE', v, tonumber(ARGV[2]))
return 1
