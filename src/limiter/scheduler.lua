-- tokengate upstream budget (issue 4). One atomic script, keys hash-tagged per endpoint key:
--   KEYS[1] meta hash (epoch, created, block, lastAny, lastSale, lastCapture, lastRefund, lastRead, lastRenewal, seq,
--           promised:<class>, probeWait, probe, probeUntil, syncAt, fullAt, fullStage)
--   KEYS[2] zset of start times in the minute span, KEYS[3] the day span's counts per bucket (a hash, below),
--   KEYS[4] / KEYS[5] the day span's read / background calls (day pacing, issue 25), counts per bucket like KEYS[3];
--   KEYS[6] the asking caller's reads and background entries over the minute span (a sorted set) and KEYS[7] its
--   day span's counts per bucket (per-caller share, issue 30; both unused without one).
-- Times are integer microseconds from Redis TIME, never a pod's clock. Every cap+1 starts are at least
-- span = window + margin apart, i.e. at most cap starts in ANY span (gateway-facts.md, Rate limits).
-- window-math.ts and memory-backend.ts hold the same rule in TypeScript; keep them in step.
if redis.replicate_commands then pcall(redis.replicate_commands) end

local meta, minKey, dayKey, dayReadKey, dayBackgroundKey, callerKey, callerDayKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local op = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

