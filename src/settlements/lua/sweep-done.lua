-- sweep-done: the sweep ended at ARGV[2] ms (kept unless a later one is), and its claim is given back.
-- KEYS[1] when the last sweep ended, KEYS[2] the claim. ARGV: owner, ended ms, ttl ms of the mark.
local last = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[2]) > last then redis.call('SET', KEYS[1], ARGV[2], 'PX', tonumber(ARGV[3])) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
