-- webhook-delete: removes a webhook record, its deliveries log and its entry in the account's
-- webhooks, if it is still the revision the caller read (and sealed the removal of).
-- KEYS[1] the webhook record, a hash {json, rev} (keys.webhook)
-- KEYS[2] its deliveries log (keys.deliveries)
-- KEYS[3] the account's webhooks, a zset of ids by id (keys.webhooks)
-- KEYS[4] the account's audit entries, a zset (keys.auditLog)
-- KEYS[5] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the expected rev ('' = any)
-- ARGV[2] the id
-- ARGV[3] the audit head's seq the caller read ('' = the removal is not audited; lua/includes/audit.lua)
-- ARGV[4] the entry's seq
-- ARGV[5] the entry's JSON, sealed
-- ARGV[6] its MAC
-- Replies: DONE when deleted; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "audit"
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return Reply.GONE end
if ARGV[1] ~= '' and rev ~= ARGV[1] then return Reply.MOVED end
if not auditHeld(5, ARGV[3]) then return Reply.AUDIT_MOVED end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[2])
auditAppend(4, 5, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return Reply.DONE
