-- describe: the sale's gateway fields on an existing record only (HSET on a missing key would create a record
-- without an owner). KEYS[1] record hash. ARGV: 'fill' (only when the record has none yet: `refnum` marks
-- them) or 'update' (sets each field given), then name, value pairs. Returns 1 when written.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'fill' and redis.call('HEXISTS', KEYS[1], 'refnum') == 1 then return 0 end
if #ARGV < 3 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
