-- live-end: removes a stream's live entry if it is still the one the caller read, and moves the
-- account version when the account has viewer-rule tokens (viewers' country lists follow the
-- publishing token; see live-start.lua).
-- KEYS[1] live hash {a:<account>}:live, KEYS[2] account version, KEYS[3] viewer-rule token set
-- ARGV[1] stream name, ARGV[2] the entry as read
-- Returns 1 when removed, else 0.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('SCARD', KEYS[3]) > 0 then redis.call('PUBLISH', KEYS[2], redis.call('INCR', KEYS[2])) end
return 1
