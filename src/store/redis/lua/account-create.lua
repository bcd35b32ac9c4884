-- account-create: stores a new account's record and moves its version, in one step.
-- KEYS[1] account hash {a:<account>}:account, KEYS[2] account version {a:<account>}:ver
-- ARGV field, value, field, value, ... (the whole record)
-- Returns DONE (1), or EXISTS (-2) when the account exists (nothing written).
if redis.call('EXISTS', KEYS[1]) == 1 then return -2 end
redis.call('HSET', KEYS[1], unpack(ARGV))
redis.call('PUBLISH', KEYS[2], redis.call('INCR', KEYS[2]))
return 1
