-- save: keeps a settlement once, lists it by its close, and gives the claim back, in one step.
-- KEYS[1] the settlement (hash: summary, lines), KEYS[2] the list (sorted set: close ms → batch), KEYS[3] the claim,
-- KEYS[4] the open bank lines (sorted set: end of review ms → '["<batch>","<transaction>"]'),
-- KEYS[5..] the index keys of the sales the batch holds (each `<tag>:of:<sale>`, set to the batch).
-- ARGV: batch, summary JSON, lines JSON, close ms, ttl ms, owner, oldest close ms still listed,
--   the open bank lines (JSON array of [member, end of review ms]).
-- The index keys share KEYS[1]'s hash tag (one Cluster slot): the sale → settlement index the sweep for
-- `missing` reads, and a bank payment's return finds its line by, written with the settlement or not at all.
-- They are KEYS, as every key a script touches must be (Redis' EVAL contract; a Cluster, or a proxy in front
-- of one, routes and locks by them): test/support/declared-keys.ts checks it.
-- Answers 1 when kept now, 0 when it was kept already (a second read of the batch changes nothing).
local kept = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  local ttl = tonumber(ARGV[5])
  redis.call('HSET', KEYS[1], 'summary', ARGV[2], 'lines', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]), ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[7])
  redis.call('PEXPIRE', KEYS[2], ttl)
  for i = 5, #KEYS do redis.call('SET', KEYS[i], ARGV[1], 'PX', ttl, 'NX') end
  local open = cjson.decode(ARGV[8])
  for _, o in ipairs(open) do redis.call('ZADD', KEYS[4], tonumber(o[2]), o[1]) end
  if #open > 0 then redis.call('PEXPIRE', KEYS[4], ttl) end
  kept = 1
end
if redis.call('GET', KEYS[3]) == ARGV[6] then redis.call('DEL', KEYS[3]) end
return kept
