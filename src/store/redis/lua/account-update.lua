-- account-update: sets some fields of an account's record, moves its version when any is given,
-- and answers the record as it is after the change, in one step.
-- KEYS[1] the account hash (keys.account)
-- KEYS[2] the account version (keys.version)
-- KEYS[3] the account's audit entries, a zset (keys.auditLog)
-- KEYS[4] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[2] the entry's seq
-- ARGV[3] the entry's JSON, sealed
-- ARGV[4] its MAC
-- ARGV[5..] field, value, field, value, ... (possibly none)
-- Replies: {DONE, field, value, field, value, ...} (the record, as HGETALL gives it); GONE when the
--   account does not exist; AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "version"
--- @include "audit"
if redis.call('EXISTS', KEYS[1]) == 0 then return Reply.GONE end
if not auditHeld(4, ARGV[1]) then return Reply.AUDIT_MOVED end
if #ARGV > 4 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 5))
  moveVersion(2)
end
auditAppend(3, 4, ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return {Reply.DONE, unpack(redis.call('HGETALL', KEYS[1]))}
