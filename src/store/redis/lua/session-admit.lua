-- session-admit: registers a session if the token's limits allow it, in one atomic step (the rule
-- is admissionStep in domain/store-rules.ts, mirrored here where it must run to stay exact).
-- KEYS[1] record {a}:ss:<id>, KEYS[2] account's live sessions, KEYS[3] the token's, KEYS[4] the
-- stream's, KEYS[5] the stream's publishers (zsets: id -> expiry ms), KEYS[6] caller-id pointer
-- {a}:sp:<caller>:<caller id> -> id (KEYS[1..6] as session-touch and session-end take them),
-- KEYS[7] the token's use count, KEYS[8] the token's record "<rev>:<json>"
-- ARGV[1] record JSON, ARGV[2] expiry (ms), ARGV[3] now (ms), ARGV[4] id, ARGV[5] maxUses ('' = none),
-- ARGV[6] maxConcurrent ('' = none), ARGV[7] publish conflict ('' | reject | replace),
-- ARGV[8] action, ARGV[9] token id ('' = none), ARGV[10] now (ISO), ARGV[11] how long an ended record is kept (ms),
-- ARGV[12] the token revision the decision was made on ('' = not checked)
-- On one Redis server (not a Cluster), also KEYS[9] the connection's pointer sess:<caller>:<caller id>
-- and KEYS[10] the sessions gauge ssc:<caller>:<action>, outside the account's slot, with ARGV[13]
-- the pointer JSON and ARGV[14] the gauge member "<account>\n<id>".
-- Returns {'ok', <the action of this connection's earlier record, or ''>, <its id, or ''>,
-- <replaced publisher records...>} or {<refusal reason>}.
-- First, before any write: the token must still be at the decision's revision (tokenUnchanged).
if ARGV[12] ~= '' then
  local rec = redis.call('GET', KEYS[8])
  if not rec or string.match(rec, '^(%d+):') ~= ARGV[12] then return {'token_changed'} end
end
local now = tonumber(ARGV[3])
local base = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[4] - 3)
for i = 2, 5 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
-- the same connection registered again: its earlier record is not counted below, and goes once
-- the admission is decided (a refusal keeps it)
local old = redis.call('GET', KEYS[6])
local oldRec = nil
if old and old ~= ARGV[4] then
  local raw = redis.call('GET', base .. 'ss:' .. old)
  if raw then oldRec = cjson.decode(raw) end
end
if not oldRec then old = nil end
local uses = tonumber(redis.call('GET', KEYS[7]) or '0')
if ARGV[5] ~= '' and uses >= tonumber(ARGV[5]) then return {'uses_exhausted'} end
local pubs = {}
if ARGV[8] == 'publish' then
  for _, pid in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
    if pid ~= old then pubs[#pubs + 1] = pid end
  end
end
if #pubs > 0 and ARGV[7] == 'reject' then return {'stream_taken'} end
local replaced = {}
local freed = 0
if #pubs > 0 and ARGV[7] == 'replace' then
  for _, pid in ipairs(pubs) do
    local raw = redis.call('GET', base .. 'ss:' .. pid)
    if raw then
      local rec = cjson.decode(raw)
      replaced[#replaced + 1] = rec
      if ARGV[9] ~= '' and tonumber(rec.tokenId) == tonumber(ARGV[9]) then freed = freed + 1 end
    end
  end
end
local mine = 0
if old and redis.call('ZSCORE', KEYS[3], old) then mine = 1 end
if ARGV[6] ~= '' and redis.call('ZCARD', KEYS[3]) - mine - freed >= tonumber(ARGV[6]) then return {'session_limit'} end
local gone = {'', ''}
if oldRec then
  gone = {oldRec.action, old}
  redis.call('DEL', base .. 'ss:' .. old)
  redis.call('ZREM', KEYS[2], old)
  redis.call('ZREM', base .. 'ssi:t:' .. tostring(oldRec.tokenId or 0), old)
  redis.call('ZREM', base .. 'ssi:s:' .. oldRec.streamName, old)
  redis.call('ZREM', base .. 'ssi:p:' .. oldRec.streamName, old)
end
local out = {'ok', gone[1], gone[2]}
for _, rec in ipairs(replaced) do
  rec.endedReason = 'replaced'
  rec.endedOn = ARGV[10]
  local raw = cjson.encode(rec)
  redis.call('SET', base .. 'ss:' .. rec.id, raw, 'PX', ARGV[11])
  redis.call('ZREM', KEYS[2], rec.id)
  redis.call('ZREM', KEYS[4], rec.id)
  redis.call('ZREM', KEYS[5], rec.id)
  redis.call('ZREM', base .. 'ssi:t:' .. tostring(rec.tokenId or 0), rec.id)
  out[#out + 1] = raw
end
local ttl = tonumber(ARGV[2]) - now
if ttl < 1 then ttl = 1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[6], ARGV[4], 'PX', ttl)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[4])
if ARGV[8] == 'publish' then redis.call('ZADD', KEYS[5], ARGV[2], ARGV[4]) end
if ARGV[9] ~= '' then redis.call('INCR', KEYS[7]) end
if #KEYS >= 10 then
  redis.call('SET', KEYS[9], ARGV[13], 'PX', ttl)
  -- the earlier record's gauge entry goes (its caller is this one; its action may differ)
  if gone[2] ~= '' then
    redis.call('ZREM', string.sub(KEYS[10], 1, #KEYS[10] - #ARGV[8]) .. gone[1], string.match(ARGV[14], '^(.-)\n') .. '\n' .. gone[2])
  end
  redis.call('ZADD', KEYS[10], ARGV[2], ARGV[14])
end
return out
