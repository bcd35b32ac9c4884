-- token-delete: removes a token record, its index entries and its bound addresses, if it is still
-- the revision the caller read (the caller computed the index members from that revision), and
-- keeps a securing token's stream rules on the account's secured streams.
-- KEYS[1] the token record's bucket, a hash: field the id's remainder → "<rev>:<record>" (keys.tokenRecord)
-- KEYS[2] its kind's name index, a zset (keys.byName)
-- KEYS[3] its kind's added index, a zset (keys.byAdded)
-- KEYS[4] its bound addresses, a zset (keys.bound)
-- KEYS[5] the account version (keys.version)
-- KEYS[6] the account's viewer-rule tokens, a set (keys.securing)
-- KEYS[7] the account's secured streams, a hash (keys.secured)
-- KEYS[8] the account's audit entries, a zset (keys.auditLog)
-- KEYS[9] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the expected rev
-- ARGV[2] its name member
-- ARGV[3] its id member
-- ARGV[4] the id
-- ARGV[5] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[6] the entry's seq
-- ARGV[7] the entry's JSON, sealed
-- ARGV[8] its MAC
-- ARGV[9..] field, entry pairs of the secured streams it leaves (securedAfterDelete; none when it set
--   no viewer rules): each entry is appended to its field's newline-separated list
-- Replies: DONE when deleted; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "revision"
--- @include "version"
--- @include "audit"
local rev = tokenRecordRevision(1, ARGV[4])
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
if not auditHeld(9, ARGV[5]) then return Reply.AUDIT_MOVED end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('SREM', KEYS[6], ARGV[4])
redis.call('HDEL', KEYS[1], tokenField(ARGV[4]))
redis.call('DEL', KEYS[4])
for i = 9, #ARGV, 2 do
  local kept = redis.call('HGET', KEYS[7], ARGV[i])
  if kept then
    redis.call('HSET', KEYS[7], ARGV[i], kept .. '\n' .. ARGV[i + 1])
  else
    redis.call('HSET', KEYS[7], ARGV[i], ARGV[i + 1])
  end
end
moveVersion(5)
auditAppend(8, 9, ARGV[5], ARGV[6], ARGV[7], ARGV[8])
return Reply.DONE
