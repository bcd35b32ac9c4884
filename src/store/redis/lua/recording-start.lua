-- recording-start: stores a recording that began and marks it the open one of its stream and path.
-- KEYS[1] record {a:<account>}:rec:<id>, KEYS[2] recordings zset, KEYS[3] open recordings hash
-- ARGV[1] record JSON, ARGV[2] id, ARGV[3] open field "<stream>\0<path>"
-- Returns DONE (1).
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[2])
return 1
