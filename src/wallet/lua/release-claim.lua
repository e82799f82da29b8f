-- release-claim: frees a customerid claim if it still holds ARGV[1] ('attempt:<id>' proven not sent, or
-- 'custkey:<key>' of a customer removed). KEYS[1] claim.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
