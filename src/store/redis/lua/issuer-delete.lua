-- issuer-delete: removes an issuer record and its entry in the account's issuers, if it is still the
-- revision the caller read (the caller releases its iss's claims from that revision).
-- KEYS[1] the issuer record "<rev>:<json>" (keys.issuer)
-- KEYS[2] the account's issuers, a zset of ids by id (keys.issuers)
-- KEYS[3] the account version (keys.version)
-- ARGV[1] the expected rev
-- ARGV[2] the id
-- Replies: DONE when deleted; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry).
--- @include "revision"
--- @include "version"
local rev = tokenRevision(1)
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
moveVersion(3)
return Reply.DONE
