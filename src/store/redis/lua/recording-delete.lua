-- recording-delete: removes a recording, its index entry and, when it is still the open one of its
-- stream and path, that mark, in one step.
-- KEYS[1] record {a:<account>}:rec:<id>, KEYS[2] recordings zset, KEYS[3] open recordings hash
-- ARGV[1] id
-- Returns the removed record's JSON, or nil when there is none.
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local r = cjson.decode(raw)
local field = tostring(r.streamName) .. '\0' .. (type(r.path) == 'string' and r.path or '')
if redis.call('HGET', KEYS[3], field) == ARGV[1] then redis.call('HDEL', KEYS[3], field) end
return raw
