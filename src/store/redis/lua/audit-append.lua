-- audit-append: appends one sealed entry to an account's audit chain on its own (a change the
-- store does not hold, such as a session cut; docs/api.md#audit-log).
-- KEYS[1] the account's audit entries, a zset (keys.auditLog)
-- KEYS[2] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the audit head's seq the caller read ('' = the entry is not audited; lua/includes/audit.lua)
-- ARGV[2] the entry's seq
-- ARGV[3] the entry's JSON, sealed
-- ARGV[4] its MAC
-- Replies: DONE; AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "audit"
if not auditHeld(2, ARGV[1]) then return Reply.AUDIT_MOVED end
auditAppend(1, 2, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return Reply.DONE
