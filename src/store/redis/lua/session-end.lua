-- session-end: ends a live session once: the record says why and when and is kept a while; it
-- leaves the live indexes. Of concurrent calls exactly one gets the record.
-- KEYS[1] record, KEYS[2..5] the live indexes (account, token, stream, stream publishers), KEYS[6] caller-id pointer
-- ARGV[1] reason, ARGV[2] now (ISO), ARGV[3] keep (ms)
-- Returns the ended record JSON, or false when unknown or already ended.
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local rec = cjson.decode(raw)
if rec.endedReason then return false end
rec.endedReason = ARGV[1]
rec.endedOn = ARGV[2]
raw = cjson.encode(rec)
redis.call('SET', KEYS[1], raw, 'PX', ARGV[3])
redis.call('PEXPIRE', KEYS[6], ARGV[3])
for i = 2, 5 do redis.call('ZREM', KEYS[i], rec.id) end
return raw
