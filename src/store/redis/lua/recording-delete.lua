-- recording-delete: removes a recording, its index entry and, when it is still the open one of its
-- stream and path, that mark, in one step.
-- KEYS[1] the record (keys.recording)
-- KEYS[2] the account's recordings, a zset (keys.recordings)
-- KEYS[3] the account's open recordings, a hash "<stream>\0<path>" → id (keys.openRecordings)
-- ARGV[1] the id
-- Replies: {DONE, the removed record's JSON}; GONE when there is none.
local raw = redis.call('GET', KEYS[1])
if not raw then return Reply.GONE end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local r = cjson.decode(raw)
local field = tostring(r.streamName) .. '\0' .. (type(r.path) == 'string' and r.path or '')
if redis.call('HGET', KEYS[3], field) == ARGV[1] then redis.call('HDEL', KEYS[3], field) end
return {Reply.DONE, raw}
