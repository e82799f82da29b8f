-- tokengate upstream budget (issue 4). One atomic script, keys hash-tagged per endpoint key:
--   KEYS[1] meta hash (epoch, created, block, lastAny, lastSale, lastCapture, lastRefund, lastRead, seq,
--           promised:<class>, probeWait, probe, probeUntil)
--   KEYS[2] zset of start times in the minute span, KEYS[3] the same for the day span (phantoms differ),
--   KEYS[4] / KEYS[5] the day span's read / background entries (day pacing, issue 25), KEYS[6] the asking
--   caller's reads and background entries over the day span (per-caller share, issue 30; unused without one).
-- Times are integer microseconds from Redis TIME, never a pod's clock. Every cap+1 starts are at least
-- span = window + margin apart, i.e. at most cap starts in ANY span (gateway-facts.md, Rate limits).
-- window-math.ts and memory-backend.ts hold the same rule in TypeScript; keep them in step.
if redis.replicate_commands then pcall(redis.replicate_commands) end

local meta, minKey, dayKey, dayReadKey, dayBackgroundKey, callerKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local op = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- Lua numbers reach Redis as %.14g strings: format integers explicitly (microsecond epochs have 16 digits).
local function s(x) return string.format('%.0f', x) end
local function num(x, default) if x then return tonumber(x) end return default end

-- Keys expire once idle, but never before their latest entry stops mattering: a sale placed before queued
-- reads (or a phantom at "now") must not shorten the life of the reads' later reservations.
local function addEntry(key, at, member, ttlUs)
  redis.call('ZADD', key, s(at), member)
  local ttl = math.ceil(ttlUs / 1000)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, s(ttl)) end
end

local function nextMember(prefix)
  return prefix .. redis.call('HINCRBY', meta, 'seq', 1)
end

-- Earliest r >= start with at most cap entries in every span containing r (see window-math.ts).
-- O(log n) unless the slot goes between queued entries (a sale before queued reads): then the scan is over
-- the last span and the queue, at most cap × (max wait / span + 2) entries.
local function earliest(key, start, cap, span)
  if redis.call('ZCARD', key) < cap then return start end
  local last = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
  if start >= last then
    return math.max(start, tonumber(redis.call('ZRANGE', key, -cap, -cap, 'WITHSCORES')[2]) + span)
  end
  local raw = redis.call('ZRANGEBYSCORE', key, '(' .. s(start - span), '+inf', 'WITHSCORES')
  local e = {}
  for i = 2, #raw, 2 do e[#e + 1] = tonumber(raw[i]) end
  local r = start
  for j = 1, #e - cap + 1 do
    local first, last = e[j], e[j + cap - 1]
    if r + span <= last then break end
    if last < first + span and r < first + span then r = first + span end
  end
  return r
end

