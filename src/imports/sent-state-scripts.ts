// The Lua scripts of the change-only state (sent-state.ts). They take every
// key in KEYS, all under the scope's hash tag: one Cluster slot, so they run
// on a Cluster as on a single Redis. People's fields and digests go as one
// string of 16 bytes a person: thousands of small arguments cost the client
// more than the script costs Redis.

/**
 * KEYS: buckets; ARGV[1]: field and digest of each person, bucket after
 * bucket; ARGV[2]: how many people of ARGV[1] go to each key, two bytes each
 * (big-endian). One HMGET a bucket (of up to 256 people, as Lua's unpack has
 * a limit), and one more for those whose digest differs, asking their
 * first-rows field (the last byte complemented); one character a person, in
 * that order: 1 the same digest, 2 the digest of their first rows alone when
 * last sent (a person of several rows whose first rows did not change), 0 otherwise.
 */
export const COMPARE_BUCKETS = `
local same = {}
local people, counts = ARGV[1], ARGV[2]
local at = 0
for i = 1, #KEYS do
  local hi, lo = string.byte(counts, 2 * i - 1, 2 * i)
  local left = hi * 256 + lo
  while left > 0 do
    local n = math.min(left, 256)
    local fields = {}
    for j = 1, n do
      fields[j] = string.sub(people, at + (j - 1) * 16 + 1, at + (j - 1) * 16 + 8)
    end
    local digests = redis.call('HMGET', KEYS[i], unpack(fields))
    local missed, firsts = {}, {}
    for j = 1, n do
      local digest = string.sub(people, at + (j - 1) * 16 + 9, at + j * 16)
      if digests[j] == digest then
        same[#same + 1] = '1'
      else
        same[#same + 1] = '0'
        missed[#missed + 1] = j
        firsts[#firsts + 1] = string.sub(fields[j], 1, 7) .. string.char(255 - string.byte(fields[j], 8))
      end
    end
    if #missed > 0 then
      local earlier = redis.call('HMGET', KEYS[i], unpack(firsts))
      local base = #same - n
      for k = 1, #missed do
        local j = missed[k]
        if earlier[k] == string.sub(people, at + (j - 1) * 16 + 9, at + j * 16) then same[base + j] = '2' end
      end
    end
    at = at + n * 16
    left = left - n
  end
end
return table.concat(same)`;

/** KEYS[i]: person i's bucket; ARGV[1]: seconds to live; ARGV[2]: field and digest of each person. */
export const RECORD = `
local renewed = {}
local people = ARGV[2]
for i = 1, #KEYS do
  local at = (i - 1) * 16
  redis.call('HSET', KEYS[i], string.sub(people, at + 1, at + 8), string.sub(people, at + 9, at + 16))
  if not renewed[KEYS[i]] then
    renewed[KEYS[i]] = true
    redis.call('EXPIRE', KEYS[i], ARGV[1])
  end
end
return #KEYS`;

/**
 * KEYS: buckets; ARGV[1]: seconds to live; ARGV[2]: field and digest of each
 * person, bucket after bucket, in the order they were accepted; ARGV[2 + i]:
 * how many of them go to KEYS[i]. HSET takes a later pair of one field last,
 * so a person sent again ends with the digest of what was sent last.
 */
export const RECORD_BUCKETS = `
local ttl, people = ARGV[1], ARGV[2]
local at = 0
for i = 1, #KEYS do
  local n = tonumber(ARGV[i + 2])
  while n > 0 do
    local m = math.min(n, 256)
    local fields = {}
    for j = 1, m do
      fields[2 * j - 1] = string.sub(people, at + 1, at + 8)
      fields[2 * j] = string.sub(people, at + 9, at + 16)
      at = at + 16
    end
    redis.call('HSET', KEYS[i], unpack(fields))
    n = n - m
  end
  redis.call('EXPIRE', KEYS[i], ttl)
end
return #KEYS`;

/** KEYS: buckets; ARGV[1]: seconds to live. */
export const RENEW = `
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
return #KEYS`;
