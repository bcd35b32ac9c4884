-- usage-add: adds a usage report's bytes to its daily bucket and to the day's per-stream index,
-- counting a reportId only once.
-- KEYS[1] bucket hash   {a:<account>}:u:<t|k>:<trackingId|tokenId>:<day>
-- KEYS[2] report marker {a:<account>}:ur:<reportId> (any key of the slot when ARGV[1] is '0')
-- KEYS[3] stream index  {a:<account>}:u:s:<day> (every stream's bytes of the day, by the same fields)
-- ARGV[1] '1' when the report has an id, ARGV[2] out field, ARGV[3] in field, ARGV[4] bytesOut,
-- ARGV[5] bytesIn, ARGV[6] seconds to keep the marker, ARGV[7] seconds to keep the bucket
-- Returns 1 when counted, 0 for a report already counted.
if ARGV[1] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[6]) then return 0 end
end
redis.call('HINCRBY', KEYS[1], ARGV[2], ARGV[4])
redis.call('HINCRBY', KEYS[1], ARGV[3], ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('HINCRBY', KEYS[3], ARGV[2], ARGV[4])
redis.call('HINCRBY', KEYS[3], ARGV[3], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[7])
return 1
