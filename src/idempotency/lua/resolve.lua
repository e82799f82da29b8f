-- resolve: the reconciler found the write in the gateway's records (issue 12). An 'unknown' record that no
-- retry has taken over since it was inspected (same attempts count) becomes 'completed' with the real
-- answer, so a retry with the key replays it, and marked `follow` in the same step (as mark-following.lua): what
-- the write records beside its answer (its use case's records, its payment events) is not kept yet, and the
-- reconciler's follow-through pass re-applies it until done, then clears the mark. A crash between the resolve and
-- the follow-through leaves the mark, never a resolved key without it. KEYS[1] record.
-- ARGV: attempts seen by inspect, response JSON, retention ms. Returns 1, or 0 when the record moved on.
local f = redis.call('HMGET', KEYS[1], 'state', 'attempts')
if f[1] ~= 'unknown' or (f[2] or '1') ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'state', 'completed', 'response', ARGV[2], 'completed_at', t[1], 'reconciled', '1', 'follow', '1')
redis.call('HDEL', KEYS[1], 'owner', 'lease_until', 'next_look')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
