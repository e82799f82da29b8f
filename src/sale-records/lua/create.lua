-- create: the record of a sale tokengate made (or seeded from a gateway lookup), unless one exists already:
-- a seed must never clobber a record holding reservations. KEYS[1] record hash.
-- ARGV: customer, state, authorized, captured, refunded (cents), ttl ms, then the sale's gateway fields as
-- name, value pairs (src/sale-records/fields.ts; none for a record without them), with `writer` (the write that made
-- it) or `seeded` 1 (made by no write) among them. Returns 1 when written.
-- `ver` starts the record's write count (a refresh applies only over the version it read) and `seen` is when it
-- last matched the gateway's (ms, Redis TIME): now, since it was made from the gateway's own answer.
-- Over an existing record, a create naming a writer claims a seed (`seeded` 1, no writer): the writer is set and the
-- mark dropped in this one step, so of two writes claiming one seed exactly one gets it; what the seed lacks is added
-- (the customer if it had none, fields it has not or holds empty, as describe.lua's 'complete'), nothing it holds changes. Returns 2 when claimed, 3 when the
-- record already names this writer, 0 otherwise (another write's, a record kept before `writer` was, or a seed
-- asked to create again). Only an existing record pays for the search of the pairs.
if redis.call('EXISTS', KEYS[1]) == 1 then
  local writer
  for i = 7, #ARGV - 1, 2 do
    if ARGV[i] == 'writer' then writer = ARGV[i + 1] end
  end
  if not writer then return 0 end
  local kept = redis.call('HMGET', KEYS[1], 'writer', 'seeded', 'customer')
  if kept[1] == writer then return 3 end
  if kept[1] or kept[2] ~= '1' then return 0 end
  redis.call('HSET', KEYS[1], 'writer', writer)
  redis.call('HDEL', KEYS[1], 'seeded')
  if not kept[3] or kept[3] == '' then redis.call('HSET', KEYS[1], 'customer', ARGV[1]) end
  for i = 7, #ARGV - 1, 2 do
    local name = ARGV[i]
    if name ~= 'writer' and name ~= 'seen' and name ~= 'seeded' then
      local cur = redis.call('HGET', KEYS[1], name)
      if not cur or cur == '' then redis.call('HSET', KEYS[1], name, ARGV[i + 1]) end
    end
  end
  redis.call('HINCRBY', KEYS[1], 'ver', 1)
  return 2
end
local t = redis.call('TIME')
-- One HSET with the gateway fields (unpack of none adds nothing).
redis.call('HSET', KEYS[1], 'customer', ARGV[1], 'state', ARGV[2], 'authorized', ARGV[3], 'captured', ARGV[4],
  'refunded', ARGV[5], 'pending_refund', 0, 'ver', 1, 'seen', string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000)),
  unpack(ARGV, 7))
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
