-- Append a batch of commands' events to one aggregate stream, atomically (docs/ARCHITECTURE.md, "The append script").
-- KEYS: 1 stream, 2 meta, 3 org log, 4 command results, 5 balances, 6 stream index,
--       7 the stream's lease, 8 the stream's round index (docs/AUDIT.md, "Game recall")
-- ARGV: 1 stream name, 2 expected version, 3 expected last hash, 4 genesis hash,
--       5 the batch, one msgpack array (one argument, so the client packs one string):
--         [[idempotency key, stored result, [[player, signed cents], ...],
--           [event payload, ...]], ...]
--       6 the stream's last hash after the batch
--       7 the lease value the writer holds ('' : no lease, allowed only while none exists)
--       8 '1' when the stream keeps a round index (a table's), else ''
--       9 the round index's new entries, one msgpack array [[round, seq], ...] of each
--         RoundOpened of the batch (as text), or '' for none
-- Replies: {"ok", log_id...} | {"conflict", version, last_hash} | {"duplicate", index}
--          | {"insufficient", index, player} | {"fenced", current lease value or ''}
local lease = redis.call('GET', KEYS[7]) or ''
if lease ~= ARGV[7] then
  return {'fenced', lease}
end
local meta = redis.call('HMGET', KEYS[2], 'v', 'h')
local version = tonumber(meta[1] or '0')
local last = meta[2] or ARGV[4]
if version ~= tonumber(ARGV[2]) or last ~= ARGV[3] then
  return {'conflict', tostring(version), last}
end

local commands = {}
for c, raw in ipairs(cmsgpack.unpack(ARGV[5])) do
  commands[c] = {key = raw[1], result = raw[2], moves = raw[3], events = raw[4]}
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
  redis.call('HSET', KEYS[2], 'v', seq, 'h', ARGV[6])
  redis.call('SADD', KEYS[6], ARGV[1])
  if ARGV[9] ~= '' then
    for _, mark in ipairs(cmsgpack.unpack(ARGV[9])) do
      redis.call('ZADD', KEYS[8], mark[1], mark[2])
    end
  end
  if version == 0 and ARGV[8] == '1' then
    -- Begun here: every RoundOpened of the stream goes through this script, so its index is whole.
    redis.call('ZADD', KEYS[8], 0, 'complete')
  end
end
return reply