-- Lua numbers reach Redis as %.14g strings: format integers explicitly (microsecond epochs have 16 digits).
-- '%d' for an integer (all but a refusal's promised start, which can fall between microseconds): Redis's Lua
-- formats it as a C long, where '%.0f' took glibc's exact floating-point path (~3 % of Redis's CPU in the
-- sale's scripts, perf); the same digits. Anything else (fractions, beyond 2^53) still goes through '%.0f'.
local function s(x)
  if x % 1 == 0 and x > -9007199254740992 and x < 9007199254740992 then return string.format('%d', x) end
  return string.format('%.0f', x)
end
local function num(x, default) if x then return tonumber(x) end return default end

-- Whether a key of this script existed when the script last looked (true / false; nil: not looked at). Every
-- key below is given its TTL by the script that makes it, and no command here removes one, so one that existed
-- has a TTL; and only this script writes them while it runs.
local exists = {}

-- At least `ttl` ms left, never fewer than it has (what `if PTTL < ttl then PEXPIRE` did, in one command where
-- that took two): a key this script just made has no TTL (plain PEXPIRE); one that existed has one, lengthened
-- only (GT: at saturation several slots share a millisecond, and an equal TTL stays); one not looked at, GT and
-- then NX (GT leaves a key with no TTL alone). PEXPIRE's GT and NX are Redis 7.0's.
local function keepAtLeast(key, ttl, existed)
  if existed == false then
    redis.call('PEXPIRE', key, s(ttl))
  elseif redis.call('PEXPIRE', key, s(ttl), 'GT') == 0 and existed == nil then
    redis.call('PEXPIRE', key, s(ttl), 'NX')
  end
  exists[key] = true
end

-- Keys expire once idle, but never before their latest entry stops mattering: a sale placed before queued
-- reads (or a phantom at "now") must not shorten the life of the reads' later reservations.
local function addEntry(key, at, member, ttlUs)
  local existed = exists[key]
  redis.call('ZADD', key, s(at), member)
  keepAtLeast(key, math.ceil(ttlUs / 1000), existed)
end

-- The day logs (issue 40): counts per bucket of daySpan / 1440 (60 s in production), so 2,000,000 calls a day
-- keep about 1,441 hash fields, not a sorted-set entry each (hundreds of megabytes). The same shape for the whole
-- day (KEYS[3]), the reads' and background's (KEYS[4], KEYS[5]) and a caller's (KEYS[7]); `key` names which. Fields: <bucket> = count,
-- n = the total, lo / hi = the lowest and highest bucket held. An entry counts as anywhere in its bucket: it
-- leaves the day window only once its bucket's END has, and the day's rule counts whole buckets: conservative,
-- never over (at most one bucket, 1/1440 of the day, stricter than the exact log).
local BUCKETS = 1440
local function dayWidth(daySpan) return math.max(1, math.ceil(daySpan / BUCKETS)) end
local fmt = s

-- The buckets lo..hi with their counts (at most a day span and the queue ahead: about BUCKETS + 2).
local function dayBuckets(key, from, to)
  local fields = {}
  for b = from, to do fields[#fields + 1] = fmt(b) end
  if #fields == 0 then return fields, {} end
  return fields, redis.call('HMGET', key, unpack(fields))
end

-- Drops the buckets wholly out of the day window and returns the entries left (write = false: count only).
-- lo / hi of a day key as this script last read or wrote them ({false, false}: no key), so that dayAdd after
-- dayLive does not read them again. Only this script writes these keys while it runs (scripts are atomic).
local dayBounds = {}

local function dayLive(key, daySpan, write)
  local d = redis.call('HMGET', key, 'n', 'lo', 'hi')
  local n, lo, hi = num(d[1], 0), num(d[2], nil), num(d[3], nil)
  if write then dayBounds[key] = {lo or false, hi or false} end
  if not lo then return 0 end
  local w = dayWidth(daySpan)
  local firstLive = math.floor((now - daySpan) / w)
  if lo >= firstLive then return n end
  local fields, counts = dayBuckets(key, lo, math.min(hi, firstLive - 1))
  for _, c in ipairs(counts) do n = n - num(c, 0) end
  if write then
    if firstLive > hi then
      redis.call('DEL', key)
      dayBounds[key] = {false, false}
    else
      if #fields > 0 then redis.call('HDEL', key, unpack(fields)) end
      redis.call('HSET', key, 'n', fmt(n), 'lo', fmt(firstLive))
      dayBounds[key] = {firstLive, hi}
    end
  end
  return n
end

-- Adds `count` entries (negative: takes back released ones) at `at`; the key lives as long as its latest bucket.
local function dayAdd(key, at, count, daySpan, ttlUs)
  local w = dayWidth(daySpan)
  local b = math.floor(at / w)
  local known = dayBounds[key]
  local lo, hi
  if known then
    lo, hi = known[1] or nil, known[2] or nil
  else
    local d = redis.call('HMGET', key, 'lo', 'hi')
    lo, hi = num(d[1], nil), num(d[2], nil)
  end
  -- A release in a bucket already dropped: nothing to take back.
  if count < 0 and (not lo or b < lo) then return end
  redis.call('HINCRBY', key, fmt(b), count)
  redis.call('HINCRBY', key, 'n', count)
  local existed = lo ~= nil or hi ~= nil
  if not lo or b < lo then redis.call('HSET', key, 'lo', fmt(b)); lo = b end
  if not hi or b > hi then redis.call('HSET', key, 'hi', fmt(b)); hi = b end
  dayBounds[key] = {lo, hi}
  -- lo and hi are written with a key's first count: without them, HINCRBY just made it.
  keepAtLeast(key, math.ceil((ttlUs + w) / 1000), existed)
end

-- The earliest start the day allows once it holds `cap` or more: after the oldest buckets whose leaving brings
-- what remains to cap - 1 have wholly left (the cap-th latest entry + daySpan, counted by buckets). Walked from
-- the oldest in chunks: near the cap only a few of them must leave, so the walk stops early.
local CHUNK = 32
local function dayTail(key, n, cap, daySpan)
  local d = redis.call('HMGET', key, 'lo', 'hi')
  local lo, hi = tonumber(d[1]), tonumber(d[2])
  local w = dayWidth(daySpan)
  for from = lo, hi, CHUNK do
    local _, counts = dayBuckets(key, from, math.min(hi, from + CHUNK - 1))
    for i, c in ipairs(counts) do
      n = n - num(c, 0)
      if n <= cap - 1 then return (from + i) * w + daySpan end
    end
  end
  return now
end

-- When the day's oldest bucket has wholly left the window.
local function dayOldestLeaves(key, daySpan)
  local lo = redis.call('HGET', key, 'lo')
  if not lo then return now end
  return (tonumber(lo) + 1) * dayWidth(daySpan) + daySpan
end

local function nextMember(prefix)
  return prefix .. redis.call('HINCRBY', meta, 'seq', 1)
end

-- Earliest r >= start with at most cap entries in every span containing r (see window-math.ts).
-- O(log n) unless the slot goes between queued entries (a sale before queued reads): then the scan is over
-- the last span and the queue, at most cap × (max wait / span + 2) entries.
local function earliest(key, start, cap, span)
  local n = redis.call('ZCARD', key)
  exists[key] = n > 0
  if n < cap then return start end
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
-- that is only an estimate (others alone fill the share's room: refuse, come back when the day frees). `own`
-- is counts per bucket: its oldest leave by whole buckets (conservative by at most one, never over).
local function paced(own, perDay, share, daySpan, dayN)
  local mine = dayLive(own, daySpan, true)
  local allowed = math.floor(share * (perDay - (dayN - mine)))
  if mine < allowed then return 0, false end
  if allowed >= 1 then return dayTail(own, mine, allowed, daySpan), false end
  return dayOldestLeaves(dayKey, daySpan), true
end

-- A slot whose call never reached the gateway leaves every log; its day buckets (the day's, its class's, its
-- caller's) only while the minute log still held it (so they are taken back once, whoever asks twice; an older
-- one stays counted: only stricter).
local function forget(member, slot, daySpan, cls)
  if redis.call('ZREM', minKey, member) ~= 1 then return end
  exists[minKey], exists[callerKey] = nil, nil -- a ZREM may have taken a set's last entry, and the set with it
  dayAdd(dayKey, slot, -1, daySpan, 0)
  if cls == 'read' then dayAdd(dayReadKey, slot, -1, daySpan, 0) elseif cls == 'background' then dayAdd(dayBackgroundKey, slot, -1, daySpan, 0) end
  if redis.call('ZREM', callerKey, member) == 1 then dayAdd(callerDayKey, slot, -1, daySpan, 0) end
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
  local m = redis.call('HMGET', meta, 'epoch', 'created', 'block', 'lastAny', 'lastSale', 'lastCapture', 'lastRefund', 'lastRead', 'lastRenewal', 'probeWait', 'probe', 'probeUntil')
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
  local unsure = num(m[10], 0) > 0
  if unsure and m[11] and num(m[12], 0) > now then
    local poll = tonumber(ARGV[16]) * 1000
    return {0, s(poll), epoch, emptied, s(now + poll), '', 'probing'}
  end
  redis.call('ZREMRANGEBYSCORE', minKey, '-inf', s(now - span))
  local dayN = dayLive(dayKey, daySpan, true)
  -- Classes by priority (limiter README, "Classes"): sale, capture (and voids), refund, read, background.
  -- `reserved` is the class's own (slots it must leave to the classes above). First-come within a class and
  -- behind the classes above it; background queues behind everything (lastAny). A class may take the slots
  -- lower classes must leave.
  -- renewal (issue 37) sits between refund and read: behind the money classes, ahead of reads.
  local queue = {sale = {5}, capture = {5, 6}, refund = {5, 6, 7}, renewal = {5, 6, 7, 9}, read = {5, 6, 7, 9, 8}, background = {4}}
  local own = {sale = 'lastSale', capture = 'lastCapture', refund = 'lastRefund', renewal = 'lastRenewal', read = 'lastRead'}
  local dayOwn = {read = dayReadKey, background = dayBackgroundKey}
  if not queue[cls] then return redis.error_reply('tokengate limiter: unknown class ' .. tostring(cls)) end
  local start = math.max(now, block)
  for _, i in ipairs(queue[cls]) do start = math.max(start, num(m[i], 0)) end
  local dayCap = perDay - reserved
  if dayN >= dayCap then
    -- Near the day limit: place at the tail (after every entry: lastAny, or "now" for phantoms and fallback
    -- starts), where only the span ending here matters; the walk over the buckets is paid only here.
    start = math.max(start, num(m[4], 0), dayTail(dayKey, dayN, dayCap, daySpan))
  end
  local hold = false
  if dayOwn[cls] then
    -- Only the paced class's own day counts are read here (the rest read them with a lower bound, 'usage'):
    -- a sale does not trim logs it never reads.
    local from
    from, hold = paced(dayOwn[cls], perDay, share, daySpan, dayN)
    start = math.max(start, from)
  end
  local r = earliest(minKey, start, perWindow - reserved, span)
  if caller ~= '' then
    -- Per-caller share (guarantee 11): over it, refused at once for this caller alone, told when its own
    -- share frees; nothing is reserved and no other caller's promise moves.
    local callerCap, callerDayCap = tonumber(ARGV[14]), tonumber(ARGV[15])
    -- Its minute span's entries (a sorted set: the per-window share needs their times), its day's counts.
    redis.call('ZREMRANGEBYSCORE', callerKey, '-inf', s(now - span))
    local free = earliest(callerKey, r, callerCap, span)
    local n = dayLive(callerDayKey, daySpan, true)
    if n >= callerDayCap then free = math.max(free, dayTail(callerDayKey, n, callerDayCap, daySpan)) end
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
  dayAdd(dayKey, r, 1, daySpan, delay + daySpan)
  if dayOwn[cls] then dayAdd(dayOwn[cls], r, 1, daySpan, delay + daySpan) end
  if caller ~= '' then
    addEntry(callerKey, r, member, delay + span)
    dayAdd(callerDayKey, r, 1, daySpan, delay + daySpan)
  end
  -- One HSET: lastAny, the class's own last start and, when unsure, the probe.
  local set = {'lastAny', s(math.max(num(m[4], 0), r))}
  if own[cls] then
    local i = queue[cls][#queue[cls]]
    set[#set + 1] = own[cls]
    set[#set + 1] = s(math.max(num(m[i], 0), r))
  end
  if unsure then
    -- This call is the probe: the only one out until its answer settles it, or a span after its slot (its
    -- replica died with it).
    set[#set + 1] = 'probe'
    set[#set + 1] = member
    set[#set + 1] = 'probeUntil'
    set[#set + 1] = s(r + span)
  end
  redis.call('HSET', meta, unpack(set))
  if unsure then return {1, s(delay), epoch, emptied, s(r), member, '', 1} end
  return {1, s(delay), epoch, emptied, s(r), member}

elseif op == 'release' then
  -- ARGV: op, member, slot (µs), daySpanMs, class. A reserved slot whose call never started (reserveAhead, not taken):
  -- its entry leaves every log. lastAny / lastSale keep their value: an ahead slot is only ever placed at "now"
  -- (no wait), so they never pass the time a later caller asks at, and order no one.
  forget(ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]) * 1000, ARGV[5])
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
  for _ = 1, minuteExtra do addEntry(minKey, now, nextMember('p'), span) end
  -- Our log now holds every call the gateway had counted: any it counts beyond them come after this (a full
  -- window's 429 places them from here, 'block').
  redis.call('HSET', meta, 'syncAt', s(now))
  if minuteExtra > 0 then dayAdd(dayKey, now, minuteExtra, daySpan, daySpan) end
  -- Our day count over the gateway's window, by whole buckets (an over-count of ours: the log then holds at
  -- least the gateway's count all the same).
  -- All live entries but the buckets wholly before the gateway's window (the margin: a bucket or two) and the
  -- ones queued after now: a few fields, not the day's 1,440.
  local dayOurs = dayLive(dayKey, daySpan, true)
  if dayOurs > 0 then
    -- lo / hi as dayLive left them (it read or wrote them just now).
    local lo, hi, wd = dayBounds[dayKey][1], dayBounds[dayKey][2], dayWidth(daySpan)
    local before, after = math.floor((now - dw) / wd) - 1, math.floor(now / wd) + 1
    for _, range in ipairs({{lo, math.min(hi, before)}, {math.max(lo, after), hi}}) do
      local _, counts = dayBuckets(dayKey, range[1], range[2])
      for _, c in ipairs(counts) do dayOurs = dayOurs - num(c, 0) end
    end
  end
  local dayExtra = math.min(tonumber(ARGV[9]), dayUsed - dayOurs)
  if dayExtra > 0 then dayAdd(dayKey, now, dayExtra, daySpan, daySpan) end
  return math.max(0, minuteExtra) + math.max(0, dayExtra)

elseif op == 'add' then
  -- ARGV: op, minuteCount, dayCount, spanMs, daySpanMs: starts made outside Redis (fallback) while it was away.
  local minuteCount, dayCount = tonumber(ARGV[2]), tonumber(ARGV[3])
  local span, daySpan = tonumber(ARGV[4]) * 1000, tonumber(ARGV[5]) * 1000
  for _ = 1, minuteCount do addEntry(minKey, now, nextMember('f'), span) end
  local dayCount2 = math.max(minuteCount, dayCount)
  if dayCount2 > 0 then dayAdd(dayKey, now, dayCount2, daySpan, daySpan) end
  return dayCount

elseif op == 'usage' then
  -- ARGV: op, daySpanMs. Read-only, at scrape time: the day window's entries (future reservations included),
  -- its reads and its background calls (the rest: money classes, phantoms, fallback starts).
  local daySpan = tonumber(ARGV[2]) * 1000
  return {dayLive(dayKey, daySpan, false), dayLive(dayReadKey, daySpan, false), dayLive(dayBackgroundKey, daySpan, false)}

elseif op == 'block' then
  -- ARGV: op, member (the call the gateway refused), probeBaseMs, probeMaxMs, and from the 429's X-Rate-Limit:
  -- minuteUsed ('' when it had none), full (1: minuteUsed reached the gateway's own minute limit), windowMs,
  -- spanMs, perWindow, daySpanMs.
  -- A 429 we did not predict: the key is unsure (issue 40). The first probe goes after probeBase; each probe
  -- refused doubles the wait, up to probeMax. A 429 of a call that started before the key was unsure (not the
  -- probe) moves nothing but the block. The refused call's entry stays: whether the gateway counts refused
  -- calls is not documented (gateway-facts.md), and a 429 only ever corrects our count upward (contract).
  -- A FULL window (another client spent it, issue 40 item 2): probing at a doubling wait cost a 429 every few
  -- seconds until it reopened (16 a window). Instead the calls it counted beyond ours go into the minute log as
  -- phantoms, so the next probe goes where the log has room: first at the last time our count agreed with the
  -- gateway's (`syncAt`: they came after it, so this is the earliest the window can reopen); that probe refused,
  -- at this incident's first 429 (`fullAt`: every call the gateway counted then was made within the window
  -- before it, so by a span later they have all left, a calendar minute or a sliding one alike); refused again
  -- (the other client is still sending), at now. At most one refused probe per incident.
  local c = redis.call('HMGET', meta, 'block', 'probeWait', 'probe', 'fullStage', 'fullAt', 'syncAt')
  local wait = num(c[2], 0)
  local first, isProbe = wait == 0, c[3] == ARGV[2]
  if ARGV[6] == '1' and (first or isProbe) then
    local w, span, perWindow, daySpan = tonumber(ARGV[7]) * 1000, tonumber(ARGV[8]) * 1000, tonumber(ARGV[9]), tonumber(ARGV[10]) * 1000
    local stage = num(c[4], 0)
    local at
    if first or stage == 0 then
      at = num(c[6], nil)
      redis.call('HSET', meta, 'fullStage', '1', 'fullAt', s(now))
    elseif stage == 1 then
      at = num(c[5], now)
      redis.call('HSET', meta, 'fullStage', '2')
    else
      at = now
      redis.call('HSET', meta, 'fullAt', s(now))
    end
    if at and at > now - w then
      local extra = math.min(perWindow, tonumber(ARGV[5])) - redis.call('ZCOUNT', minKey, '(' .. s(now - w), s(now))
      for _ = 1, extra do addEntry(minKey, at, nextMember('p'), at + span - now) end
      if extra > 0 then dayAdd(dayKey, now, extra, daySpan, daySpan) end
    end
    wait = tonumber(ARGV[3]) * 1000
    if isProbe then redis.call('HDEL', meta, 'probe', 'probeUntil') end
  elseif first then
    wait = tonumber(ARGV[3]) * 1000
  elseif isProbe then
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
  if ARGV[3] == '1' then redis.call('HDEL', meta, 'probe', 'probeUntil', 'probeWait', 'fullStage', 'fullAt') else redis.call('HDEL', meta, 'probe', 'probeUntil') end
  return 1
end
return redis.error_reply('tokengate limiter: unknown op ' .. tostring(op))
