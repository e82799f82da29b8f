-- sending: how many of the given sale attempts are still `sending` with their lease running (Redis clock).
-- A removal polls it between its tombstone and the gateway's DELETE. KEYS[1] guard hash; ARGV: attempt ids.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = 0
for i = 1, #ARGV do
  local value = redis.call('HGET', KEYS[1], 'fly:' .. ARGV[i])
  if value then
    local _, state, untilMs = string.match(value, '^([^|]*)|([^|]*)|(%d+)$')
    if state == 'sending' and untilMs and tonumber(untilMs) > now then n = n + 1 end
  end
end
return n
