-- take-due: the destination's events whose next attempt is due, claimed by this consumer in one step, so one
-- consumer holds an event at a time (another one's claim resets the idle time this compares with).
-- KEYS[1] the log. ARGV: group, consumer, count, then the due-after delays (ms) for attempts 1, 2, … (the last
-- one repeats). The idle time of a pending entry counts from its last claim or stamp (XCLAIM … IDLE), and an
-- entry is due when it is at least the delay of the attempt it is on.
-- Returns the claimed entries as {id, attempt, fields…} arrays (attempt = the new delivery count).
local delays = {}
for i = 4, #ARGV do delays[#delays + 1] = tonumber(ARGV[i]) end
local smallest = delays[1]
for _, d in ipairs(delays) do if d < smallest then smallest = d end end
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], 'IDLE', smallest, '-', '+', tonumber(ARGV[3]) * 4)
local out = {}
for _, p in ipairs(pending) do
  if #out >= tonumber(ARGV[3]) then break end
  local id, idle, count = p[1], tonumber(p[3]), tonumber(p[4])
  local delay = delays[math.min(count, #delays)]
  if idle >= delay then
    local claimed = redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], delay, id)
    local entry = claimed[1]
    if entry and entry ~= false then
      out[#out + 1] = {entry[1], count + 1, entry[2]}
    elseif #claimed == 0 then
      -- Trimmed from the log meanwhile (older than its retention): nothing left to deliver.
      redis.call('XACK', KEYS[1], ARGV[1], id)
    end
  end
end
return out
