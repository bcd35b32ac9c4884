-- record-cas: compare-and-set of a JSON record kept as a hash {json, rev} (webhooks, recordings).
-- KEYS[1] record hash
-- ARGV[1] expected rev, ARGV[2] new JSON
-- Returns the new rev; GONE (-1) when the record is gone; MOVED (0) when rev moved on (re-read and retry).
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return -1 end
if rev ~= ARGV[1] then return 0 end
local newRev = tonumber(rev) + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'rev', newRev)
return newRev
