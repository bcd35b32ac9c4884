-- token-create: stores a new token record and adds it to the account's indexes.
-- KEYS[1] record string      {a:<account>}:t:<id>
-- KEYS[2] name index zset    {a:<account>}:tokens:<kind>:byName
-- KEYS[3] added index zset   {a:<account>}:tokens:<kind>:byAdded
-- KEYS[4] account version    {a:<account>}:ver
-- KEYS[5] viewer-rule set    {a:<account>}:securing (securing tokens and viewer-country ones)
-- ARGV[1] record JSON (compact), ARGV[2] name member, ARGV[3] addedOn (ms),
-- ARGV[4] id member (zero-padded id), ARGV[5] '1' when it sets viewer rules (domain/viewer-rules.ts), ARGV[6] id
-- Returns DONE (1), or EXISTS (-2) when the id is already taken.
if redis.call('EXISTS', KEYS[1]) == 1 then return -2 end
redis.call('SET', KEYS[1], '1:' .. ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
if ARGV[5] == '1' then redis.call('SADD', KEYS[5], ARGV[6]) end
redis.call('PUBLISH', KEYS[4], redis.call('INCR', KEYS[4]))
return 1
