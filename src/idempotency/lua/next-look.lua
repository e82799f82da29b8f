-- next-look: when the reconciler will look again, so that a retry's 409 outcome_unknown carries a
-- Retry-After that means something. KEYS[1] record. ARGV: ms since the epoch. Returns 1, or 0 if not unknown.
if redis.call('HGET', KEYS[1], 'state') ~= 'unknown' then return 0 end
redis.call('HSET', KEYS[1], 'next_look', ARGV[1])
return 1
