-- amend: changes lines of a kept settlement after it was kept (issue 39): a line with the same transaction is
-- replaced (a later change to it: a bank payment returned after its batch, issue 38), any other is appended (a
-- `missing` line the sweep found), and the counts by verdict are recounted.
-- KEYS[1] the settlement (hash: summary, lines). ARGV[1] the lines (JSON array).
-- Answers the lines that changed (JSON array; '[]' when the settlement is not kept or nothing changed).
local summaryJson = redis.call('HGET', KEYS[1], 'summary')
local linesJson = redis.call('HGET', KEYS[1], 'lines')
if not summaryJson or not linesJson then return '[]' end
local summary = cjson.decode(summaryJson)
local lines = cjson.decode(linesJson)
local at = {}
for i, line in ipairs(lines) do at[line.transaction] = i end
local function same(a, b)
  for k, v in pairs(a) do if b[k] ~= v then return false end end
  for k, v in pairs(b) do if a[k] ~= v then return false end end
  return true
end
local changed = {}
for _, line in ipairs(cjson.decode(ARGV[1])) do
  local i = at[line.transaction]
  if i == nil then
    lines[#lines + 1] = line
    at[line.transaction] = #lines
    changed[#changed + 1] = line
  elseif not same(lines[i], line) then
    lines[i] = line
    changed[#changed + 1] = line
  end
end
if #changed == 0 then return '[]' end
for verdict in pairs(summary.counts) do summary.counts[verdict] = 0 end
for _, line in ipairs(lines) do summary.counts[line.verdict] = (summary.counts[line.verdict] or 0) + 1 end
-- HSET keeps the hash's ttl.
redis.call('HSET', KEYS[1], 'summary', cjson.encode(summary), 'lines', cjson.encode(lines))
return cjson.encode(changed)
