-- session-touch: a re-ask of a live session moves its lastSeenOn and expiry; an ended one is
-- answered as it is.
-- KEYS[1] record, KEYS[2..5] the live indexes (account, token, stream, stream publishers), KEYS[6] caller-id pointer
-- ARGV[1] ttl (ms), ARGV[2] now (ISO), ARGV[3] now (ms)
-- Returns the record JSON, or false when unknown.
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local rec = cjson.decode(raw)
if rec.endedReason then return raw end
rec.lastSeenOn = ARGV[2]
raw = cjson.encode(rec)
local expires = tonumber(ARGV[3]) + tonumber(ARGV[1])
redis.call('SET', KEYS[1], raw, 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[6], ARGV[1])
for i = 2, 5 do
  if redis.call('ZSCORE', KEYS[i], rec.id) then redis.call('ZADD', KEYS[i], expires, rec.id) end
end
return raw