-- Day pacing (issue 25): `share` of what everything else leaves of the day. Returns the earliest start at
-- which one more entry of `own` keeps own <= share x (perDay - others), others as counted now, and whether
-- that is only an estimate (others alone fill the share's room: refuse, come back when the day frees).
local function paced(own, perDay, share, daySpan)
  local mine = redis.call('ZCARD', own)
  local allowed = math.floor(share * (perDay - (redis.call('ZCARD', dayKey) - mine)))
  if mine < allowed then return 0, false end
  if allowed >= 1 then
    return tonumber(redis.call('ZRANGE', own, mine - allowed, mine - allowed, 'WITHSCORES')[2]) + daySpan, false
  end
  local oldest = redis.call('ZRANGE', dayKey, 0, 0, 'WITHSCORES')[2]
  return (oldest and tonumber(oldest) or now) + daySpan, true
end

if op == 'reserve' then
  -- ARGV: op, class, perWindow, perDay, reserved, spanMs, daySpanMs, maxWaitMs, knownEpoch, newEpoch,
  --       dayShare, promise (1: a refusal is told to a caller), caller id ('' for none), callerCap, callerDayCap,
  --       pollMs (how soon a caller asks again while a probe is out)
  local cls = ARGV[2]
  local perWindow, perDay, reserved = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
  local span, daySpan, maxWait = tonumber(ARGV[6]) * 1000, tonumber(ARGV[7]) * 1000, tonumber(ARGV[8]) * 1000
  local known = ARGV[9]
  local share, promise, caller = tonumber(ARGV[11]), ARGV[12] == '1', ARGV[13]
  local m = redis.call('HMGET', meta, 'epoch', 'created', 'block', 'lastAny', 'lastSale', 'lastCapture', 'lastRefund', 'lastRead', 'probeWait', 'probe', 'probeUntil')
  local epoch, block = m[1], num(m[3], 0)
  local emptied = 0
  if not epoch then
    -- No epoch: a fresh Redis, or one that lost our state. A replica that saw state before knows it was
    -- lost, and the gateway may still count calls we forgot: trust nothing for one full span.
    epoch = ARGV[10]
    redis.call('HSET', meta, 'epoch', epoch, 'created', s(now))
    if known ~= '' then
      emptied = 1
      block = math.max(block, now + span)
      redis.call('HSET', meta, 'block', s(block))
    end
  elseif known ~= '' and known ~= epoch then
    -- State was recreated since this replica last looked: counts are only complete from `created` on.
    emptied = 1
    block = math.max(block, num(m[2], now) + span)
    redis.call('HSET', meta, 'block', s(block))
  end
  -- Unsure (issue 40): a 429 we did not predict. One call at a time probes the gateway (the probe); while it is
  -- out, everyone else is told to ask again soon, not refused: its answer decides whether the key is open.
  local unsure = num(m[9], 0) > 0
  if unsure and m[10] and num(m[11], 0) > now then
    local poll = tonumber(ARGV[16]) * 1000
    return {0, s(poll), epoch, emptied, s(now + poll), '', 'probing'}
  end
  redis.call('ZREMRANGEBYSCORE', minKey, '-inf', s(now - span))
  redis.call('ZREMRANGEBYSCORE', dayKey, '-inf', s(now - daySpan))
  -- Classes by priority (limiter README, "Classes"): sale, capture (and voids), refund, read, background.
  -- `reserved` is the class's own (slots it must leave to the classes above). First-come within a class and
  -- behind the classes above it; background queues behind everything (lastAny). A class may take the slots
  -- lower classes must leave.
  local queue = {sale = {5}, capture = {5, 6}, refund = {5, 6, 7}, read = {5, 6, 7, 8}, background = {4}}
  local own = {sale = 'lastSale', capture = 'lastCapture', refund = 'lastRefund', read = 'lastRead'}
  local dayOwn = {read = dayReadKey, background = dayBackgroundKey}
  if not queue[cls] then return redis.error_reply('tokengate limiter: unknown class ' .. tostring(cls)) end
  local start = math.max(now, block)
  for _, i in ipairs(queue[cls]) do start = math.max(start, num(m[i], 0)) end
  local dayCap = perDay - reserved
  if redis.call('ZCARD', dayKey) >= dayCap then
    -- Near the day limit: place at the tail, where only the span ending here matters (cheap at 5000/day).
    local kth = redis.call('ZRANGE', dayKey, -dayCap, -dayCap, 'WITHSCORES')
    local last = redis.call('ZRANGE', dayKey, -1, -1, 'WITHSCORES')
    start = math.max(start, tonumber(last[2]), tonumber(kth[2]) + daySpan)
  end
  local hold = false
  if dayOwn[cls] then
    -- Only the paced class's own day entries are counted here (the rest read them with a lower bound, 'usage'):
    -- a sale does not trim sets it never reads.
    redis.call('ZREMRANGEBYSCORE', dayOwn[cls], '-inf', s(now - daySpan))
    local from
    from, hold = paced(dayOwn[cls], perDay, share, daySpan)
    start = math.max(start, from)
  end
  local r = earliest(minKey, start, perWindow - reserved, span)
  if caller ~= '' then
    -- Per-caller share (guarantee 11): over it, refused at once for this caller alone, told when its own
    -- share frees; nothing is reserved and no other caller's promise moves.
    local callerCap, callerDayCap = tonumber(ARGV[14]), tonumber(ARGV[15])
    redis.call('ZREMRANGEBYSCORE', callerKey, '-inf', s(now - daySpan))
    local free = earliest(callerKey, r, callerCap, span)
    local n = redis.call('ZCARD', callerKey)
    if n >= callerDayCap then
      free = math.max(free, tonumber(redis.call('ZRANGE', callerKey, n - callerDayCap, n - callerDayCap, 'WITHSCORES')[2]) + daySpan)
    end
    if free > r then return {0, s(free - now), epoch, emptied, s(free), '', 'caller_share'} end
  end
  local delay = r - now
  if hold or delay > maxWait then
    -- Refused at once, told when it could start: after the class's last promised start, one slot apart
    -- (span / the class's cap), so a refused burst does not come back all in the same second (issue 25).
    if promise then
      local field = 'promised:' .. cls
      r = math.max(r, num(redis.call('HGET', meta, field), 0) + span / (perWindow - reserved))
      redis.call('HSET', meta, field, s(r))
    end
    return {0, s(r - now), epoch, emptied, s(r), '', 'max_wait'}
  end
  local member = nextMember('r')
  addEntry(minKey, r, member, delay + span)
  addEntry(dayKey, r, member, delay + daySpan)
  if dayOwn[cls] then addEntry(dayOwn[cls], r, member, delay + daySpan) end
  if caller ~= '' then addEntry(callerKey, r, member, delay + daySpan) end
  redis.call('HSET', meta, 'lastAny', s(math.max(num(m[4], 0), r)))
  if own[cls] then
    local i = queue[cls][#queue[cls]]
    redis.call('HSET', meta, own[cls], s(math.max(num(m[i], 0), r)))
  end
  if unsure then
    -- This call is the probe: the only one out until its answer settles it, or a span after its slot (its
    -- replica died with it).
    redis.call('HSET', meta, 'probe', member, 'probeUntil', s(r + span))
    return {1, s(delay), epoch, emptied, s(r), member, '', 1}
  end
  return {1, s(delay), epoch, emptied, s(r), member}

elseif op == 'release' then
  -- ARGV: op, member. A reserved slot whose call never started (reserveAhead, not taken): its entry leaves
  -- every log. lastAny / lastSale keep their value: an ahead slot is only ever placed at "now" (no wait), so
  -- they never pass the time a later caller asks at, and order no one.
  for _, k in ipairs({minKey, dayKey, dayReadKey, dayBackgroundKey, callerKey}) do redis.call('ZREM', k, ARGV[2]) end
  -- A probe that never started: the next caller probes.
  if redis.call('HGET', meta, 'probe') == ARGV[2] then redis.call('HDEL', meta, 'probe', 'probeUntil') end
  return 1

elseif op == 'confirm' then
  -- ARGV: op, member. After sleeping: has a block (429/155, emptied state) arrived since the slot was reserved,
  -- or is the key unsure and this slot not its probe? And Redis' now, so the caller measures its lateness on
  -- the clock that placed the slot.
  local c = redis.call('HMGET', meta, 'block', 'probeWait', 'probe')
  if num(c[1], 0) > now or (num(c[2], 0) > 0 and c[3] ~= ARGV[2]) then return {1, s(now)} end
  return {0, s(now)}

elseif op == 'reconcile' then
  -- ARGV: op, minuteUsed, dayUsed, windowMs, dayWindowMs, spanMs, daySpanMs, perWindow, perDay
  -- The gateway saw more than we counted (another client on the key and IP): add phantoms at "now",
  -- never subtract. "now" is later than their true time, so spans holding future slots stay honest.
  local minuteUsed, dayUsed = tonumber(ARGV[2]), tonumber(ARGV[3])
  local w, dw = tonumber(ARGV[4]) * 1000, tonumber(ARGV[5]) * 1000
  local span, daySpan = tonumber(ARGV[6]) * 1000, tonumber(ARGV[7]) * 1000
  local minuteExtra = math.min(tonumber(ARGV[8]), minuteUsed - redis.call('ZCOUNT', minKey, '(' .. s(now - w), s(now)))
  for _ = 1, minuteExtra do
    local member = nextMember('p')
    addEntry(minKey, now, member, span)
    addEntry(dayKey, now, member, daySpan)
  end
  local dayExtra = math.min(tonumber(ARGV[9]), dayUsed - redis.call('ZCOUNT', dayKey, '(' .. s(now - dw), s(now)))
  for _ = 1, dayExtra do addEntry(dayKey, now, nextMember('p'), daySpan) end
  return math.max(0, minuteExtra) + math.max(0, dayExtra)

elseif op == 'add' then
  -- ARGV: op, minuteCount, dayCount, spanMs, daySpanMs: starts made outside Redis (fallback) while it was away.
  local minuteCount, dayCount = tonumber(ARGV[2]), tonumber(ARGV[3])
  local span, daySpan = tonumber(ARGV[4]) * 1000, tonumber(ARGV[5]) * 1000
  for i = 1, math.max(minuteCount, dayCount) do
    local member = nextMember('f')
    if i <= minuteCount then addEntry(minKey, now, member, span) end
    addEntry(dayKey, now, member, daySpan)
  end
  return dayCount

elseif op == 'usage' then
  -- ARGV: op, daySpanMs. Read-only, at scrape time: the day window's entries (future reservations included),
  -- its reads and its background calls (the rest: money classes, phantoms, fallback starts).
  local from = '(' .. s(now - tonumber(ARGV[2]) * 1000)
  return {redis.call('ZCOUNT', dayKey, from, '+inf'), redis.call('ZCOUNT', dayReadKey, from, '+inf'), redis.call('ZCOUNT', dayBackgroundKey, from, '+inf')}

elseif op == 'block' then
  -- ARGV: op, member (the call the gateway refused), probeBaseMs, probeMaxMs, unprocessed (1: errorcode 155).
  -- A 429 we did not predict: the key is unsure (issue 40). The first probe goes after probeBase; each probe
  -- refused doubles the wait, up to probeMax. A 429 of a call that started before the key was unsure (not the
  -- probe) moves nothing but the block. A call refused with 155 was not processed (gateway-facts.md): its entry
  -- leaves the logs, or ten refused probes would fill a window of ten on their own; were the gateway to count
  -- refused calls after all, its X-Rate-Limit on the next answer adds them back as phantoms.
  if ARGV[5] == '1' then
    for _, k in ipairs({minKey, dayKey, dayReadKey, dayBackgroundKey, callerKey}) do redis.call('ZREM', k, ARGV[2]) end
  end
  local c = redis.call('HMGET', meta, 'block', 'probeWait', 'probe')
  local wait = num(c[2], 0)
  if wait == 0 then
    wait = tonumber(ARGV[3]) * 1000
  elseif c[3] == ARGV[2] then
    wait = math.min(wait * 2, tonumber(ARGV[4]) * 1000)
    redis.call('HDEL', meta, 'probe', 'probeUntil')
  end
  local block = math.max(num(c[1], 0), now + wait)
  redis.call('HSET', meta, 'block', s(block), 'probeWait', s(wait))
  return s(block - now)

elseif op == 'settle' then
  -- ARGV: op, member, answered (1: the gateway answered other than 429, so it takes calls again: full pace;
  -- 0: no answer, which proves nothing: the next caller probes).
  if redis.call('HGET', meta, 'probe') ~= ARGV[2] then return 0 end
  if ARGV[3] == '1' then redis.call('HDEL', meta, 'probe', 'probeUntil', 'probeWait') else redis.call('HDEL', meta, 'probe', 'probeUntil') end
  return 1
end
return redis.error_reply('tokengate limiter: unknown op ' .. tostring(op))
