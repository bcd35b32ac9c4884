-- recording-delete: removes a recording, its index entry and, when it is still the open one of its
-- stream and path, that mark, in one step.
-- KEYS[1] the record (keys.recording)
-- KEYS[2] the account's recordings, a zset (keys.recordings)
-- KEYS[3] the account's open recordings, a hash "<stream>\0<path>" → id (keys.openRecordings)
-- KEYS[4] the account's audit entries, a zset (keys.auditLog)
-- KEYS[5] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the id
-- ARGV[2] the record's JSON as the caller read and sealed it ('' = not checked)
-- ARGV[3] the audit head's seq the caller read ('' = the removal is not audited; lua/includes/audit.lua)
-- ARGV[4] the entry's seq
-- ARGV[5] the entry's JSON, sealed
-- ARGV[6] its MAC
-- Replies: {DONE, the removed record's JSON}; GONE when there is none; MOVED when it is not the one
--   read (read again and retry); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "audit"
local raw = redis.call('GET', KEYS[1])
if not raw then return Reply.GONE end
if ARGV[2] ~= '' and raw ~= ARGV[2] then return Reply.MOVED end
if not auditHeld(5, ARGV[3]) then return Reply.AUDIT_MOVED end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local r = cjson.decode(raw)
local field = tostring(r.streamName) .. '\0' .. (type(r.path) == 'string' and r.path or '')
if redis.call('HGET', KEYS[3], field) == ARGV[1] then redis.call('HDEL', KEYS[3], field) end
auditAppend(4, 5, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return {Reply.DONE, raw}
