-- bind-address: binds a client address to a token that binds on usage, atomically: the rule of
-- domain/store-rules.ts bindDecision, run here so that the check and the bind are one step.
-- KEYS[1] the token record's bucket (keys.tokenRecord)
-- KEYS[2] its bound addresses, a zset scored by binding order (keys.bound)
-- ARGV[1] the revision the caller decided on
-- ARGV[2] the address
-- ARGV[3] how many addresses the token binds (bindIpsOnUsage)
-- ARGV[4] the token id
-- Replies: DONE when bound now; EXISTS when bound already; FULL when the limit is reached; GONE (the
--   token is gone) or MOVED (it is at another revision), both 'stale' to the caller.
--- @include "revision"
local rev = tokenRecordRevision(1, ARGV[4])
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
if redis.call('ZSCORE', KEYS[2], ARGV[2]) then return Reply.EXISTS end
local n = redis.call('ZCARD', KEYS[2])
if n >= tonumber(ARGV[3]) then return Reply.FULL end
redis.call('ZADD', KEYS[2], n + 1, ARGV[2])
return Reply.DONE
