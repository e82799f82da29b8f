-- enter: a sale attempt enters a customer's removal guard (guarantee 10), or is refused because its payment
-- method (or the customer) was removed. Run in the same tick as the sale's idempotency claim (no round trip of
-- its own), and again right before sending when the sale could not send at once (recheck).
-- KEYS[1] guard hash. ARGV: pmkey ('' = a card not stored yet: only the customer is checked), attempt id,
-- lease ms, state ('sending' or 'waiting'). Returns 1 when entered, 0 when removed (nothing recorded).
local g = KEYS[1]
-- One HMGET for both tombstones (a card not stored yet asks for the customer's alone).
local gone = redis.call('HMGET', g, 'deleted', ARGV[1] ~= '' and 'rm:' .. ARGV[1] or 'deleted')
if gone[1] or gone[2] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
local keep = lease + 60000
redis.call('HSET', g, 'fly:' .. ARGV[2], ARGV[1] .. '|' .. ARGV[4] .. '|' .. string.format('%d', now + lease))
-- The hash outlives every lease in it (tombstones set a longer TTL; never shorten it): a TTL when it has none
-- (NX), else only a longer one (GT), as `if PTTL < keep then PEXPIRE` did; NX first, since the usual hash is one
-- HSET just made (a customer with no other sale in flight): one command there, where that always took two.
-- (PEXPIRE's NX and GT are Redis 7.0's.)
if redis.call('PEXPIRE', g, keep, 'NX') == 0 then redis.call('PEXPIRE', g, keep, 'GT') end
return 1
