-- usage-add: adds a usage report's bytes to its daily bucket, to the day's per-stream index (and
-- the account's total there), to the stream's set of tracking ids of the day, and with an hour to
-- the hourly bucket and index; counting a reportId only once.
-- KEYS[1] the daily bucket, a hash by tracking id or token id (keys.usage)
-- KEYS[2] the report's marker (keys.usageReport; any key of the slot when ARGV[1] is '0')
-- KEYS[3] the day's stream index: every stream's bytes of the day by the same fields, the account's
--   total under ARGV[11] / ARGV[12] (keys.usageStreams)
-- KEYS[4] the tracking ids with usage on the stream that day, a set (keys.usageStreamTracking; any
--   key of the slot when ARGV[8] is '0')
-- KEYS[5] the hourly bucket of the tracking id (keys.usage; any key of the slot when untracked or
--   without an hour)
-- KEYS[6] the hour's stream index (keys.usageStreams; any key of the slot when ARGV[10] is '0')
-- ARGV[1] '1' when the report has an id
-- ARGV[2] the out field "<stream>\0o"
-- ARGV[3] the in field "<stream>\0i"
-- ARGV[4] bytesOut
-- ARGV[5] bytesIn
-- ARGV[6] seconds to keep the marker
-- ARGV[7] seconds to keep the daily keys
-- ARGV[8] '1' when tracked
-- ARGV[9] the tracking id
-- ARGV[10] when the hourly keys expire (unix seconds), or '0' for no hourly counting
-- ARGV[11] the account total's out field (keys.usageTotalFields)
-- ARGV[12] the account total's in field
-- Replies: DONE when counted; EXISTS for a report counted already (nothing written).
if ARGV[1] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[6]) then return Reply.EXISTS end
end
redis.call('HINCRBY', KEYS[1], ARGV[2], ARGV[4])
redis.call('HINCRBY', KEYS[1], ARGV[3], ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('HINCRBY', KEYS[3], ARGV[2], ARGV[4])
redis.call('HINCRBY', KEYS[3], ARGV[3], ARGV[5])
redis.call('HINCRBY', KEYS[3], ARGV[11], ARGV[4])
redis.call('HINCRBY', KEYS[3], ARGV[12], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[7])
if ARGV[8] == '1' then
  redis.call('SADD', KEYS[4], ARGV[9])
  redis.call('EXPIRE', KEYS[4], ARGV[7])
end
if ARGV[10] ~= '0' then
  if ARGV[8] == '1' then
    redis.call('HINCRBY', KEYS[5], ARGV[2], ARGV[4])
    redis.call('HINCRBY', KEYS[5], ARGV[3], ARGV[5])
    redis.call('EXPIREAT', KEYS[5], ARGV[10])
  end
  redis.call('HINCRBY', KEYS[6], ARGV[2], ARGV[4])
  redis.call('HINCRBY', KEYS[6], ARGV[3], ARGV[5])
  redis.call('HINCRBY', KEYS[6], ARGV[11], ARGV[4])
  redis.call('HINCRBY', KEYS[6], ARGV[12], ARGV[5])
  redis.call('EXPIREAT', KEYS[6], ARGV[10])
end
return Reply.DONE
