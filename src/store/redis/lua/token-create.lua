-- token-create: stores a new token record and adds it to the account's indexes.
-- KEYS[1] the token record "<rev>:<json>" (keys.token)
-- KEYS[2] its kind's name index, a zset (keys.byName)
-- KEYS[3] its kind's added index, a zset (keys.byAdded)
-- KEYS[4] the account version (keys.version)
-- KEYS[5] the account's viewer-rule tokens, a set: securing tokens and viewer-country ones (keys.securing)
-- ARGV[1] the record JSON (compact)
-- ARGV[2] its name member (keys.ts nameMember)
-- ARGV[3] addedOn (ms)
-- ARGV[4] its id member (keys.ts idMember)
-- ARGV[5] '1' when it sets viewer rules (domain/viewer-rules.ts)
-- ARGV[6] the id
-- Replies: DONE; EXISTS when the id is taken already (nothing written).
--- @include "version"
if redis.call('EXISTS', KEYS[1]) == 1 then return Reply.EXISTS end
redis.call('SET', KEYS[1], '1:' .. ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
if ARGV[5] == '1' then redis.call('SADD', KEYS[5], ARGV[6]) end
moveVersion(4)
return Reply.DONE
