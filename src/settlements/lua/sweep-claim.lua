-- sweep-claim: the daily sweep for `missing` lines (issue 39), one replica at a time, across restarts.
-- KEYS[1] when the last sweep ended (ms), KEYS[2] the sweep's claim. ARGV: owner, due-since ms, claim ttl ms.
-- Answers 1 when this owner sweeps now: no sweep ended at or after due-since, and no other replica holds the claim.
local last = tonumber(redis.call('GET', KEYS[1]) or '-1')
if last >= tonumber(ARGV[2]) then return 0 end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', tonumber(ARGV[3])) then return 1 end
return 0
