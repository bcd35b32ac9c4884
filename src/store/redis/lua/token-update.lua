-- token-update: compare-and-set of a token record (optimistic concurrency on `rev`).
-- KEYS[1] record hash, KEYS[2] name index zset, KEYS[3] bound addresses zset,
-- KEYS[4] account version, KEYS[5] securing set
-- ARGV[1] expected rev, ARGV[2] new JSON, ARGV[3] new token value hash, ARGV[4] new name member,
-- ARGV[5] '1' to clear the bound addresses, ARGV[6] '1' when it secures viewing, ARGV[7] id
-- Returns the new rev; -1 when the record is gone; 0 when rev moved on (re-read and retry).
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return -1 end
if rev ~= ARGV[1] then return 0 end
local oldName = redis.call('HGET', KEYS[1], 'nm')
if oldName ~= ARGV[4] then
  redis.call('ZREM', KEYS[2], oldName)
  redis.call('ZADD', KEYS[2], 0, ARGV[4])
end
local newRev = tonumber(rev) + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'hash', ARGV[3], 'nm', ARGV[4], 'rev', newRev)
if ARGV[5] == '1' then redis.call('DEL', KEYS[3]) end
if ARGV[6] == '1' then redis.call('SADD', KEYS[5], ARGV[7]) else redis.call('SREM', KEYS[5], ARGV[7]) end
redis.call('INCR', KEYS[4])
return newRev
