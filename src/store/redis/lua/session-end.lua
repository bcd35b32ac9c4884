-- session-end: ends a live session once: the record says why and when and is kept a while; it
-- leaves the live indexes. Of concurrent calls exactly one gets the record.
-- KEYS[1] the registry record (keys.sessionRecord)
-- KEYS[2] the account's live sessions (keys.sessionsLive)
-- KEYS[3] its token's live sessions (keys.sessionsOfToken)
-- KEYS[4] its stream's live sessions (keys.sessionsOfStream)
-- KEYS[5] its stream's live publishers (keys.publishersOfStream)
-- KEYS[6] the caller-id pointer in the account's slot (keys.sessionPointer)
-- ARGV[1] the reason
-- ARGV[2] now (ISO)
-- ARGV[3] how long the ended record is kept (ms)
-- ARGV[4] now (ms)
-- ARGV[5] the form the store writes: '1' rows, '0' objects (session-record)
-- Replies: {DONE, the ended record's text}; GONE when unknown; ENDED when ended already. The ended
--   record is written in the store's form.
--- @include "session-indexes"
--- @include "session-record"
local raw = redis.call('GET', KEYS[1])
if not raw then return Reply.GONE end
local rec = decodeRecord(raw)
if rec.endedReason then return Reply.ENDED end
raw = endRecord(1, rec, ARGV[5] == '1', ARGV[1], ARGV[2], ARGV[4], ARGV[3])
redis.call('PEXPIRE', KEYS[6], ARGV[3])
unindex(rec.id, {2, 3, 4, 5})
return {Reply.DONE, raw}
