-- webhook-create: stores a new webhook record (revision 1) and adds it to the account's webhooks.
-- KEYS[1] the webhook record, a hash {json, rev} (keys.webhook)
-- KEYS[2] the account's webhooks, a zset of ids by id (keys.webhooks)
-- KEYS[3] the account's audit entries, a zset (keys.auditLog)
-- KEYS[4] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the record JSON
-- ARGV[2] the id
-- ARGV[3] the audit head's seq the caller read ('' = the change is not audited; lua/includes/audit.lua)
-- ARGV[4] the entry's seq
-- ARGV[5] the entry's JSON, sealed
-- ARGV[6] its MAC
-- Replies: DONE; EXISTS when the id is taken already (nothing written); AUDIT_MOVED when the account's audit head moved since it was read (nothing written).
--- @include "audit"
if redis.call('EXISTS', KEYS[1]) == 1 then return Reply.EXISTS end
if not auditHeld(4, ARGV[3]) then return Reply.AUDIT_MOVED end
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'rev', 1)
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
auditAppend(3, 4, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return Reply.DONE
