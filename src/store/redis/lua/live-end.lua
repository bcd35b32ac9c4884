-- live-end: removes a stream's live entry if it is still the one the caller read, and moves the
-- account version when the account has viewer-rule tokens (viewers' country lists follow the
-- publishing token; see live-start.lua).
-- KEYS[1] the account's live streams, a hash (keys.live)
-- KEYS[2] the account version (keys.version)
-- KEYS[3] the account's viewer-rule tokens, a set (keys.securing)
-- ARGV[1] the stream name
-- ARGV[2] its entry as read
-- Replies: DONE when removed; MOVED when the entry is gone or is another one than the one read.
--- @include "version"
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return Reply.MOVED end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('SCARD', KEYS[3]) > 0 then moveVersion(2) end
return Reply.DONE
