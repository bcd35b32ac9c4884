-- secret-cas: replaces an account's API secret hash only if it is still the one the caller read.
-- KEYS[1] account hash
-- ARGV[1] expected secretHash ('' = none), ARGV[2] new secretHash ('' = delete the secret)
-- Returns 1 when replaced, 0 when the account is gone or its secret changed meanwhile.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local cur = redis.call('HGET', KEYS[1], 'secretHash') or ''
if cur ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], 'secretHash') else redis.call('HSET', KEYS[1], 'secretHash', ARGV[2]) end
return 1
