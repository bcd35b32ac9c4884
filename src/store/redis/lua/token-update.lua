-- token-update: compare-and-set of a token record (optimistic concurrency on its rev).
-- KEYS[1] the token record's bucket, a hash: field the id's remainder → "<rev>:<record>" (keys.tokenRecord)
-- KEYS[2] its kind's name index, a zset (keys.byName)
-- KEYS[3] its bound addresses, a zset (keys.bound)
-- KEYS[4] the account version (keys.version)
-- KEYS[5] the account's viewer-rule tokens, a set: securing tokens and viewer-country ones (keys.securing)
-- KEYS[6] the account's audit entries, a zset (keys.auditLog)
-- KEYS[7] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the expected rev
-- ARGV[2] the new record (token-record.ts encodeToken)
-- ARGV[3] the old name member
-- ARGV[4] the new name member
-- ARGV[5] '1' to clear the bound addresses
-- ARGV[6] '1' when it sets viewer rules
-- ARGV[7] the id
-- ARGV[8] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[9] the entry's seq
-- ARGV[10] the entry's JSON, sealed
-- ARGV[11] its MAC
-- Replies: {DONE, the new rev}; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "revision"
--- @include "version"
--- @include "audit"
local rev = tokenRecordRevision(1, ARGV[7])
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
if not auditHeld(7, ARGV[8]) then return Reply.AUDIT_MOVED end
if ARGV[3] ~= ARGV[4] then
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('ZADD', KEYS[2], 0, ARGV[4])
end
local newRev = tonumber(rev) + 1
redis.call('HSET', KEYS[1], tokenField(ARGV[7]), newRev .. ':' .. ARGV[2])
if ARGV[5] == '1' then redis.call('DEL', KEYS[3]) end
if ARGV[6] == '1' then redis.call('SADD', KEYS[5], ARGV[7]) else redis.call('SREM', KEYS[5], ARGV[7]) end
moveVersion(4)
auditAppend(6, 7, ARGV[8], ARGV[9], ARGV[10], ARGV[11])
return {Reply.DONE, newRev}
