-- amend: changes lines of a kept settlement after it was kept (issue 39): a line with the same transaction is
-- replaced (a later change to it: a bank payment returned after its batch, or its review ended), any other is
-- appended (a `missing` line the sweep found), and the counts by verdict are recounted.
-- KEYS[1] the settlement (hash: summary, lines), KEYS[2] the open bank lines (sorted set, as save.lua's).
-- ARGV[1] the lines (JSON array); ARGV[2] for each line, [its member in KEYS[2], end of review ms or -1 when the
-- line is not open] (JSON array, same order). ARGV[3] ttl ms of KEYS[2].
-- Answers the lines that changed (JSON array; '[]' when the settlement is not kept or nothing changed).
local summaryJson = redis.call('HGET', KEYS[1], 'summary')
local linesJson = redis.call('HGET', KEYS[1], 'lines')
if not summaryJson or not linesJson then return '[]' end
local summary = cjson.decode(summaryJson)
local lines = cjson.decode(linesJson)
local open = cjson.decode(ARGV[2])
local at = {}
for i, line in ipairs(lines) do at[line.transaction] = i end
local function same(a, b)
  for k, v in pairs(a) do if b[k] ~= v then return false end end
  for k, v in pairs(b) do if a[k] ~= v then return false end end
  return true
end
local changed = {}
for n, line in ipairs(cjson.decode(ARGV[1])) do
  local i = at[line.transaction]
  local moved = false
  if i == nil then
    lines[#lines + 1] = line
    at[line.transaction] = #lines
    moved = true
  elseif not same(lines[i], line) then
    lines[i] = line
    moved = true
  end
  if moved then
    changed[#changed + 1] = line
    local o = open[n]
    if o and tonumber(o[2]) >= 0 then
      redis.call('ZADD', KEYS[2], tonumber(o[2]), o[1])
      redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
    elseif o then
      redis.call('ZREM', KEYS[2], o[1])
    end
  end
end
if #changed == 0 then return '[]' end
for verdict in pairs(summary.counts) do summary.counts[verdict] = 0 end
for _, line in ipairs(lines) do summary.counts[line.verdict] = (summary.counts[line.verdict] or 0) + 1 end
-- HSET keeps the hash's ttl.
redis.call('HSET', KEYS[1], 'summary', cjson.encode(summary), 'lines', cjson.encode(lines))
return cjson.encode(changed)
