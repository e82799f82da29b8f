-- claim: one replica reads a closed batch's transactions (issue 39: one read per batch).
-- KEYS[1] the settlement (hash), KEYS[2] the batch's claim. ARGV: owner, ttl ms.
-- Answers 'kept' when the settlement is kept already, 'busy' when another owner holds the claim, else 'claimed'.
if redis.call('EXISTS', KEYS[1]) == 1 then return 'kept' end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', tonumber(ARGV[2])) then return 'claimed' end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]))
  return 'claimed'
end
return 'busy'
