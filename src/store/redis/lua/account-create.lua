-- account-create: stores a new account's record and moves its version, in one step.
-- KEYS[1] the account hash (keys.account)
-- KEYS[2] the account version (keys.version)
-- ARGV[1..] field, value, field, value, ... (the whole record)
-- Replies: DONE; EXISTS when the account exists (nothing written).
--- @include "version"
if redis.call('EXISTS', KEYS[1]) == 1 then return Reply.EXISTS end
redis.call('HSET', KEYS[1], unpack(ARGV))
moveVersion(2)
return Reply.DONE
