-- abandon: the owner sent nothing. A first attempt deletes the key so a retry runs fresh; a folding retry
-- (attempts > 1) goes back to 'unknown', because an EARLIER attempt may still have charged.
-- KEYS[1] record. ARGV: attempt id, retention ms. Returns 1 or 0 (not owner).
local f = redis.call('HMGET', KEYS[1], 'state', 'owner', 'attempts')
if f[2] ~= ARGV[1] or (f[1] ~= 'in_progress' and f[1] ~= 'unknown') then return 0 end
if tonumber(f[3] or '1') > 1 then
  redis.call('HSET', KEYS[1], 'state', 'unknown')
  redis.call('HDEL', KEYS[1], 'owner', 'lease_until')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
return 1
