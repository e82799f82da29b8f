-- save: keeps a settlement once, lists it by its close, and gives the claim back, in one step.
-- KEYS[1] the settlement (hash: summary, lines), KEYS[2] the list (sorted set: close ms → batch), KEYS[3] the claim.
-- ARGV: batch, summary JSON, lines JSON, close ms, ttl ms, owner, oldest close ms still listed.
-- Answers 1 when kept now, 0 when it was kept already (a second read of the batch changes nothing).
local kept = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'summary', ARGV[2], 'lines', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]), ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[7])
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]))
  kept = 1
end
if redis.call('GET', KEYS[3]) == ARGV[6] then redis.call('DEL', KEYS[3]) end
return kept
