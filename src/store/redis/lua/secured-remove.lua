-- secured-remove: removes the secured-stream entries of one name (exact and regex) and moves the
-- account version when any was removed.
-- KEYS[1] the account's secured streams, a hash (keys.secured)
-- KEYS[2] the account version (keys.version)
-- ARGV[1] the exact entry's field (keys.securedField)
-- ARGV[2] the regex entry's field
-- Replies: {DONE, the exact entries removed or nil, the regex entries removed or nil}.
--- @include "version"
local e = redis.call('HGET', KEYS[1], ARGV[1])
local r = redis.call('HGET', KEYS[1], ARGV[2])
if e or r then
  redis.call('HDEL', KEYS[1], ARGV[1], ARGV[2])
  moveVersion(2)
end
return {Reply.DONE, e, r}
