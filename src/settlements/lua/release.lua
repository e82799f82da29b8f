-- release: gives a batch's claim back if this owner still holds it. KEYS[1] the claim; ARGV[1] the owner.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
