-- token-create: stores a new token record and adds it to the account's indexes.
-- KEYS[1] the token record's bucket, a hash: field the id's remainder → "<rev>:<record>" (keys.tokenRecord)
-- KEYS[2] its kind's name index, a zset (keys.byName)
-- KEYS[3] its kind's added index, a zset (keys.byAdded)
-- KEYS[4] the account version (keys.version)
-- KEYS[5] the account's viewer-rule tokens, a set: securing tokens and viewer-country ones (keys.securing)
-- KEYS[6] the account's audit entries, a zset (keys.auditLog)
-- KEYS[7] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the record (token-record.ts encodeToken)
-- ARGV[2] its name member (keys.ts nameMember)
-- ARGV[3] addedOn (ms)
-- ARGV[4] its id member (keys.ts idMember)
-- ARGV[5] '1' when it sets viewer rules (domain/viewer-rules.ts)
-- ARGV[6] the id
-- ARGV[7] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[8] the entry's seq
-- ARGV[9] the entry's JSON, sealed
-- ARGV[10] its MAC
-- Replies: DONE; EXISTS when the id is taken already (nothing written); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "revision"
--- @include "version"
--- @include "audit"
if redis.call('HEXISTS', KEYS[1], tokenField(ARGV[6])) == 1 then return Reply.EXISTS end
if not auditHeld(7, ARGV[7]) then return Reply.AUDIT_MOVED end
redis.call('HSET', KEYS[1], tokenField(ARGV[6]), '1:' .. ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
if ARGV[5] == '1' then redis.call('SADD', KEYS[5], ARGV[6]) end
moveVersion(4)
auditAppend(6, 7, ARGV[7], ARGV[8], ARGV[9], ARGV[10])
return Reply.DONE
