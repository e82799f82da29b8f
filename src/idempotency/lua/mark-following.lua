-- mark-following: the key's answer is kept and what its write records beside it (the use case's records, its
-- payment events) is not yet: the reconciler re-applies them (src/reconcile/reconciler.ts) and then clears the
-- mark (HDEL follow). Only a completed record is marked (never creates one). KEYS[1] record.
-- Returns 1 when marked, 0 when the record is not completed.
if redis.call('HGET', KEYS[1], 'state') ~= 'completed' then return 0 end
redis.call('HSET', KEYS[1], 'follow', '1')
return 1
