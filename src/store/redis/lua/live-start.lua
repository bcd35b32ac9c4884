-- live-start: records that a stream is being published. Viewers' country lists follow the
-- publishing token, so when the account has viewer-rule tokens and the stream's publishing token
-- changes (it was not live, its entry had expired, or another token published it), the account
-- version moves too: every instance's cached decisions see it at their next version read.
-- KEYS[1] the account's live streams, a hash (keys.live)
-- KEYS[2] the account version (keys.version)
-- KEYS[3] the account's viewer-rule tokens, a set (keys.securing)
-- ARGV[1] the stream name
-- ARGV[2] the entry JSON (with expiresMs)
-- ARGV[3] the publishing token's id
-- ARGV[4] now (ms)
-- Replies: {DONE, 1 when the version moved, else 0}.
--- @include "version"
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if old then
  local ok, e = pcall(cjson.decode, old)
  if ok and type(e) == 'table' and tonumber(e.tokenId) == tonumber(ARGV[3]) and tonumber(e.expiresMs or 0) > tonumber(ARGV[4]) then
    return {Reply.DONE, 0}
  end
end
if redis.call('SCARD', KEYS[3]) == 0 then return {Reply.DONE, 0} end
moveVersion(2)
return {Reply.DONE, 1}
