-- append-many: the payment events of one turn of the event loop in one command (issue 40; redis/coalesce.ts),
-- each as append.lua would write it: unless its change is already in the log (contract: the same money never
-- emits twice); the dedupe mark and the entry in one atomic step.
-- KEYS[1] the log (a stream), KEYS[1 + i] the i-th event's change mark (same hash tag).
-- ARGV: retention ms (entries older than that are trimmed, approximately: never sooner), then per event: type,
-- change, data JSON. Returns the entry ids: the new one, or the one already appended for that change.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minid = string.format('%d', now - tonumber(ARGV[1]))
local ids = {}
for i = 2, #KEYS do
  local kept = redis.call('GET', KEYS[i])
  if kept then
    ids[#ids + 1] = kept
  else
    local a = 2 + (i - 2) * 3
    local id = redis.call('XADD', KEYS[1], 'MINID', '~', minid, '*', 'type', ARGV[a], 'change', ARGV[a + 1], 'data', ARGV[a + 2])
    redis.call('SET', KEYS[i], id, 'PX', ARGV[1])
    ids[#ids + 1] = id
  end
end
return ids
