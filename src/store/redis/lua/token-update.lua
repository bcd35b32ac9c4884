-- token-update: compare-and-set of a token record (optimistic concurrency on its rev).
-- KEYS[1] record string "<rev>:<json>", KEYS[2] name index zset, KEYS[3] bound addresses zset,
-- KEYS[4] account version, KEYS[5] viewer-rule set (securing tokens and viewer-country ones)
-- ARGV[1] expected rev, ARGV[2] new JSON, ARGV[3] old name member, ARGV[4] new name member,
-- ARGV[5] '1' to clear the bound addresses, ARGV[6] '1' when it sets viewer rules, ARGV[7] id
-- Returns the new rev; GONE (-1) when the record is gone; MOVED (0) when rev moved on (re-read and retry).
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
local rev = string.match(cur, '^(%d+):')
if rev ~= ARGV[1] then return 0 end
if ARGV[3] ~= ARGV[4] then
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('ZADD', KEYS[2], 0, ARGV[4])
end
local newRev = tonumber(rev) + 1
redis.call('SET', KEYS[1], newRev .. ':' .. ARGV[2])
if ARGV[5] == '1' then redis.call('DEL', KEYS[3]) end
if ARGV[6] == '1' then redis.call('SADD', KEYS[5], ARGV[7]) else redis.call('SREM', KEYS[5], ARGV[7]) end
redis.call('PUBLISH', KEYS[4], redis.call('INCR', KEYS[4]))
return newRev
