-- ach: a bank payment's ACH status moved forward in one step (webhooks/ach-events.ts; issue 38, guarantee 14).
-- Two `ach.*` events for one sale may be applied at once (a clock jump sends submitted, settled and returned
-- together; the intake serves requests concurrently): a read-then-write could let settled overwrite returned.
-- Order: P/M < B (submitted) < S (settled) < R, E, V (returned, failed, voided: the first of these ends it).
-- KEYS[1] record hash. ARGV: the status the event tells, then (R) the return code and date, '' when unknown.
-- Returns {before, after}: {'', ''} when there is no bank payment's record; after == before when nothing moved.
local RANK = { P = 0, M = 0, B = 1, S = 2, R = 3, E = 3, V = 3 }
local want = ARGV[1]
if RANK[want] == nil or redis.call('HEXISTS', KEYS[1], 'bank_sec') == 0 then return { '', '' } end
local cur = redis.call('HGET', KEYS[1], 'ach_status')
if not cur or RANK[cur] == nil then cur = 'P' end
if RANK[want] <= RANK[cur] then return { cur, cur } end
redis.call('HSET', KEYS[1], 'ach_status', want)
if want == 'R' then
  if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'return_code', ARGV[2]) end
  if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'returned_at', ARGV[3]) end
  -- A return takes back the debit: the sale's captured amount (a bank sale is captured whole when made).
  local c = math.max(0, tonumber(redis.call('HGET', KEYS[1], 'captured') or '0') or 0)
  redis.call('HSET', KEYS[1], 'amount_returned', string.format('%d.%02d', math.floor(c / 100), c % 100))
elseif want == 'V' then
  redis.call('HSET', KEYS[1], 'state', 'voided')
  redis.call('HINCRBY', KEYS[1], 'ver', 1)
end
return { cur, want }
