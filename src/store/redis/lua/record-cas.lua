-- record-cas: compare-and-set of a JSON record kept as a hash {json, rev} (webhooks).
-- KEYS[1] the record hash (keys.webhook)
-- ARGV[1] the expected rev
-- ARGV[2] the new JSON
-- Replies: {DONE, the new rev}; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry).
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
local newRev = tonumber(rev) + 1
redis.call('HSET', KEYS[1], 'json', ARGV[2], 'rev', newRev)
return {Reply.DONE, newRev}
