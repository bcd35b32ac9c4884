-- session-admit: registers a session if the token's limits allow it, in one atomic step (the rule
-- is admissionStep in domain/store-rules.ts, mirrored here where it must run to stay exact). A
-- registration replaces the connection's earlier record, and with publish conflict 'replace' ends
-- the stream's other publishers: their keys are named by ids only this script can read, so the
-- caller passes those it knows and the script asks for the others (NEEDS_KEYS) before writing
-- anything (docs/architecture.md#redis-scripts).
-- KEYS[1] the new registry record (keys.sessionRecord)
-- KEYS[2] the account's live sessions (keys.sessionsLive)
-- KEYS[3] the token's live sessions (keys.sessionsOfToken)
-- KEYS[4] the stream's live sessions (keys.sessionsOfStream)
-- KEYS[5] the stream's live publishers (keys.publishersOfStream)
-- KEYS[6] the caller-id pointer in the account's slot, → registry id (keys.sessionPointer)
-- KEYS[7] the token's use count (keys.tokenUses)
-- KEYS[8] the token record's bucket (keys.tokenRecord; the token of ARGV[9])
-- KEYS[9..] as ARGV[13], ARGV[17] and ARGV[21..] say, in this order:
--   on one Redis server (ARGV[13] '1'; not on a Cluster, where these live in other slots): the
--     connection's pointer (keys.session), the gauge of subscribers and the gauge of publishers of
--     the caller (keys.sessionCountOf with 'subscribe', then 'publish');
--   for the earlier record ARGV[17] names: its record (keys.sessionRecord), then, unless ARGV[18]
--     is '=', its token's, its stream's and its stream's publishers' live sessions
--     (keys.sessionsOfToken, keys.sessionsOfStream, keys.publishersOfStream);
--   for each publisher ARGV[21..] names: its record (keys.sessionRecord) and its token's live
--     sessions (keys.sessionsOfToken).
-- ARGV[1] the record's text, in the form the store writes (session-record); replaced publishers'
--   records are written in the same form
-- ARGV[2] its expiry (ms)
-- ARGV[3] now (ms)
-- ARGV[4] its registry id
-- ARGV[5] maxUses ('' = none)
-- ARGV[6] maxConcurrent ('' = none)
-- ARGV[7] publish conflict ('' | reject | replace)
-- ARGV[8] the action (subscribe | publish)
-- ARGV[9] the token id ('' = none)
-- ARGV[10] now (ISO)
-- ARGV[11] how long an ended record is kept (ms)
-- ARGV[12] the token revision the decision was made on ('' = not checked)
-- ARGV[13] '1' on one Redis server (the pointer and gauge keys are given), else '0'
-- ARGV[14] the pointer JSON (one Redis server; '' = the connection has no pointer outside the
--   account's slot: an HTTP viewer, found through its account only)
-- ARGV[15] the gauge member "<account>\n<id>" (one Redis server)
-- ARGV[16] '1' when the registry id is the connection's own caller id (an HTTP viewer's): no pointer
--   is kept (KEYS[6] is neither read nor written), and the connection's earlier record is KEYS[1]
--   itself, overwritten in place; else '0'
-- ARGV[17] the id of an earlier record of the connection whose keys are given ('' = none)
-- ARGV[18] its token id (0 = none), whose index is given; '=': this admission's token and stream,
--   whose indexes are KEYS[3..5] (a connection re-registered as it was: one key more, not four)
-- ARGV[19] its stream name, whose indexes are given
-- ARGV[20] its gauge member
-- ARGV[21..] publisher id, its token id (0 = none), ...: publishers whose keys are given
-- Replies: {DONE, the action of the connection's earlier record or '', its id or '', the replaced
--   publisher records' text, each in its form...}; TOKEN_CHANGED, USES_EXHAUSTED, STREAM_TAKEN or SESSION_LIMIT, a
--   refusal (nothing registered); {NEEDS_KEYS, the earlier record's id or '', publisher ids...}: the
--   keys of those records (and of their token's and stream's indexes) are missing or were given for
--   another token or stream, nothing written: call again with them.
--- @include "revision"
--- @include "session-indexes"
--- @include "session-record"

-- First, before any write: the token must still be at the decision's revision (tokenUnchanged).
if ARGV[12] ~= '' and tokenRecordRevision(8, ARGV[9]) ~= ARGV[12] then return Reply.TOKEN_CHANGED end
local now = tonumber(ARGV[3])
local standalone = ARGV[13] == '1'
local selfNamed = ARGV[16] == '1'
-- where the keys given for other records are: the earlier record's first, then each publisher's
local at = standalone and 12 or 9
local earlierAt = nil
local earlierIndexes = nil
local earlierToken = tonumber(ARGV[18])
if ARGV[17] ~= '' then
  earlierAt = at
  if ARGV[18] == '=' then
    earlierIndexes = {3, 4, 5}
    earlierToken = tonumber(ARGV[9]) or 0
    at = at + 1
  else
    earlierIndexes = {at + 1, at + 2, at + 3}
    at = at + 4
  end
end
local publisherAt = {}
local publisherToken = {}
for i = 21, #ARGV, 2 do
  publisherAt[ARGV[i]] = at
  publisherToken[ARGV[i]] = tonumber(ARGV[i + 1])
  at = at + 2
end
-- whether keys given for `tokenId` and `streamName` are a record's own
local function indexedAs(rec, tokenId, streamName)
  return (tonumber(rec.tokenId) or 0) == tokenId and (streamName == nil or rec.streamName == streamName)
end

local uses = tonumber(redis.call('GET', KEYS[7]) or '0')
if ARGV[5] ~= '' and uses >= tonumber(ARGV[5]) then
  pruneIndexes(2, 5, now)
  return Reply.USES_EXHAUSTED
end
-- the same connection registered again: its earlier record is not counted below, and goes once
-- the admission is decided (a refusal keeps it)
local old = not selfNamed and redis.call('GET', KEYS[6])
if old == ARGV[4] then old = false end
local oldRec = nil
local needEarlier = false
if old then
  if old ~= ARGV[17] then
    needEarlier = true
  else
    local raw = redis.call('GET', KEYS[earlierAt])
    if raw then
      oldRec = decodeRecord(raw)
      needEarlier = not indexedAs(oldRec, earlierToken, ARGV[19])
    end
  end
end
-- the earlier record is not a publisher this one conflicts with (when it is still unread, taken to
-- be one: the next call decides)
local earlierId = selfNamed and ARGV[4] or ((oldRec or needEarlier) and old or nil)
local pubs = {}
if ARGV[8] == 'publish' then
  for _, pid in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '(' .. ARGV[3], '+inf')) do
    if pid ~= earlierId then pubs[#pubs + 1] = pid end
  end
end
if #pubs > 0 and ARGV[7] == 'reject' then
  pruneIndexes(2, 5, now)
  return Reply.STREAM_TAKEN
end
local replaced = {}
local freed = 0
local needPublishers = {}
if #pubs > 0 and ARGV[7] == 'replace' then
  for _, pid in ipairs(pubs) do
    local k = publisherAt[pid]
    local raw = k and redis.call('GET', KEYS[k])
    if not k then
      needPublishers[#needPublishers + 1] = pid
    elseif raw then
      local rec = decodeRecord(raw)
      if not indexedAs(rec, publisherToken[pid], nil) then
        needPublishers[#needPublishers + 1] = pid
      else
        replaced[#replaced + 1] = {rec = rec, at = k}
        if ARGV[9] ~= '' and tonumber(rec.tokenId) == tonumber(ARGV[9]) then freed = freed + 1 end
      end
    end
  end
end
if needEarlier or #needPublishers > 0 then
  return {Reply.NEEDS_KEYS, needEarlier and old or '', unpack(needPublishers)}
end

pruneIndexes(2, 5, now)
local mine = 0
if (oldRec or selfNamed) and redis.call('ZSCORE', KEYS[3], earlierId) then mine = 1 end
if ARGV[6] ~= '' and redis.call('ZCARD', KEYS[3]) - mine - freed >= tonumber(ARGV[6]) then return Reply.SESSION_LIMIT end
local gone = {'', ''}
if oldRec then
  gone = {oldRec.action, old}
  redis.call('DEL', KEYS[earlierAt])
  unindex(old, {2, earlierIndexes[1], earlierIndexes[2], earlierIndexes[3]})
end
local ended = {}
-- a row starts with '['
local rows = string.byte(ARGV[1], 1) == 91
for _, r in ipairs(replaced) do
  ended[#ended + 1] = endRecord(r.at, r.rec, rows, 'replaced', ARGV[10], ARGV[3], ARGV[11])
  unindex(r.rec.id, {2, 4, 5, r.at + 1})
end
local ttl = tonumber(ARGV[2]) - now
if ttl < 1 then ttl = 1 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
if not selfNamed then redis.call('SET', KEYS[6], ARGV[4], 'PX', ttl) end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[4])
if ARGV[8] == 'publish' then redis.call('ZADD', KEYS[5], ARGV[2], ARGV[4]) end
if ARGV[9] ~= '' then redis.call('INCR', KEYS[7]) end
if standalone then
  -- the gauge of each action: the earlier record's entry goes (its caller is this one; its action
  -- may differ), this one's comes
  local gauge = {subscribe = 10, publish = 11}
  if ARGV[14] ~= '' then redis.call('SET', KEYS[9], ARGV[14], 'PX', ttl) end
  if oldRec then redis.call('ZREM', KEYS[gauge[oldRec.action]], ARGV[20]) end
  redis.call('ZADD', KEYS[gauge[ARGV[8]]], ARGV[2], ARGV[15])
end
return {Reply.DONE, gone[1], gone[2], unpack(ended)}
