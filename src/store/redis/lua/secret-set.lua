-- secret-set: replaces (or deletes) an account's API secret hash, only if it is still the expected
-- one when an expected one is given.
-- KEYS[1] account hash {a:<account>}:account
-- ARGV[1] '1' when ARGV[2] must be the current hash, ARGV[2] expected secretHash ('' = none),
-- ARGV[3] new secretHash ('' = delete the secret)
-- Returns {DONE (1), the previous hash ('' = none)}; {GONE (-1), ''} when the account does not
-- exist; {MOVED (0), ''} when the current hash is not the expected one.
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, ''} end
local cur = redis.call('HGET', KEYS[1], 'secretHash') or ''
if ARGV[1] == '1' and cur ~= ARGV[2] then return {0, ''} end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], 'secretHash') else redis.call('HSET', KEYS[1], 'secretHash', ARGV[3]) end
return {1, cur}
