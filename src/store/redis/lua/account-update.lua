-- account-update: sets some fields of an account's record, moves its version when any is given,
-- and answers the record as it is after the change, in one step.
-- KEYS[1] account hash {a:<account>}:account, KEYS[2] account version {a:<account>}:ver
-- ARGV field, value, field, value, ... (possibly none)
-- Returns the record (HGETALL), or nil when the account does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if #ARGV > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
  redis.call('PUBLISH', KEYS[2], redis.call('INCR', KEYS[2]))
end
return redis.call('HGETALL', KEYS[1])
