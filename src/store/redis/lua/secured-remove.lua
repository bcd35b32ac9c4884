-- secured-remove: removes the secured-stream entries of one name (exact and regex) and moves the
-- account version when any was removed.
-- KEYS[1] the account's secured streams, a hash (keys.secured)
-- KEYS[2] the account version (keys.version)
-- KEYS[3] the account's audit entries, a zset (keys.auditLog)
-- KEYS[4] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the exact entry's field (keys.securedField)
-- ARGV[2] the regex entry's field
-- ARGV[3] the audit head's seq the caller read ('' = the removal is not audited; lua/includes/audit.lua)
-- ARGV[4] the entry's seq
-- ARGV[5] the entry's JSON, sealed
-- ARGV[6] its MAC
-- ARGV[7] the entries the caller read and sealed: the exact ones, a newline, the regex ones ('' when
--   not audited)
-- Replies: {DONE, the exact entries removed or nil, the regex entries removed or nil};
--   AUDIT_MOVED when the account's audit head moved since it was read (nothing written), or the entries are no longer those read.
--- @include "version"
--- @include "audit"
local e = redis.call('HGET', KEYS[1], ARGV[1])
local r = redis.call('HGET', KEYS[1], ARGV[2])
if e or r then
  if ARGV[7] ~= '' and ((e or '') .. '\n' .. (r or '') ~= ARGV[7] or not auditHeld(4, ARGV[3])) then return Reply.AUDIT_MOVED end
  redis.call('HDEL', KEYS[1], ARGV[1], ARGV[2])
  moveVersion(2)
  auditAppend(3, 4, ARGV[3], ARGV[4], ARGV[5], ARGV[6])
end
return {Reply.DONE, e, r}
