-- Append a batch of commands' events to one aggregate stream, atomically (DESIGN.md).
-- KEYS: 1 stream, 2 meta, 3 org log, 4 command results, 5 balances, 6 stream index
-- ARGV: 1 stream name, 2 expected version, 3 expected last hash, 4 genesis hash,
--       5 number of commands, then per command:
--         idempotency key, stored result, number of balance moves,
--         (player, signed cents) * moves, number of events, payload * events
-- Replies: {"ok", log_id...} | {"conflict", version, last_hash} | {"duplicate", index}
--          | {"insufficient", index, player}
local meta = redis.call('HMGET', KEYS[2], 'v', 'h')
local version = tonumber(meta[1] or '0')
local last = meta[2] or ARGV[4]
if version ~= tonumber(ARGV[2]) or last ~= ARGV[3] then
  return {'conflict', tostring(version), last}
end

local commands = {}
local i = 6
for c = 1, tonumber(ARGV[5]) do
  local cmd = {key = ARGV[i], result = ARGV[i + 1], moves = {}, events = {}}
  local nmoves = tonumber(ARGV[i + 2])
  i = i + 3
  for m = 1, nmoves do
    cmd.moves[m] = {ARGV[i], tonumber(ARGV[i + 1])}
    i = i + 2
  end
  local nevents = tonumber(ARGV[i])
  i = i + 1
  for e = 1, nevents do
    cmd.events[e] = ARGV[i]
    i = i + 1
  end
  commands[c] = cmd
end

-- Pass 1: nothing is written unless every command is new and every balance stays >= 0.
local balance = {}
for c, cmd in ipairs(commands) do
  if cmd.key ~= '' and redis.call('HEXISTS', KEYS[4], cmd.key) == 1 then
    return {'duplicate', tostring(c)}
  end
  for _, move in ipairs(cmd.moves) do
    local player, delta = move[1], move[2]
    if balance[player] == nil then
      balance[player] = tonumber(redis.call('HGET', KEYS[5], player) or '0')
    end
    balance[player] = balance[player] + delta
    if delta < 0 and balance[player] < 0 then
      return {'insufficient', tostring(c), player}
    end
  end
end

-- Pass 2: write.
local reply = {'ok'}
local seq = version
for _, cmd in ipairs(commands) do
  for _, move in ipairs(cmd.moves) do
    redis.call('HINCRBY', KEYS[5], move[1], move[2])
  end
  for _, payload in ipairs(cmd.events) do
    seq = seq + 1
    local log_id = redis.call('XADD', KEYS[3], '*', 'e', payload)
    redis.call('XADD', KEYS[1], '0-' .. seq, 'e', payload, 'l', log_id)
    reply[#reply + 1] = log_id
  end
  if cmd.key ~= '' then
    redis.call('HSET', KEYS[4], cmd.key, cmd.result)
  end
end
if seq ~= version then
  redis.call('HSET', KEYS[2], 'v', seq, 'h', ARGV[i])
  redis.call('SADD', KEYS[6], ARGV[1])
end
return reply
