-- After a load: cache the value (ARGV[3] > 0) and release the lock if ARGV[1] still owns it.
-- The value is cached even when our lock expired meanwhile: it is as fresh as anyone's.
-- KEYS[1] value, KEYS[2] lock. ARGV[1] owner, ARGV[2] value JSON, ARGV[3] TTL ms (0 = do not cache).
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  return 1
end
return 0
