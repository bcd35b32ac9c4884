-- session-touch-many: session-touch for many sessions of one account in one call (a viewer-session
-- round): each live session's lastSeenOn and expiry move, an ended or unknown one is answered as it
-- is. Every live index hears one ZADD for all its sessions, not one per session.
-- KEYS[1] the account's live sessions (keys.sessionsLive)
-- KEYS[2..] first the token, stream and stream-publisher indexes the sessions are in, each once,
--   ARGV[2] of them (keys.sessionsOfToken, keys.sessionsOfStream, keys.publishersOfStream); then
--   per session two: its record (keys.sessionRecord) and its caller-id pointer in the account's
--   slot (keys.sessionPointer)
-- ARGV[1] ttl (ms)
-- ARGV[2] how many index keys follow KEYS[1]
-- ARGV[3] the form the store writes: '1' rows, '0' objects (session-record)
-- ARGV[4..] per session five: now (ISO), now (ms), the KEYS positions of its token's, its stream's
--   and its stream's publishers' live sessions
-- Replies: {DONE, one answer per session, in order: the record's text, touched, or as it is when
--   ended (its endedReason set); false when unknown}. A touched record is written in the store's form.
--- @include "session-record"
local ttl = tonumber(ARGV[1])
local row = ARGV[3] == '1'
local first = tonumber(ARGV[2]) + 2
local sessions = (#KEYS - first + 1) / 2
local out = {}
-- by KEYS position: the score and member pairs its ZADD takes
local pairsOf = {}
local positions = {}
local function add(pos, expires, id)
  local list = pairsOf[pos]
  if not list then
    list = {}
    pairsOf[pos] = list
    positions[#positions + 1] = pos
  end
  list[#list + 1] = expires
  list[#list + 1] = id
end
for i = 0, sessions - 1 do
  local record = first + 2 * i
  local arg = 4 + 5 * i
  local raw = redis.call('GET', KEYS[record])
  if not raw then
    out[#out + 1] = false
  else
    local rec = openRecord(raw, row)
    if getField(rec, row, 'endedReason') then
      out[#out + 1] = raw
    else
      setField(rec, row, 'lastSeenOn', stamp(row, ARGV[arg], ARGV[arg + 1]))
      raw = cjson.encode(rec)
      local expires = tonumber(ARGV[arg + 1]) + ttl
      redis.call('SET', KEYS[record], raw, 'PX', ttl)
      redis.call('PEXPIRE', KEYS[record + 1], ttl)
      local id = getField(rec, row, 'id')
      add(1, expires, id)
      for k = 2, 4 do add(tonumber(ARGV[arg + k]), expires, id) end
      out[#out + 1] = raw
    end
  end
end
-- XX: only the indexes a session is in (a viewer is in no publishers' set)
for _, pos in ipairs(positions) do
  redis.call('ZADD', KEYS[pos], 'XX', unpack(pairsOf[pos]))
end
return {Reply.DONE, out}
