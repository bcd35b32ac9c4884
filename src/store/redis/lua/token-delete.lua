-- token-delete: removes a token record, its index entries and its bound addresses, if it is still
-- the revision the caller read (the caller computed the index members from that revision), and
-- keeps a securing token's stream rules on the account's secured streams.
-- KEYS[1] record string "<rev>:<json>", KEYS[2] name index zset, KEYS[3] added index zset,
-- KEYS[4] bound zset, KEYS[5] account version, KEYS[6] securing set, KEYS[7] secured-streams hash
-- ARGV[1] expected rev, ARGV[2] name member, ARGV[3] id member, ARGV[4] id,
-- ARGV[5..] field, entry pairs of the secured streams it leaves (securedAfterDelete; none when it set no
-- viewer rules): each entry is appended to its field's newline-separated list
-- Returns DONE (1) when deleted, GONE (-1) when the record is gone, MOVED (0) when rev moved on
-- (re-read and retry).
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
if string.match(cur, '^(%d+):') ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('SREM', KEYS[6], ARGV[4])
redis.call('DEL', KEYS[1], KEYS[4])
for i = 5, #ARGV, 2 do
  local kept = redis.call('HGET', KEYS[7], ARGV[i])
  if kept then
    redis.call('HSET', KEYS[7], ARGV[i], kept .. '\n' .. ARGV[i + 1])
  else
    redis.call('HSET', KEYS[7], ARGV[i], ARGV[i + 1])
  end
end
redis.call('PUBLISH', KEYS[5], redis.call('INCR', KEYS[5]))
return 1
