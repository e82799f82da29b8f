-- enter: a sale attempt enters a customer's removal guard (guarantee 10), or is refused because its payment
-- method (or the customer) was removed. Run in the same tick as the sale's idempotency claim (no round trip of
-- its own), and again right before sending when the sale could not send at once (recheck).
-- KEYS[1] guard hash. ARGV: pmkey ('' = a card not stored yet: only the customer is checked), attempt id,
-- lease ms, state ('sending' or 'waiting'). Returns 1 when entered, 0 when removed (nothing recorded).
local g = KEYS[1]
if redis.call('HEXISTS', g, 'deleted') == 1 then return 0 end
if ARGV[1] ~= '' and redis.call('HEXISTS', g, 'rm:' .. ARGV[1]) == 1 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('HSET', g, 'fly:' .. ARGV[2], ARGV[1] .. '|' .. ARGV[4] .. '|' .. string.format('%d', now + lease))
-- The hash outlives every lease in it (tombstones set a longer TTL; never shorten it).
local keep = lease + 60000
if redis.call('PTTL', g) < keep then redis.call('PEXPIRE', g, keep) end
return 1
