// CONTRACT §13's reservation rule in Lua, so Redis decides and records a reservation in one
// atomic step for every instance. It mirrors quota-decision.ts line for line; a test runs the
// same cases through both.
//
// KEYS: 1 the user's leases (hash: lease id → "tokens cost data"), 2–4 the user's settled totals
// for the minute, day and month (hashes t, c, r), 5 the lease expiry index (sorted set).
// ARGV: 1 lease id, 2 expiry member, 3 expires at, 4 data, 5 input tokens, 6 output limit,
// 7 input price (-1: none), 8 output price, 9 number of limits, then per limit: window (1–3),
// metric (tokens, costUsd, requests), limit.
// Reply: {'prime', window} when a totals key is missing (the caller fills it from the database
// and asks again), {'ok', output, tokens, cost} or {'no', limit index, used, reason}.
export const reserveScript = `
for i = 2, 4 do
  if redis.call('EXISTS', KEYS[i]) == 0 then return {'prime', tostring(i - 1)} end
end
local heldTokens, heldCost, heldCount = 0, 0, 0
for _, value in ipairs(redis.call('HVALS', KEYS[1])) do
  local tokens, cost = string.match(value, '^(%d+) (%d+)')
  heldTokens = heldTokens + tonumber(tokens)
  heldCost = heldCost + tonumber(cost)
  heldCount = heldCount + 1
end
local input = tonumber(ARGV[5])
local output = tonumber(ARGV[6])
local priceIn = tonumber(ARGV[7])
local priceOut = tonumber(ARGV[8])
local priced = priceIn >= 0
local function cost(inTokens, outTokens)
  if not priced then return 0 end
  return math.ceil(inTokens * priceIn + outTokens * priceOut)
end
local count = tonumber(ARGV[9])
-- The refusal that lasts longest (unpriced, else the longest window): quota-decision.ts's lastingOf.
local refused, refusedRank = nil, 0
local function refuse(n, window, taken, reason)
  local rank = window
  if reason == 'unpriced' then rank = rank + 10 end
  if refused == nil or rank > refusedRank then
    refused, refusedRank = {'no', tostring(n), tostring(taken), reason}, rank
  end
end
for n = 1, count do
  local base = 9 + (n - 1) * 3
  local window = tonumber(ARGV[base + 1])
  local metric = ARGV[base + 2]
  local limit = tonumber(ARGV[base + 3])
  local settled = redis.call('HMGET', KEYS[1 + window], 't', 'c', 'r')
  if metric == 'requests' then
    local taken = tonumber(settled[3] or '0') + heldCount
    if taken + 1 > limit then refuse(n, window, taken, 'exhausted') end
  elseif metric == 'tokens' then
    local taken = tonumber(settled[1] or '0') + heldTokens
    local left = limit - taken - input
    if left < 1 then refuse(n, window, taken, 'exhausted') else output = math.min(output, left) end
  else
    local taken = tonumber(settled[2] or '0') + heldCost
    if not priced then
      refuse(n, window, taken, 'unpriced')
    else
      local left = limit - taken - cost(input, 0)
      if left < math.max(priceOut, 1) then
        refuse(n, window, taken, 'exhausted')
      elseif priceOut > 0 then
        output = math.min(output, math.floor(left / priceOut))
      end
    end
  end
end
if refused ~= nil then return refused end
output = math.max(1, output)
local tokens = input + output
local reserved = cost(input, output)
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d %d %s', tokens, reserved, ARGV[4]))
redis.call('ZADD', KEYS[5], tonumber(ARGV[3]), ARGV[2])
return {'ok', tostring(output), tostring(tokens), tostring(reserved)}
`;

// Fills a missing totals key from the database's figures, unless another caller did meanwhile,
// or a call of the user was settled since the figures were read (the user's settle count moved
// from ARGV[5]): that call may be missing from them, and its settle found no key to add it to,
// so the caller reads the database again (0) rather than store totals that lack it.
// KEYS: 1 the totals key, 2 the user's settle count. ARGV: tokens, cost, requests, expire at
// (epoch ms), the settle count read before the figures.
export const primeScript = `
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[5] then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 't', ARGV[1], 'c', ARGV[2], 'r', ARGV[3])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
end
return 1
`;

// Releases a lease and adds the call's real usage to the totals that are present (a missing one
// is filled from the database, which recorded the call before this runs, when it is next needed),
// and counts the settle for primeScript.
// KEYS: 1 leases, 2–4 totals, 5 expiry index, 6 the user's settle count. ARGV: lease id ('' for
// none), member, tokens, cost, the settle count's expiry (epoch ms).
export const settleScript = `
redis.call('INCR', KEYS[6])
redis.call('PEXPIREAT', KEYS[6], ARGV[5])
if ARGV[1] ~= '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[5], ARGV[2])
end
for i = 2, 4 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HINCRBY', KEYS[i], 't', ARGV[3])
    redis.call('HINCRBY', KEYS[i], 'c', ARGV[4])
    redis.call('HINCRBY', KEYS[i], 'r', 1)
  end
end
return 1
`;

// Claims up to 50 lapsed leases. KEYS: 1 expiry index. ARGV: now, the key prefix of a user's
// leases hash ("<prefix>quota:"). Reply: the claimed leases' data strings.
export const sweepScript = `
local claimed = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 50)) do
  redis.call('ZREM', KEYS[1], member)
  local newline = string.find(member, '\\n', 1, true)
  local leases = ARGV[2] .. string.sub(member, 1, newline - 1) .. ':leases'
  local id = string.sub(member, newline + 1)
  local value = redis.call('HGET', leases, id)
  if value then
    redis.call('HDEL', leases, id)
    table.insert(claimed, value)
  end
end
return claimed
`;
