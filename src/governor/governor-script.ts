/**
 * The Lua scripts of the shared budget. They run atomically inside Redis, so
 * every worker that shares a token sees one count, and Redis's own clock
 * (TIME) is the only clock: workers' clocks may disagree.
 *
 * Every key a script touches comes in KEYS, and the keys share one hash tag
 * (see budget-keys.ts), so the scripts run on Redis Cluster too.
 *
 * KEYS[1] state (hash):
 *   limit      the quota per window (-1: only a Retry-After was ever seen)
 *   rep        the lowest remaining a response of the current window reported
 *              (or the limit, when the window was assumed to have started)
 *   lo, hi     the current window's reset lies in (lo, hi], Redis ms. Each
 *              response narrows it: a whole-second Reset taken at an instant
 *              between send and receipt bounds it on both sides, and the
 *              responses of one window together bound it to a few ms.
 *   window     longest window seen, ms
 *   gen        window generation, bumped whenever a new window begins
 *   prov       1 while the current window is assumed (the reset passed, no
 *              response of the new window yet)
 *   probeId, probeUntil  the one request let through to learn an assumed
 *              window's quota (the service may have changed it at the
 *              reset), and when the others stop waiting for its answer
 *   switchedAt when the window was last assumed to have begun
 *   prevHi     the previous window's hi, to tell its late answers apart
 *   slack      ms added to hi: grows when a 429 shows the service resets
 *              later than a rounded-up Reset says
 *   probed     1 once a response came without rate-limit headers: no budget
 *              to learn, so requests stop waiting for a first answer
 * KEYS[2] in flight (sorted set): permit id -> lease expiry. A request is in
 *   flight from acquire until its response is observed or it is released;
 *   the lease lets the count of a killed process expire.
 * KEYS[3], KEYS[4] waiting interactive / background (sorted sets): acquirer
 *   id -> registration expiry. A background acquire leaves one slot per
 *   waiting interactive acquirer.
 *
 * What may be sent now: rep - (requests in flight) - headroom. A response's
 * remaining already counts every request the service took before it, and
 * leaves the in-flight set in the same step as its remaining is merged, so
 * nothing is counted twice; requests in flight whose answers are not back
 * are counted as not yet reflected (safe; the answers settle it in ms).
 */

/** Shared prologue: Redis time, and expired leases and registrations dropped. */
const PROLOGUE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
`;

/**
 * ACQUIRE ARGV: 1 id, 2 priority (interactive|background), 3 lease ms,
 * 4 fallback window ms, 5 headroom, 6 poll ms, 7 waiter grace ms, 8 '1' to
 * only try (a permit taken ahead: no waiting, so no registration).
 * Returns {wait ms (0: go now), gen, now}.
 */
/** The in-flight lease of the one request that probes an unknown budget. */
const PROBE_LEASE_MS = 5000;

/** The acquire as a Lua function of its arguments (a table laid out as ACQUIRE ARGV). */
const ACQUIRE_FN = `local function acquire(A)
local PROBE_LEASE_MS = ${PROBE_LEASE_MS}
local id = A[1]
local interactive = A[2] == 'interactive'
local lease = tonumber(A[3])
local fallbackWindow = tonumber(A[4])
local headroom = tonumber(A[5])
local poll = tonumber(A[6])
local grace = tonumber(A[7])
local tryOnly = A[8] == '1'
local waitKey = interactive and KEYS[3] or KEYS[4]

local function grant(gen)
  redis.call('ZADD', KEYS[2], now + lease, id)
  redis.call('PEXPIRE', KEYS[2], lease * 2)
  redis.call('ZREM', waitKey, id)
  return {0, gen, now}
end

local function await(wait)
  if tryOnly then return {wait, 0, now} end
  redis.call('ZADD', waitKey, now + wait + grace, id)
  -- Only ever lengthen the set's life: other waiters may wait longer than this one.
  if redis.call('PTTL', waitKey) < wait + grace * 2 then redis.call('PEXPIRE', waitKey, wait + grace * 2) end
  return {wait, 0, now}
end

local s = redis.call('HMGET', KEYS[1], 'limit', 'rep', 'hi', 'window', 'gen', 'slack', 'probed', 'prov',
  'probeUntil')
local hi = tonumber(s[3])
if not hi then
  -- No response has shown a budget yet: one request goes first and its answer
  -- teaches the fleet the quota, instead of a burst of first requests meeting
  -- 429s. A service that answered without rate-limit headers ('probed') is not
  -- throttled at all. The probe's lease is short, so a process killed while
  -- probing holds the others back for seconds, not for a whole lease.
  if s[7] or redis.call('ZCARD', KEYS[2]) == 0 then
    lease = math.min(lease, PROBE_LEASE_MS)
    return grant(0)
  end
  return await(poll)
