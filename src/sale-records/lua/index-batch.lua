-- index-batch: sales join their batch's set (a batch's close event names the batch, not its sales).
-- KEYS[1] the batch's set. ARGV: ttl ms, then the sales' keys: every sale of one batch whose answer came in the
-- same turn of the event loop, in one command (issue 40; redis/coalesce.ts). One script rather than
-- MULTI/SADD/PEXPIRE/EXEC: the same atomicity (the set never outlives its ttl) in one command, which on ioredis
-- costs a sale far less CPU than a transaction (bench/trace-sale.js, bench/ab-sale.js).
-- Answers 1 when the set is new (the batch's first sales: the caller adds the batch to the due index, issue 39),
-- else 0: the due index costs one command per batch, none per sale.
local fresh = redis.call('EXISTS', KEYS[1]) == 0 and 1 or 0
redis.call('SADD', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return fresh
