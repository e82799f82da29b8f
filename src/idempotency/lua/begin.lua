-- Idempotency record transitions (contract guarantee 2). The record is one hash:
--   fp, state (in_progress | completed | unknown), owner, lease_until, invoice, attempts, created,
--   reason, since (unknown), response (completed: JSON), completed_at, and the write's context for the
--   reconciler: op, customer, sale (follow-ups: the original's key), amount, payment_method (sales),
--   bank_authorization and bank_sec (bank payments: what the gateway's records do not hold),
--   save ('1': a sale's payment key kept on the customer),
--   started (latest attempt).
--   The reconciler (issue 12) adds next_look (unknown: its next look) and reconciled (completed by it).
--   follow ('1': completed, and what the write records beside its answer was not kept with it; mark-following.lua).
-- Time comes from Redis TIME so replicas with skewed clocks agree on lease expiry.
--
-- begin / retryUnknown. KEYS[1] record. ARGV: fingerprint, attempt id, lease ms, retention ms,
-- invoice ('' = none), resume ('1' = duplicate-folding retry of an unknown outcome), op, customer, sale,
-- amount, payment_method ('' = none), bank_authorization, bank_sec (a bank payment's; '' = not one), save.
local key = KEYS[1]
local fp, attempt, invoice = ARGV[1], ARGV[2], ARGV[5]
local lease, retention, resume = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[6] == '1'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keep = math.max(retention, lease)

local state = redis.call('HGET', key, 'state')
if not state then
  redis.call('HSET', key, 'fp', fp, 'state', 'in_progress', 'owner', attempt,
    'lease_until', string.format('%d', now + lease), 'invoice', invoice, 'attempts', 1,
    'created', string.format('%d', now), 'started', string.format('%d', now),
    'op', ARGV[7] or '', 'customer', ARGV[8] or '', 'sale', ARGV[9] or '', 'amount', ARGV[10] or '',
    'payment_method', ARGV[11] or '', 'bank_authorization', ARGV[12] or '', 'bank_sec', ARGV[13] or '',
    'save', ARGV[14] or '')
  redis.call('PEXPIRE', key, keep)
  return {'started', invoice, 0}
end
if redis.call('HGET', key, 'fp') ~= fp then return {'mismatch'} end
-- A completed key marked `follow` says so (its replay must leave the reconciler's due entry in place).
if state == 'completed' then return {'completed', redis.call('HGET', key, 'response'), redis.call('HGET', key, 'follow') or ''} end
if state == 'in_progress' then
  local remaining = tonumber(redis.call('HGET', key, 'lease_until')) - now
  if remaining > 0 then return {'in_progress', remaining} end
  -- The owner died or hung past its lease: the sale may have been sent, so this key can never start
  -- fresh again. The owner stays recorded so that its late complete() can still store the real answer.
  redis.call('HSET', key, 'state', 'unknown', 'reason', 'lease_expired', 'since', string.format('%d', now))
  redis.call('HDEL', key, 'lease_until')
  redis.call('PEXPIRE', key, retention)
end
-- state is 'unknown' here.
local inv = redis.call('HGET', key, 'invoice') or ''
if resume and inv ~= '' then
  -- Duplicate folding: re-send under the SAME invoice; without one the gateway cannot fold, so refuse.
  redis.call('HINCRBY', key, 'attempts', 1)
  redis.call('HSET', key, 'state', 'in_progress', 'owner', attempt, 'lease_until', string.format('%d', now + lease),
    'started', string.format('%d', now))
  redis.call('PEXPIRE', key, keep)
  return {'started', inv, 1}
end
local f = redis.call('HMGET', key, 'reason', 'since', 'attempts', 'op', 'customer', 'sale', 'amount', 'started', 'created', 'next_look',
  'payment_method', 'bank_authorization', 'bank_sec', 'save')
return {'unknown', inv, f[1] or '', f[2] or '0', f[3] or '1', f[4] or '', f[5] or '', f[6] or '', f[7] or '', f[8] or f[9] or '0',
  f[10] or '', string.format('%d', now), f[11] or '', f[12] or '', f[13] or '', f[14] or ''}
