-- record-cas: compare-and-set of a JSON record kept as a hash {json, rev} (webhooks).
-- KEYS[1] the record hash (keys.webhook)
-- KEYS[2] the account's audit entries, a zset (keys.auditLog)
-- KEYS[3] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the expected rev
-- ARGV[2] the new JSON
-- ARGV[3] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[4] the entry's seq
-- ARGV[5] the entry's JSON, sealed
-- ARGV[6] its MAC
-- Replies: {DONE, the new rev}; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "audit"
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
if not auditHeld(3, ARGV[3]) then return Reply.AUDIT_MOVED end
local newRev = tonumber(rev) + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'rev', newRev)
auditAppend(2, 3, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return {Reply.DONE, newRev}
