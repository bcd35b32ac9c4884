-- token-update: compare-and-set of a token record (optimistic concurrency on its rev).
-- KEYS[1] the token record "<rev>:<json>" (keys.token)
-- KEYS[2] its kind's name index, a zset (keys.byName)
-- KEYS[3] its bound addresses, a zset (keys.bound)
-- KEYS[4] the account version (keys.version)
-- KEYS[5] the account's viewer-rule tokens, a set: securing tokens and viewer-country ones (keys.securing)
-- ARGV[1] the expected rev
-- ARGV[2] the new JSON
-- ARGV[3] the old name member
-- ARGV[4] the new name member
-- ARGV[5] '1' to clear the bound addresses
-- ARGV[6] '1' when it sets viewer rules
-- ARGV[7] the id
-- Replies: {DONE, the new rev}; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry).
--- @include "revision"
--- @include "version"
local rev = tokenRevision(1)
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
if ARGV[3] ~= ARGV[4] then
  redis.call('ZREM', KEYS[2], ARGV[3])
  redis.call('ZADD', KEYS[2], 0, ARGV[4])
end
local newRev = tonumber(rev) + 1
redis.call('SET', KEYS[1], newRev .. ':' .. ARGV[2])
if ARGV[5] == '1' then redis.call('DEL', KEYS[3]) end
if ARGV[6] == '1' then redis.call('SADD', KEYS[5], ARGV[7]) else redis.call('SREM', KEYS[5], ARGV[7]) end
moveVersion(4)
return {Reply.DONE, newRev}
