-- append: one payment event, unless its change is already in the log (contract: the same money never emits
-- twice). The dedupe mark and the entry are written in one atomic step, so two replicas reporting one change
-- at once (tokengate's own write and the gateway's webhook about it) append one event.
-- KEYS[1] the log (a stream), KEYS[2] the change's mark (same hash tag).
-- ARGV: retention ms (entries older than that are trimmed, approximately: never sooner), type, change, data JSON.
-- Returns the entry id: the new one, or the one already appended for this change.
local kept = redis.call('GET', KEYS[2])
if kept then return kept end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minid = string.format('%d', now - tonumber(ARGV[1]))
local id = redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*', 'type', ARGV[2], 'change', ARGV[3], 'data', ARGV[4])
redis.call('SET', KEYS[2], id, 'PX', ARGV[1])
return id
