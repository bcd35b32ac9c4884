-- secret-set: replaces (or deletes) an account's API secret hash, only if it is still the expected
-- one when an expected one is given.
-- KEYS[1] the account hash (keys.account)
-- KEYS[2] the account's audit entries, a zset (keys.auditLog)
-- KEYS[3] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] '1' when ARGV[2] must be the current hash
-- ARGV[2] the expected secretHash ('' = none)
-- ARGV[3] the new secretHash ('' = delete the secret)
-- ARGV[4] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[5] the entry's seq
-- ARGV[6] the entry's JSON, sealed
-- ARGV[7] its MAC
-- Replies: {DONE, the previous hash ('' = none)}; GONE when the account does not exist; MOVED when the
--   current hash is not the expected one; AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "audit"
if redis.call('EXISTS', KEYS[1]) == 0 then return Reply.GONE end
local cur = redis.call('HGET', KEYS[1], 'secretHash') or ''
if ARGV[1] == '1' and cur ~= ARGV[2] then return Reply.MOVED end
if not auditHeld(3, ARGV[4]) then return Reply.AUDIT_MOVED end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], 'secretHash') else redis.call('HSET', KEYS[1], 'secretHash', ARGV[3]) end
auditAppend(2, 3, ARGV[4], ARGV[5], ARGV[6], ARGV[7])
return {Reply.DONE, cur}
