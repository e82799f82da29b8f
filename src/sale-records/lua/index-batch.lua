-- index-batch: a sale joins its batch's set (a batch's close event names the batch, not its sales).
-- KEYS[1] the batch's set. ARGV: the sale's key, ttl ms. One script rather than MULTI/SADD/PEXPIRE/EXEC: the
-- same atomicity (the set never outlives its ttl) in one command, which on ioredis costs a sale far less CPU
-- than a transaction (a Pipeline object and four commands; bench/trace-sale.js, bench/ab-sale.js).
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
