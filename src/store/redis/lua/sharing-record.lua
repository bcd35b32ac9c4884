-- sharing-record: records uses of a credential and answers its uses within the window, newest
-- first (store/sharing.ts recordSharing; docs/api.md#token-sharing).
-- KEYS[1] the credential's uses, a hash address → the use's JSON (keys.sharingUses)
-- KEYS[2] the time of each address's last use, a zset (keys.sharingTimes)
-- ARGV[1] now (ms)
-- ARGV[2] the window (ms): both keys expire with it
-- ARGV[3] the most addresses kept (the oldest dropped)
-- ARGV[4..] per use: address, time (ms), JSON
-- Replies: {DONE, the JSON of every use kept, newest first...}.
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
for i = 4, #ARGV, 3 do
  local held = redis.call('ZSCORE', KEYS[2], ARGV[i])
  if not held or tonumber(held) < tonumber(ARGV[i + 1]) then
    redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
  end
end
local since = '(' .. tostring(now - window)
for _, ip in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', since)) do redis.call('HDEL', KEYS[1], ip) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', since)
local n = redis.call('ZCARD', KEYS[2])
if n > max then
  for _, ip in ipairs(redis.call('ZRANGE', KEYS[2], 0, n - max - 1)) do redis.call('HDEL', KEYS[1], ip) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, n - max - 1)
end
if redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  return {Reply.DONE}
end
redis.call('PEXPIRE', KEYS[1], window)
redis.call('PEXPIRE', KEYS[2], window)
return {Reply.DONE, unpack(redis.call('HMGET', KEYS[1], unpack(redis.call('ZRANGE', KEYS[2], 0, -1, 'REV'))))}