end
local limit = tonumber(s[1])
local rep = tonumber(s[2])
local window = tonumber(s[4]) or fallbackWindow
local gen = tonumber(s[5]) or 0
local slack = tonumber(s[6]) or 0
local prov = s[8] == '1'
local probeUntil = tonumber(s[9]) or 0

if now >= hi + slack then
  if limit < 0 then
    -- Only a Retry-After was known, and it has passed.
    redis.call('DEL', KEYS[1])
    return grant(0)
  end
  -- The window has passed: assume a fresh one until a response says more.
  gen = gen + 1
  rep = limit
  redis.call('HSET', KEYS[1], 'rep', rep, 'gen', gen, 'prov', 1, 'switchedAt', now,
    'prevHi', hi, 'lo', hi, 'hi', now + window + 1000, 'probeUntil', 0)
  redis.call('PEXPIRE', KEYS[1], math.max(window * 4, 60000))
  hi = now + window + 1000
  prov = true
  probeUntil = 0
end

if prov and rep - headroom >= 1 then
  -- An assumed window: the service may have lowered its quota at the reset,
  -- below what the fleet has in flight. One request goes first and its answer
  -- (which ends 'prov') says what this window holds; the others wait for it,
  -- so a lowered quota costs at most that one request a 429. A probe that
  -- gets no answer holds the others back for PROBE_LEASE_MS at most.
  -- The probe is the window's first slot: a background acquire leaves it to a waiting interactive one.
  local yields = not interactive and redis.call('ZCARD', KEYS[3]) > 0
  if tryOnly or probeUntil > now or yields then
    local reply = await(poll)
    reply[2] = gen
    return reply
  end
  redis.call('HSET', KEYS[1], 'probeId', id, 'probeUntil', now + PROBE_LEASE_MS)
  return grant(gen)
end

local inflight = redis.call('ZCARD', KEYS[2])
local reserve = 0
if not interactive then reserve = redis.call('ZCARD', KEYS[3]) end
if rep - headroom - inflight - reserve >= 1 then return grant(gen) end

local wait
if rep - headroom >= 1 then
  -- Budget is left but held by requests in flight (or kept for interactive
  -- waiters): their answers free it within moments.
  wait = poll
else
  wait = math.max(1, hi + slack - now)
end
local reply = await(wait)
reply[2] = gen
return reply
end
`;

export const ACQUIRE_SCRIPT = `${PROLOGUE}${ACQUIRE_FN}
return acquire(ARGV)
`;

/**
 * OBSERVE ARGV: 1 permit id ('' none), 2 permit gen (-1), 3 grantedAt (Redis
 * ms, -1), 4 limit (-1: no rate-limit headers), 5 remaining, 6 reset as ms
 * from the caller's now, 7 reset precision ms, 8 1 if the reset counts from
 * the response (a delta) else 0, 9 ms since the response's headers arrived,
 * 10 Retry-After ms (-1 none), 11 fallback window ms.
 * Returns 1 when the response was merged into the state, 0 when ignored.
 */
/** The observation as a Lua function of its arguments (a table laid out as OBSERVE ARGV). */
const OBSERVE_FN = `local function observe(A)
local id = A[1]
local pgen = tonumber(A[2])
local granted = tonumber(A[3])
local limit = tonumber(A[4])
local remaining = tonumber(A[5])
local precision = tonumber(A[7])
local relative = A[8] == '1'
local recv = now - tonumber(A[9])
local retryAfter = tonumber(A[10])
local fallbackWindow = tonumber(A[11])

local removed = 0
if id ~= '' then removed = redis.call('ZREM', KEYS[2], id) end

local s = redis.call('HMGET', KEYS[1], 'limit', 'rep', 'lo', 'hi', 'window', 'gen', 'prov',
  'switchedAt', 'prevHi', 'slack')
local curLimit = tonumber(s[1])
local rep = tonumber(s[2])
local lo = tonumber(s[3])
local hi = tonumber(s[4])
local window = tonumber(s[5])
local gen = tonumber(s[6]) or 0
local prov = s[7] == '1'
local switchedAt = tonumber(s[8])
local prevHi = tonumber(s[9])
local slack = tonumber(s[10]) or 0

