-- issuer-create: stores a new issuer record (revision 1) and adds it to the account's issuers.
-- KEYS[1] the issuer record "<rev>:<json>" (keys.issuer)
-- KEYS[2] the account's issuers, a zset of ids by id (keys.issuers)
-- KEYS[3] the account version (keys.version)
-- ARGV[1] the record JSON
-- ARGV[2] the id
-- Replies: DONE; EXISTS when the id is taken already (nothing written).
--- @include "version"
if redis.call('EXISTS', KEYS[1]) == 1 then return Reply.EXISTS end
redis.call('SET', KEYS[1], '1:' .. ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
moveVersion(3)
return Reply.DONE
