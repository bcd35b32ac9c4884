-- live-start: records that a stream is being published. Viewers' country lists follow the
-- publishing token, so when the account has viewer-rule tokens and the stream's publishing token
-- changes (it was not live, its entry had expired, or another token published it), the account
-- version moves too: every instance's cached decisions see it at their next version read.
-- KEYS[1] live hash {a:<account>}:live, KEYS[2] account version, KEYS[3] viewer-rule token set
-- ARGV[1] stream name, ARGV[2] entry JSON (with expiresMs), ARGV[3] token id, ARGV[4] now (ms)
-- Returns 1 when the version moved, else 0.
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if old then
  local ok, e = pcall(cjson.decode, old)
  if ok and type(e) == 'table' and tonumber(e.tokenId) == tonumber(ARGV[3]) and tonumber(e.expiresMs or 0) > tonumber(ARGV[4]) then
    return 0
  end
end
if redis.call('SCARD', KEYS[3]) == 0 then return 0 end
redis.call('PUBLISH', KEYS[2], redis.call('INCR', KEYS[2]))
return 1
