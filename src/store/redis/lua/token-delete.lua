-- token-delete: removes a token record, its index entries and its bound addresses.
-- KEYS[1] record hash, KEYS[2] name index zset, KEYS[3] added index zset, KEYS[4] bound zset,
-- KEYS[5] account version, KEYS[6] securing set
-- ARGV[1] expected kind, ARGV[2] id member, ARGV[3] id
-- Returns the deleted token's value hash (to drop the lookup hint), or false when not found.
local kind = redis.call('HGET', KEYS[1], 'kind')
if kind ~= ARGV[1] then return false end
local hash = redis.call('HGET', KEYS[1], 'hash')
redis.call('ZREM', KEYS[2], redis.call('HGET', KEYS[1], 'nm'))
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('SREM', KEYS[6], ARGV[3])
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('INCR', KEYS[5])
return hash
