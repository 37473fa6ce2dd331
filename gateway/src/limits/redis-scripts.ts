/**
 * The Lua scripts behind the Redis limiter: one round trip reserves (or settles) every counter a
 * request touches, atomically, for every request of a batch (the limiter sends the calls of one
 * tick together), timed by the Redis server's own clock (`TIME`), so replicas with
 * skewed clocks still share one timeline. Every key is declared (KEYS), three per counter, and all
 * carry one hash tag so a Redis Cluster puts them in one slot.
 *
 * Per rate counter: `:z` sorted set member → admitted at (ms), `:w` hash member → weight, `:s` the
 * sum of weights in the window. Per budget counter: `:b` hash {spent, reserved}, `:r` sorted set
 * reservation → expires at (ms), `:a` hash reservation → amount.
 */

const CLOCK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

/** Drops expired rate entries / budget reservations; returns the counter's current use. */
const PRUNE = `
local function prune_rate(z, w, s, window)
  local old = redis.call('ZRANGEBYSCORE', z, '-inf', now - window)
  local sum = tonumber(redis.call('GET', s) or '0')
  if #old > 0 then
    for _, m in ipairs(old) do sum = sum - tonumber(redis.call('HGET', w, m) or '0') end
    redis.call('HDEL', w, unpack(old))
    redis.call('ZREMRANGEBYSCORE', z, '-inf', now - window)
    redis.call('SET', s, sum, 'KEEPTTL')
  end
  return sum
end
local function prune_budget(b, r, a)
  local old = redis.call('ZRANGEBYSCORE', r, '-inf', now)
  if #old > 0 then
    local freed = 0
    for _, m in ipairs(old) do freed = freed + tonumber(redis.call('HGET', a, m) or '0') end
    redis.call('HDEL', a, unpack(old))
    redis.call('ZREMRANGEBYSCORE', r, '-inf', now)
    redis.call('HINCRBY', b, 'reserved', -freed)
  end
  local v = redis.call('HMGET', b, 'spent', 'reserved')
  return tonumber(v[1] or '0') + tonumber(v[2] or '0')
end
`

/**
 * Reserves for a batch of requests, one after another in one script call (each all or nothing on
 * its own counters, as if called alone). KEYS: 3 per counter, request after request. ARGV: the
 * number of requests, then per request: reservation id, ttl ms, counter count n, and 5 per counter:
 * kind (r|b), window ms, limit, amount, enforce (1|0). Returns, request after request,
 * {admitted, then per counter: used, ok, retryAfterMs, resetMs}.
 */
export const RESERVE_LUA = `${CLOCK}${PRUNE}
local function reserve(kbase, id, ttl, abase, n)
  local used, ok, retry, reset = {}, {}, {}, {}
  local admitted = 1
  for i = 1, n do
    local k1, k2, k3 = KEYS[kbase + i * 3 - 2], KEYS[kbase + i * 3 - 1], KEYS[kbase + i * 3]
    local base = abase + (i - 1) * 5
    local kind, window, limit, amount, enforce = ARGV[base + 1], tonumber(ARGV[base + 2]), tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4]), ARGV[base + 5]
    retry[i], reset[i] = 0, 0
    if kind == 'r' then
      used[i] = prune_rate(k1, k2, k3, window)
      local first = redis.call('ZRANGE', k1, 0, 0, 'WITHSCORES')
      if first[2] then reset[i] = tonumber(first[2]) + window - now end
      ok[i] = (used[i] + amount <= limit) and 1 or 0
      if ok[i] == 0 then
        retry[i] = window
        if amount <= limit then
          -- Walk the log oldest first until enough weight would have aged out.
          local entries = redis.call('ZRANGE', k1, 0, -1, 'WITHSCORES')
          local freed = 0
          for j = 1, #entries, 2 do
            freed = freed + tonumber(redis.call('HGET', k2, entries[j]) or '0')
            if used[i] + amount - freed <= limit then
              retry[i] = tonumber(entries[j + 1]) + window - now
              break
            end
          end
        end
      end
    else
      used[i] = prune_budget(k1, k2, k3)
      ok[i] = (used[i] + amount <= limit) and 1 or 0
    end
    if ok[i] == 0 and enforce == '1' then admitted = 0 end
  end
  if admitted == 1 then
    for i = 1, n do
      local k1, k2, k3 = KEYS[kbase + i * 3 - 2], KEYS[kbase + i * 3 - 1], KEYS[kbase + i * 3]
      local base = abase + (i - 1) * 5
      local kind, window, amount = ARGV[base + 1], tonumber(ARGV[base + 2]), tonumber(ARGV[base + 4])
      if kind == 'r' then
        if redis.call('ZSCORE', k1, id) == false then redis.call('ZADD', k1, now, id) end
        redis.call('HINCRBY', k2, id, amount)
        redis.call('INCRBY', k3, amount)
        for _, k in ipairs({ k1, k2, k3 }) do redis.call('PEXPIRE', k, window + ttl) end
        if reset[i] == 0 then reset[i] = window end
      else
        redis.call('HINCRBY', k3, id, amount)
        redis.call('ZADD', k2, now + ttl, id)
        redis.call('HINCRBY', k1, 'reserved', amount)
      end
      used[i] = used[i] + amount
    end
  end
  local out = { admitted }
  for i = 1, n do
    out[#out + 1] = used[i]
    out[#out + 1] = ok[i]
    out[#out + 1] = retry[i]
    out[#out + 1] = reset[i]
  end
  return out
end
local out = {}
local kbase, a = 0, 2
for _ = 1, tonumber(ARGV[1]) do
  local n = tonumber(ARGV[a + 2])
  for _, v in ipairs(reserve(kbase, ARGV[a], tonumber(ARGV[a + 1]), a + 2, n)) do out[#out + 1] = v end
  kbase = kbase + n * 3
  a = a + 3 + n * 5
end
return out
`

/**
 * Settles a batch of reservations. KEYS: 3 per counter, reservation after reservation. ARGV: the
 * number of reservations, then per reservation: id, counter count n, and 2 per counter: kind (r|b),
 * actual. Returns the number of reservations settled.
 */
export const SETTLE_LUA = `${CLOCK}${PRUNE}
local kbase, a = 0, 2
local count = tonumber(ARGV[1])
for _ = 1, count do
  local id, n = ARGV[a], tonumber(ARGV[a + 1])
  for i = 1, n do
    local k1, k2, k3 = KEYS[kbase + i * 3 - 2], KEYS[kbase + i * 3 - 1], KEYS[kbase + i * 3]
    local kind, actual = ARGV[a + i * 2], tonumber(ARGV[a + i * 2 + 1])
    if kind == 'r' then
      local weight = redis.call('HGET', k2, id)
      if weight then
        redis.call('HSET', k2, id, actual)
        redis.call('INCRBY', k3, actual - tonumber(weight))
      end
    else
      prune_budget(k1, k2, k3)
      local amount = redis.call('HGET', k3, id)
      if amount then
        redis.call('HDEL', k3, id)
        redis.call('ZREM', k2, id)
        redis.call('HINCRBY', k1, 'reserved', -tonumber(amount))
      end
      redis.call('HINCRBY', k1, 'spent', actual)
    end
  end
  kbase = kbase + n * 3
  a = a + 2 + n * 2
end
return count
`

/** KEYS: 3 per budget counter. Returns spent + live reservations for each. */
export const USAGE_LUA = `${CLOCK}${PRUNE}
local out = {}
for i = 1, #KEYS / 3 do out[i] = prune_budget(KEYS[i * 3 - 2], KEYS[i * 3 - 1], KEYS[i * 3]) end
return out
`
