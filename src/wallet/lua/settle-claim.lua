-- settle-claim: a customerid claim names the custkey the create under it made, if it is still that attempt's (or
-- free: the reconciler settling after a crash). KEYS[1] claim. ARGV: 'attempt:<id>', 'custkey:<key>', TTL ms.
local v = redis.call('GET', KEYS[1])
if v == false or v == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', tonumber(ARGV[3]))
  return 1
end
return 0
