-- account-update: sets some fields of an account's record, moves its version when any is given,
-- and answers the record as it is after the change, in one step.
-- KEYS[1] the account hash (keys.account)
-- KEYS[2] the account version (keys.version)
-- ARGV[1..] field, value, field, value, ... (possibly none)
-- Replies: {DONE, field, value, field, value, ...} (the record, as HGETALL gives it); GONE when the
--   account does not exist.
--- @include "version"
if redis.call('EXISTS', KEYS[1]) == 0 then return Reply.GONE end
if #ARGV > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
  moveVersion(2)
end
return {Reply.DONE, unpack(redis.call('HGETALL', KEYS[1]))}
