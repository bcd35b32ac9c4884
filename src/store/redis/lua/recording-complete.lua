-- recording-complete: writes a completed recording if the open recording of its stream and path is
-- still the one the caller read (the caller merged it: domain/store-rules.ts completedRecording).
-- KEYS[1] the account's open recordings, a hash "<stream>\0<path>" → id (keys.openRecordings)
-- KEYS[2] the record written: the open one's, or a new id's (keys.recording)
-- KEYS[3] the account's recordings, a zset (keys.recordings)
-- ARGV[1] the open field "<stream>\0<path>"
-- ARGV[2] the open id read ('' = none was open)
-- ARGV[3] the open record read ('' = none)
-- ARGV[4] the completed record JSON
-- ARGV[5] its id
-- Replies: DONE; MOVED when the open recording changed since it was read (read again).
local openId = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if openId ~= ARGV[2] then return Reply.MOVED end
if ARGV[2] ~= '' then
  if (redis.call('GET', KEYS[2]) or '') ~= ARGV[3] then return Reply.MOVED end
  redis.call('HDEL', KEYS[1], ARGV[1])
end
redis.call('SET', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[5])
return Reply.DONE
