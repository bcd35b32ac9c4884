-- usage-add: adds a usage report's bytes to its daily bucket, to the day's per-stream index (and
-- the account's total there), to the stream's set of tracking ids of the day, and with an hour to
-- the hourly bucket and index; counting a reportId only once.
-- KEYS[1] bucket hash   {a:<account>}:u:<t|k>:<trackingId|tokenId>:<day>
-- KEYS[2] report marker {a:<account>}:ur:<reportId> (any key of the slot when ARGV[1] is '0')
-- KEYS[3] stream index  {a:<account>}:u:s:<day> (every stream's bytes of the day, by the same
--         fields; the account's total under ARGV[11] / ARGV[12])
-- KEYS[4] tracking set  {a:<account>}:u:st:<day>:<stream> (the tracking ids with usage on the stream
--         that day; any key of the slot when ARGV[8] is '0')
-- KEYS[5] hourly bucket {a:<account>}:u:t:<trackingId>:<hour> (any key of the slot when untracked or no hour)
-- KEYS[6] hourly index  {a:<account>}:u:s:<hour> (any key of the slot when ARGV[10] is '0')
-- ARGV[1] '1' when the report has an id, ARGV[2] out field, ARGV[3] in field, ARGV[4] bytesOut,
-- ARGV[5] bytesIn, ARGV[6] seconds to keep the marker, ARGV[7] seconds to keep the daily keys,
-- ARGV[8] '1' when tracked, ARGV[9] the tracking id, ARGV[10] when the hourly keys expire (unix
-- seconds) or '0' for no hourly counting, ARGV[11] / ARGV[12] the account total's out / in field.
-- Returns 1 when counted, 0 for a report already counted.
if ARGV[1] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[6]) then return 0 end
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
return 1
