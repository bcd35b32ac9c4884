-- session-touch: a re-ask of a live session moves its lastSeenOn and expiry; an ended one is
-- answered as it is.
-- KEYS[1] the registry record (keys.sessionRecord)
-- KEYS[2] the account's live sessions (keys.sessionsLive)
-- KEYS[3] its token's live sessions (keys.sessionsOfToken)
-- KEYS[4] its stream's live sessions (keys.sessionsOfStream)
-- KEYS[5] its stream's live publishers (keys.publishersOfStream)
-- KEYS[6] the caller-id pointer in the account's slot (keys.sessionPointer)
-- ARGV[1] ttl (ms)
-- ARGV[2] now (ISO)
-- ARGV[3] now (ms)
-- ARGV[4] the form the store writes: '1' rows, '0' objects (session-record)
-- Replies: {DONE, the record's text} when touched; {ENDED, the record's text} when ended; GONE when
--   unknown. A touched record is written in the store's form.
--- @include "session-record"
local raw = redis.call('GET', KEYS[1])
if not raw then return Reply.GONE end
local row = ARGV[4] == '1'
local rec = openRecord(raw, row)
if getField(rec, row, 'endedReason') then return {Reply.ENDED, raw} end
setField(rec, row, 'lastSeenOn', stamp(row, ARGV[2], ARGV[3]))
raw = cjson.encode(rec)
local expires = tonumber(ARGV[3]) + tonumber(ARGV[1])
redis.call('SET', KEYS[1], raw, 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[6], ARGV[1])
-- XX: only the indexes the session is in (a viewer is in no publishers' set); one command each
for i = 2, 5 do
  redis.call('ZADD', KEYS[i], 'XX', expires, getField(rec, row, 'id'))
end
return {Reply.DONE, raw}
