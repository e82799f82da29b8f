-- tombstone: a removal's first step (guarantee 10), atomic: the tombstone of a payment method (`rm:<pmkey>`),
-- or the customer's `deleted` (ARGV[1] ''; each method its view lists is tombstoned too, and the customer's
-- fields are kept as `cust`, so a removal finished after a crash still knows which tokens to evict and which
-- customerid to free), then the view without it, then the sale attempts still `sending`
-- on it (the removal waits for those; `waiting` ones re-check before they send). Expired attempts are pruned.
-- KEYS[1] guard hash, KEYS[2] view hash. ARGV: pmkey ('' = the customer), tombstone TTL ms, view TTL ms.
-- Returns the attempt ids still sending.
local g, v, pm = KEYS[1], KEYS[2], ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stamp = string.format('%d', now)
if pm == '' then
  redis.call('HSET', g, 'deleted', stamp)
  for _, name in ipairs(redis.call('HKEYS', v)) do
    if string.sub(name, 1, 3) == 'pm:' then redis.call('HSET', g, 'rm:' .. string.sub(name, 4), stamp) end
  end
  local cust = redis.call('HGET', v, 'cust')
  if cust then redis.call('HSET', g, 'cust', cust) end
  redis.call('DEL', v)
else
  redis.call('HSET', g, 'rm:' .. pm, stamp)
  redis.call('HDEL', v, 'pm:' .. pm)
  if redis.call('HGET', v, 'def') == pm then redis.call('HDEL', v, 'def') end
  -- Bumped even when the view holds nothing yet: a load that read the gateway before this step never applies.
  redis.call('HINCRBY', v, 'ver', 1)
  redis.call('PEXPIRE', v, tonumber(ARGV[3]))
end
local out = {}
local all = redis.call('HGETALL', g)
for i = 1, #all, 2 do
  local name, value = all[i], all[i + 1]
  if string.sub(name, 1, 4) == 'fly:' then
    local p, state, untilMs = string.match(value, '^([^|]*)|([^|]*)|(%d+)$')
    if not untilMs or tonumber(untilMs) <= now then
      redis.call('HDEL', g, name)
    elseif state == 'sending' and (pm == '' or p == pm) then
      out[#out + 1] = string.sub(name, 5)
    end
  end
end
local keep = tonumber(ARGV[2])
if redis.call('PTTL', g) < keep then redis.call('PEXPIRE', g, keep) end
return out
