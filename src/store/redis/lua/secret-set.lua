-- secret-set: replaces (or deletes) an account's API secret hash, only if it is still the expected
-- one when an expected one is given.
-- KEYS[1] the account hash (keys.account)
-- ARGV[1] '1' when ARGV[2] must be the current hash
-- ARGV[2] the expected secretHash ('' = none)
-- ARGV[3] the new secretHash ('' = delete the secret)
-- Replies: {DONE, the previous hash ('' = none)}; GONE when the account does not exist; MOVED when the
--   current hash is not the expected one.
if redis.call('EXISTS', KEYS[1]) == 0 then return Reply.GONE end
local cur = redis.call('HGET', KEYS[1], 'secretHash') or ''
if ARGV[1] == '1' and cur ~= ARGV[2] then return Reply.MOVED end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], 'secretHash') else redis.call('HSET', KEYS[1], 'secretHash', ARGV[3]) end
return {Reply.DONE, cur}
