-- issuer-update: compare-and-set of an issuer record (optimistic concurrency on its rev).
-- KEYS[1] the issuer record "<rev>:<json>" (keys.issuer)
-- KEYS[2] the account version (keys.version)
-- KEYS[3] the account's audit entries, a zset (keys.auditLog)
-- KEYS[4] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the expected rev
-- ARGV[2] the new JSON
-- ARGV[3] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[4] the entry's seq
-- ARGV[5] the entry's JSON, sealed
-- ARGV[6] its MAC
-- Replies: {DONE, the new rev}; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "revision"
--- @include "version"
--- @include "audit"
local rev = recordRevision(1)
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
if not auditHeld(4, ARGV[3]) then return Reply.AUDIT_MOVED end
local newRev = tonumber(rev) + 1
redis.call('SET', KEYS[1], newRev .. ':' .. ARGV[2])
moveVersion(2)
auditAppend(3, 4, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return {Reply.DONE, newRev}
