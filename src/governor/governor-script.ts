/**
 * The two Lua scripts of the shared budget. They run atomically inside Redis,
 * so every worker that shares a token sees one count, and Redis's own clock
 * (TIME) is the only clock: workers' clocks may disagree.
 *
 * State (a hash): limit, remaining, resetAt (ms), window (ms, last seen length).
 */

/**
 * ACQUIRE KEYS[1]=state  ARGV[1]=headroom  ARGV[2]=fallback window ms
 * Returns 0 when a request may go now, else the milliseconds to wait.
 */
export const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt', 'window')
local limit = tonumber(s[1])
if not limit then return 0 end
local remaining = tonumber(s[2])
local resetAt = tonumber(s[3])
local window = tonumber(s[4]) or tonumber(ARGV[2])
local headroom = tonumber(ARGV[1])
if now >= resetAt then
  -- The window we knew of has passed: assume a fresh one of the same length
  -- until a response tells us better.
  remaining = limit
  resetAt = now + window
end
if remaining - headroom >= 1 then
  redis.call('HSET', KEYS[1], 'remaining', remaining - 1, 'resetAt', resetAt)
  redis.call('PEXPIRE', KEYS[1], math.max(window * 4, 60000))
  return 0
end
redis.call('HSET', KEYS[1], 'remaining', remaining, 'resetAt', resetAt)
return math.max(1, resetAt - now)
`;

/**
 * OBSERVE KEYS[1]=state  ARGV[1]=limit ARGV[2]=remaining ARGV[3]=resetAt ms
 * ARGV[4]=retryAfter ms (or -1)  ARGV[5]=client clock now ms
 * A newer window replaces the state; within the same window the lower
 * remaining wins, because responses come back out of order.
 */
export const OBSERVE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local remaining = tonumber(ARGV[2])
-- Carry the reset over to Redis's clock: what matters is how far away it is.
local resetAt = now + (tonumber(ARGV[3]) - tonumber(ARGV[5]))
local retryAfter = tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'remaining', 'resetAt', 'window')
local curRemaining = tonumber(s[1])
local curReset = tonumber(s[2])
local window = tonumber(s[3])
if limit >= 0 then
  if curReset and math.abs(curReset - resetAt) < 1000 and curRemaining then
    remaining = math.min(remaining, curRemaining)
    resetAt = math.max(resetAt, curReset)
  end
  if resetAt > now then
    if not window or (resetAt - now) > window then window = resetAt - now end
  end
  redis.call('HSET', KEYS[1], 'limit', limit, 'remaining', remaining, 'resetAt', resetAt, 'window', window or 60000)
end
if retryAfter >= 0 then
  local blockedUntil = now + retryAfter
  local cur = tonumber(redis.call('HGET', KEYS[1], 'resetAt')) or 0
  if blockedUntil > cur then redis.call('HSET', KEYS[1], 'resetAt', blockedUntil) end
  redis.call('HSET', KEYS[1], 'remaining', 0)
  if not redis.call('HGET', KEYS[1], 'limit') then
    redis.call('HSET', KEYS[1], 'limit', 1, 'window', math.max(retryAfter, 1000))
  end
end
redis.call('PEXPIRE', KEYS[1], math.max((window or 60000) * 4, 60000))
return 1
`;
