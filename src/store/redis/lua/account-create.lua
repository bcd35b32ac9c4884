-- account-create: stores a new account's record and moves its version, in one step.
-- KEYS[1] the account hash (keys.account)
-- KEYS[2] the account version (keys.version)
-- KEYS[3] the account's audit entries, a zset (keys.auditLog)
-- KEYS[4] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[2] the entry's seq
-- ARGV[3] the entry's JSON, sealed
-- ARGV[4] its MAC
-- ARGV[5..] field, value, field, value, ... (the whole record)
-- Replies: DONE; EXISTS when the account exists (nothing written); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "version"
--- @include "audit"
if redis.call('EXISTS', KEYS[1]) == 1 then return Reply.EXISTS end
if not auditHeld(4, ARGV[1]) then return Reply.AUDIT_MOVED end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
moveVersion(2)
auditAppend(3, 4, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return Reply.DONE
