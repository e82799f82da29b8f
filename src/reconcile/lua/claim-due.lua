-- claim-due: hands out up to ARGV[1] pending writes whose look is due, and pushes each one's score forward
-- by ARGV[2] ms. The pushed score is the claim: while it runs no other replica gets the entry, and if this
-- replica dies the entry falls due again and another replica picks it up (issue 12: one replica at a time
-- per key, a dead replica's keys taken over). Time is Redis TIME so replicas with skewed clocks agree.
-- KEYS[1] the due set. Returns a flat list: member, score (ms, as it was before the claim), ...
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
local until_ms = string.format('%d', now + tonumber(ARGV[2]))
for i = 1, #due, 2 do
  redis.call('ZADD', KEYS[1], 'XX', until_ms, due[i])
end
return due
