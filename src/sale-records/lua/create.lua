-- create: the record of a sale tokengate made (or seeded from a gateway lookup), unless one exists already:
-- a seed must never clobber a record holding reservations. KEYS[1] record hash.
-- ARGV: customer, state, authorized, captured, refunded (cents), ttl ms, then the sale's gateway fields as
-- name, value pairs (src/sale-records/fields.ts; none for a record without them). Returns 1 when written.
-- `ver` starts the record's write count (a refresh applies only over the version it read) and `seen` is when it
-- last matched the gateway's (ms, Redis TIME): now, since it was made from the gateway's own answer.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local t = redis.call('TIME')
-- One HSET with the gateway fields (unpack of none adds nothing).
redis.call('HSET', KEYS[1], 'customer', ARGV[1], 'state', ARGV[2], 'authorized', ARGV[3], 'captured', ARGV[4],
  'refunded', ARGV[5], 'pending_refund', 0, 'ver', 1, 'seen', string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)),
  unpack(ARGV, 7))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
