-- token-create: stores a new token record and adds it to the account's list indexes.
-- KEYS[1] record hash      {a:<account>}:t:<id>
-- KEYS[2] name index zset  {a:<account>}:tokens:<kind>:byName
-- KEYS[3] added index zset {a:<account>}:tokens:<kind>:byAdded
-- ARGV[1] record JSON, ARGV[2] token value hash, ARGV[3] kind, ARGV[4] name member,
-- ARGV[5] addedOn (ms), ARGV[6] id member (zero-padded id)
-- Returns 1, or 0 when the id is already taken.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[1], 'hash', ARGV[2], 'kind', ARGV[3], 'nm', ARGV[4], 'rev', 1)
redis.call('ZADD', KEYS[2], 0, ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[6])
return 1
