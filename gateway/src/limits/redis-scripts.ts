/**
 * The Lua scripts behind the Redis limiter: one round trip settles and reserves every counter the
 * requests of a batch touch (the limiter sends the calls of one turn of its event loop together),
 * each request atomically, timed by the Redis server's own clock (`TIME`), so replicas with
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

/**
 * Drops expired rate entries / budget reservations, oldest first, at most CHUNK members per
 * command (a log that aged out whole after a quiet spell can hold more members than Lua can
 * unpack into one command). `prune_rate` returns the window's use and whether it dropped any (the
 * caller writes the sum back once); `prune_budget` returns spent + live reservations.
 */
const PRUNE = `
local CHUNK = 500
local function prune_rate(z, w, s, window)
  local sum = tonumber(redis.call('GET', s) or '0')
  local pruned = false
  repeat
    local old = redis.call('ZRANGEBYSCORE', z, '-inf', now - window, 'LIMIT', 0, CHUNK)
    if #old == 0 then break end
    for _, weight in ipairs(redis.call('HMGET', w, unpack(old))) do sum = sum - tonumber(weight or '0') end
    redis.call('HDEL', w, unpack(old))
    redis.call('ZREM', z, unpack(old))
    pruned = true
  until #old < CHUNK
  return sum, pruned
end
local function prune_budget(b, r, a)
  local freed = 0
  repeat
    local old = redis.call('ZRANGEBYSCORE', r, '-inf', now, 'LIMIT', 0, CHUNK)
    if #old == 0 then break end
    for _, amount in ipairs(redis.call('HMGET', a, unpack(old))) do freed = freed + tonumber(amount or '0') end
    redis.call('HDEL', a, unpack(old))
    redis.call('ZREM', r, unpack(old))
  until #old < CHUNK
  if freed ~= 0 then redis.call('HINCRBY', b, 'reserved', -freed) end
  local v = redis.call('HMGET', b, 'spent', 'reserved')
  return tonumber(v[1] or '0') + tonumber(v[2] or '0')
end
`

/**
 * Settles, then reserves, for a batch of requests in one script call: the calls one gateway made
 * in one turn of its event loop for one hash slot (tick-batch.ts). Each request is handled as if
 * alone and in order (each reservation all or nothing on its own counters, seeing what the ones
 * before it reserved), but each counter is read once per call and written once at its end with
 * multi-member commands, instead of a handful of commands per request and counter.
 *
 * KEYS: 3 per counter slot (a counter several requests touch is sent once). ARGV:
 *   slot count m, then 3 per slot: kind (r|b), window ms (0 for a budget), limit;
 *   settle count, then per settlement: reservation id, counter count n, and 2 per counter: slot, actual;
 *   reserve count, then per request: reservation id, ttl ms, counter count n, and 2 per counter:
 *   slot (negated for a shadow counter: reported, never refusing), amount.
 * Returns, reservation after reservation, {admitted, then per counter: used, ok, retryAfterMs, resetMs}.
 */
