-- bind-address: binds a client address to a token that binds on usage, atomically.
-- KEYS[1] record string "<rev>:<json>", KEYS[2] bound addresses zset (score = binding order)
-- ARGV[1] the rev the caller decided on, ARGV[2] address, ARGV[3] limit
-- Returns 'stale' (record gone or changed), 'already', 'bound' or 'full': the rule of
-- domain/store-rules.ts bindDecision, run here so that the check and the bind are one step.
local cur = redis.call('GET', KEYS[1])
if not cur or string.match(cur, '^(%d+):') ~= ARGV[1] then return 'stale' end
if redis.call('ZSCORE', KEYS[2], ARGV[2]) then return 'already' end
local n = redis.call('ZCARD', KEYS[2])
if n >= tonumber(ARGV[3]) then return 'full' end
redis.call('ZADD', KEYS[2], n + 1, ARGV[2])
return 'bound'
