-- issuer-update: compare-and-set of an issuer record (optimistic concurrency on its rev).
-- KEYS[1] the issuer record "<rev>:<json>" (keys.issuer)
-- KEYS[2] the account version (keys.version)
-- ARGV[1] the expected rev
-- ARGV[2] the new JSON
-- Replies: {DONE, the new rev}; GONE when the record is gone; MOVED when its rev moved on (read again
--   and retry).
--- @include "revision"
--- @include "version"
local rev = tokenRevision(1)
if not rev then return Reply.GONE end
if rev ~= ARGV[1] then return Reply.MOVED end
local newRev = tonumber(rev) + 1
redis.call('SET', KEYS[1], newRev .. ':' .. ARGV[2])
moveVersion(2)
return {Reply.DONE, newRev}
