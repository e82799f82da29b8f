-- Compare-and-delete: release the lock only if ARGV[1] still owns it (it may have expired and been retaken).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
