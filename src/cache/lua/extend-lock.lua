-- Keep a slow load's lock alive (the read may wait in the upstream limiter's queue): PEXPIRE only if
-- ARGV[1] still owns KEYS[1]. ARGV[2] lock TTL ms. Returns 1 when extended, 0 when the lock is not ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
