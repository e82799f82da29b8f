-- Frees a renewal claim only if it is still this owner's.
-- KEYS[1] the claim, ARGV[1] owner
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