export const APPLY_LUA = `${CLOCK}${PRUNE}
local slots = tonumber(ARGV[1])
local function slot_keys(s) return KEYS[s * 3 - 2], KEYS[s * 3 - 1], KEYS[s * 3] end
local function is_rate(s) return ARGV[s * 3 - 1] == 'r' end
local function slot_window(s) return tonumber(ARGV[s * 3]) end
local function slot_limit(s) return tonumber(ARGV[s * 3 + 1]) end

-- Settlements: per counter, the reservations settled on it, in order. A budget's use after them
-- (spent + live reservations, pruned at this same now) is kept for the reservations below, which
-- would otherwise prune and read it again.
local settling, settled, budget_used = {}, {}, {}
-- a is always at the argument before the next request's first.
local a = slots * 3 + 2
for _ = 1, tonumber(ARGV[a]) do
  local id, n = ARGV[a + 1], tonumber(ARGV[a + 2])
  for i = 1, n do
    local s, actual = tonumber(ARGV[a + 1 + i * 2]), tonumber(ARGV[a + 2 + i * 2])
    local k1, k2, k3 = slot_keys(s)
    local c = settling[k1]
    if not c then
      -- Expired reservations go first, as when each settlement pruned before its own.
      c = { rate = is_rate(s), k1 = k1, k2 = k2, k3 = k3, ids = {}, seen = {}, steps = {} }
      if not c.rate then c.used = prune_budget(k1, k2, k3) end
      settling[k1] = c
      settled[#settled + 1] = c
    end
    if not c.seen[id] then
      c.seen[id] = true
      c.ids[#c.ids + 1] = id
    end
    c.steps[#c.steps + 1] = { id, actual }
  end
  a = a + 2 + n * 2
end
for _, c in ipairs(settled) do
  -- What each reservation holds now (false: nothing, e.g. it expired), then its settlements in order.
  local held = {}
  local values = redis.call('HMGET', c.rate and c.k2 or c.k3, unpack(c.ids))
  for j, id in ipairs(c.ids) do held[id] = values[j] and tonumber(values[j]) or false end
  if c.rate then
    local delta, pairs_ = 0, {}
    for _, step in ipairs(c.steps) do
      local was = held[step[1]]
      if was then
        delta = delta + step[2] - was
        held[step[1]] = step[2]
      end
    end
    for _, id in ipairs(c.ids) do
      if held[id] then
        pairs_[#pairs_ + 1] = id
        pairs_[#pairs_ + 1] = held[id]
      end
    end
    if #pairs_ > 0 then redis.call('HSET', c.k2, unpack(pairs_)) end
    if delta ~= 0 then redis.call('INCRBY', c.k3, delta) end
  else
    local released, spent, dropped = 0, 0, {}
    for _, step in ipairs(c.steps) do
      local was = held[step[1]]
      if was then
        released = released + was
        held[step[1]] = false
        dropped[#dropped + 1] = step[1]
      end
      spent = spent + step[2]
    end
    if #dropped > 0 then
      redis.call('HDEL', c.k3, unpack(dropped))
      redis.call('ZREM', c.k2, unpack(dropped))
    end
    if released ~= 0 then redis.call('HINCRBY', c.k1, 'reserved', -released) end
    redis.call('HINCRBY', c.k1, 'spent', spent)
    budget_used[c.k1] = c.used - released + spent
  end
end

-- Reservations: each counter's state, read on first use; what is reserved waits in ids/adds.
local state, touched = {}, {}
local function counter(s)
  local k1, k2, k3 = slot_keys(s)
  local c = state[k1]
  if c then return c end
  c = { rate = is_rate(s), k1 = k1, k2 = k2, k3 = k3, ids = {}, adds = {} }
  if c.rate then
    c.used, c.dirty = prune_rate(k1, k2, k3, slot_window(s))
    local first = redis.call('ZRANGE', k1, 0, 0, 'WITHSCORES')
    c.first, c.expire = first[2] and tonumber(first[2]) or false, 0
  else
    c.used, c.reserved, c.expires = budget_used[k1] or prune_budget(k1, k2, k3), 0, {}
  end
  state[k1] = c
  touched[#touched + 1] = c
  return c
end
local function hold(c, id, amount)
  if not c.adds[id] then
    c.ids[#c.ids + 1] = id
    c.adds[id] = 0
  end
  c.adds[id] = c.adds[id] + amount
end
-- Writes what is waiting: entries (rates: admitted now, an extension keeps its first time;
-- budgets: expiring at their ttl) and the amounts added to each reservation.
local function flush(c)
  if #c.ids == 0 then return end
  local held = redis.call('HMGET', c.rate and c.k2 or c.k3, unpack(c.ids))
  local entries, amounts = {}, {}
  for j, id in ipairs(c.ids) do
    entries[#entries + 1] = c.rate and now or c.expires[id]
    entries[#entries + 1] = id
    amounts[#amounts + 1] = id
    amounts[#amounts + 1] = tonumber(held[j] or '0') + c.adds[id]
  end
  if c.rate then
    redis.call('ZADD', c.k1, 'NX', unpack(entries))
    redis.call('HSET', c.k2, unpack(amounts))
  else
    redis.call('ZADD', c.k2, unpack(entries))
    redis.call('HSET', c.k3, unpack(amounts))
  end
  c.ids, c.adds = {}, {}
end
-- When a refused amount would fit: walks the log oldest first until enough weight ages out.
local function retry_after(c, window, limit, amount)
  if amount > limit then return window end
  flush(c)
  local needed, freed, start = c.used + amount - limit, 0, 0
  while true do
    local entries = redis.call('ZRANGE', c.k1, start, start + 99, 'WITHSCORES')
    if #entries == 0 then return window end
    local members = {}
    for j = 1, #entries, 2 do members[#members + 1] = entries[j] end
    local weights = redis.call('HMGET', c.k2, unpack(members))
    for j = 1, #members do
      freed = freed + tonumber(weights[j] or '0')
      if freed >= needed then return tonumber(entries[j * 2]) + window - now end
    end
    start = start + 100
  end
end

local out = {}
-- Per counter of the request at hand (entries 1..n; reused from request to request).
local cs, windows, amounts, used, ok, retry, reset = {}, {}, {}, {}, {}, {}, {}
-- a is at the settlements' last argument: the reserve count follows.
a = a + 1
for _ = 1, tonumber(ARGV[a]) do
  local id, ttl, n = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local admitted = 1
  for i = 1, n do
    local slot, amount = tonumber(ARGV[a + 2 + i * 2]), tonumber(ARGV[a + 3 + i * 2])
    local enforce = slot > 0
    if not enforce then slot = -slot end
    local c, window, limit = counter(slot), slot_window(slot), slot_limit(slot)
    cs[i], windows[i], amounts[i] = c, window, amount
    used[i], retry[i], reset[i] = c.used, 0, 0
    ok[i] = (c.used + amount <= limit) and 1 or 0
    if c.rate then
      if c.first then reset[i] = c.first + window - now end
      if ok[i] == 0 then retry[i] = retry_after(c, window, limit, amount) end
    end
    if ok[i] == 0 and enforce then admitted = 0 end
  end
  if admitted == 1 then
    for i = 1, n do
      local c, window, amount = cs[i], windows[i], amounts[i]
      hold(c, id, amount)
      if c.rate then
        if not c.first then c.first = now end
        if window + ttl > c.expire then c.expire = window + ttl end
        if reset[i] == 0 then reset[i] = window end
      else
        c.expires[id] = now + ttl
        c.reserved = c.reserved + amount
      end
      c.used = c.used + amount
      used[i] = c.used
    end
  end
  out[#out + 1] = admitted
  for i = 1, n do
    out[#out + 1] = used[i]
    out[#out + 1] = ok[i]
    out[#out + 1] = retry[i]
    out[#out + 1] = reset[i]
  end
  a = a + 3 + n * 2
end
for _, c in ipairs(touched) do
  flush(c)
  if c.rate then
    if c.expire > 0 then
      redis.call('SET', c.k3, c.used, 'PX', c.expire)
      redis.call('PEXPIRE', c.k1, c.expire)
      redis.call('PEXPIRE', c.k2, c.expire)
    elseif c.dirty then
      redis.call('SET', c.k3, c.used, 'KEEPTTL')
    end
  elseif c.reserved ~= 0 then
    redis.call('HINCRBY', c.k1, 'reserved', c.reserved)
  end
end
return out
`

/** KEYS: 3 per budget counter. Returns spent + live reservations for each. */
export const USAGE_LUA = `${CLOCK}${PRUNE}
local out = {}
for i = 1, #KEYS / 3 do out[i] = prune_budget(KEYS[i * 3 - 2], KEYS[i * 3 - 1], KEYS[i * 3]) end
return out
`
