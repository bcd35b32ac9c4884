-- recording-start: stores a recording that began and marks it the open one of its stream and path.
-- KEYS[1] the record (keys.recording)
-- KEYS[2] the account's recordings, a zset (keys.recordings)
-- KEYS[3] the account's open recordings, a hash "<stream>\0<path>" → id (keys.openRecordings)
-- ARGV[1] the record JSON
-- ARGV[2] its id
-- ARGV[3] the open field "<stream>\0<path>"
-- Replies: DONE.
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[2])
return Reply.DONE
