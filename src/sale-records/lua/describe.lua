-- describe: the sale's gateway fields on an existing record only (HSET on a missing key would create a record
-- without an owner). KEYS[1] record hash. ARGV: 'fill' (only when the record has none yet: `refnum` marks
-- them), 'update' (sets each field given) or 'complete' (sets only the fields the record lacks or holds empty: what a gateway
-- read adds to a record made from a webhook's subset), then name, value pairs. Returns 1 when written.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'fill' and redis.call('HEXISTS', KEYS[1], 'refnum') == 1 then return 0 end
if #ARGV < 3 then return 0 end
if ARGV[1] == 'complete' then
  for i = 2, #ARGV - 1, 2 do
    local cur = redis.call('HGET', KEYS[1], ARGV[i])
    if not cur or cur == '' then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
  end
  return 1
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
