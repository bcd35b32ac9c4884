-- usage-total: sets a day's per-stream index's account total to the sum of its streams' fields
-- (the upgrade of an index written before the total existed). Exact whenever it runs, as every
-- write adds to a stream's field and to the total in one script.
-- KEYS[1] the day's stream index (keys.usageStreams)
-- ARGV[1] the total's out field (keys.usageTotalFields)
-- ARGV[2] the total's in field
-- Replies: DONE; GONE when the index is empty (nothing written).
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return Reply.GONE end
local o, i = 0, 0
for n = 1, #fields, 2 do
  local f = fields[n]
  if f ~= ARGV[1] and f ~= ARGV[2] then
    if string.sub(f, -2) == string.sub(ARGV[1], -2) then o = o + tonumber(fields[n + 1])
    else i = i + tonumber(fields[n + 1]) end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.0f', o), ARGV[2], string.format('%.0f', i))
return Reply.DONE