-- This response's window resets in (loI, hiI].
local loI, hiI
if limit >= 0 then
  hiI = now + tonumber(A[6])
  if relative then
    -- Reset = (service's instant) + value; that instant lies between the grant and receipt.
    local value = hiI - recv
    if granted >= 0 then loI = granted + value - precision else loI = hiI - precision - 1000 end
  else
    loI = hiI - precision
  end
elseif retryAfter >= 0 then
  hiI = recv + retryAfter
  loI = hiI - 1000
else
  -- No headers: the request spent from the window it was granted in.
  if removed == 1 and hi and pgen == gen and rep then
    redis.call('HSET', KEYS[1], 'rep', rep - 1)
  end
  if not hi then
    -- The service answers without a budget: requests need not wait for a probe.
    redis.call('HSET', KEYS[1], 'probed', 1)
    redis.call('PEXPIRE', KEYS[1], math.max(fallbackWindow * 4, 60000))
  end
  return 0
end

local function start(r, newGen)
  local w = math.max(window or 0, hiI - recv)
  if w <= 0 then w = fallbackWindow end
  redis.call('HSET', KEYS[1], 'limit', limit >= 0 and limit or (curLimit or -1), 'rep', r,
    'lo', loI, 'hi', hiI, 'window', w, 'gen', newGen, 'prov', 0)
  redis.call('PEXPIRE', KEYS[1], math.max(w * 4, 60000))
end

if retryAfter >= 0 then remaining = 0 end

if not hi then
  start(remaining, gen + 1)
  return 1
end

-- Which window is this response's? Sent after our window's latest end, or
-- resetting after it could: a later one. Resetting before it could: an
-- earlier one, answered late.
local kind
local sentAfterSwitch = prov and switchedAt and granted >= switchedAt
if (granted >= 0 and granted >= hi) or loI >= hi then
  kind = 'newer'
elseif prov then
  if sentAfterSwitch or loI >= prevHi then kind = 'provisional' else kind = 'older' end
elseif hiI <= lo then
  kind = 'older'
else
  kind = 'same'
end

if kind == 'older' then return 0 end

if retryAfter >= 0 then
  -- The service says the window is spent: believe it, and wait at least as long as it asks.
  if prov and sentAfterSwitch then
    -- We assumed a reset the service had not made: its Reset rounds some other way.
    redis.call('HSET', KEYS[1], 'slack', math.min(1000, slack + 250))
  end
  local blockedUntil = math.max(hiI, recv + retryAfter)
  if kind == 'same' then blockedUntil = math.max(blockedUntil, hi) end
  loI = math.min(loI, blockedUntil - 1)
  hiI = blockedUntil
  if kind == 'newer' then gen = gen + 1 end
  start(0, gen)
  return 1
end

if kind == 'newer' then
  start(remaining, gen + 1)
elseif kind == 'provisional' then
  -- The first answer from the window we assumed: its bounds replace the guess.
  start(math.min(rep, remaining), gen)
else
  local nlo = math.max(lo, loI)
  local nhi = math.min(hi, hiI)
  if nlo > nhi then
    -- The bounds disagree (the service rounds some other way): keep the widest.
    nlo = math.min(lo, loI)
    nhi = math.max(hi, hiI)
  end
  local w = math.max(window or 0, hiI - recv)
  redis.call('HSET', KEYS[1], 'rep', math.min(rep, remaining), 'lo', nlo, 'hi', nhi, 'window', w,
    'limit', limit >= 0 and limit or curLimit)
end
return 1
end
`;

export const OBSERVE_SCRIPT = `${PROLOGUE}${OBSERVE_FN}
return observe(ARGV)
`;

/**
 * OBSERVE_AND_TAKE ARGV: 1–11 as OBSERVE, then 12–19 as ACQUIRE (with 19,
 * only try, '1'). One answer observed and the permit of the client's next
 * request taken in the same round trip: a request costs one round trip to
 * Redis, not two. Returns {observed (1/0), wait ms (0: taken), gen, now}.
 */
export const OBSERVE_AND_TAKE_SCRIPT = `${PROLOGUE}${OBSERVE_FN}${ACQUIRE_FN}
local observed = observe({ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9],
  ARGV[10], ARGV[11]})
local taken = acquire({ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16], ARGV[17], ARGV[18], ARGV[19]})
return {observed, taken[1], taken[2], taken[3]}
`;

/**
 * RELEASE ARGV: 1 permit id. Drops the request from the in-flight set (an
 * answer that never came); a probe of an assumed window that got no answer
 * lets the next request probe at once.
 */
export const RELEASE_SCRIPT = `
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('HGET', KEYS[1], 'probeId') == ARGV[1] then redis.call('HSET', KEYS[1], 'probeUntil', 0) end
return 1
`;

/** UNREGISTER ARGV: 1 acquirer id. An acquire that gave up waiting leaves no registration behind. */
export const UNREGISTER_SCRIPT = `
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`;

/**
 * STATE (read-mostly; drops expired leases). Returns {now, limit, rep, lo,
 * hi, slack, in flight, interactive waiting, background waiting, prov}; '' for unknown.
 */
export const STATE_SCRIPT = `${PROLOGUE}
local s = redis.call('HMGET', KEYS[1], 'limit', 'rep', 'lo', 'hi', 'slack', 'prov')
return {now, s[1] or '', s[2] or '', s[3] or '', s[4] or '', s[5] or '',
  redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[4]), s[6] or ''}
`;
