-- token-create: stores a new token record and adds it to the account's indexes.
-- KEYS[1] record hash        {a:<account>}:t:<id>
-- KEYS[2] name index zset    {a:<account>}:tokens:<kind>:byName
-- KEYS[3] added index zset   {a:<account>}:tokens:<kind>:byAdded
-- KEYS[4] account version    {a:<account>}:ver
-- KEYS[5] securing set       {a:<account>}:securing
-- ARGV[1] record JSON, ARGV[2] token value hash, ARGV[3] kind, ARGV[4] name member,
-- ARGV[5] addedOn (ms), ARGV[6] id member (zero-padded id), ARGV[7] '1' when it secures viewing,
-- ARGV[8] id
-- Returns 1, or 0 when the id is already taken.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'hash', ARGV[2], 'kind', ARGV[3], 'nm', ARGV[4], 'rev', 1)
redis.call('ZADD', KEYS[2], 0, ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
if ARGV[7] == '1' then redis.call('SADD', KEYS[5], ARGV[8]) end
redis.call('INCR', KEYS[4])
return 1
