-- token-delete: removes a token record, its index entries and its bound addresses, if it is still
-- the revision the caller read (the caller computed the index members from that revision).
-- KEYS[1] record string "<rev>:<json>", KEYS[2] name index zset, KEYS[3] added index zset,
-- KEYS[4] bound zset, KEYS[5] account version, KEYS[6] securing set
-- ARGV[1] expected rev, ARGV[2] name member, ARGV[3] id member, ARGV[4] id
-- Returns DONE (1) when deleted, GONE (-1) when the record is gone, MOVED (0) when rev moved on
-- (re-read and retry).
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
if string.match(cur, '^(%d+):') ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('SREM', KEYS[6], ARGV[4])
redis.call('DEL', KEYS[1], KEYS[4])
redis.call('PUBLISH', KEYS[5], redis.call('INCR', KEYS[5]))
return 1
