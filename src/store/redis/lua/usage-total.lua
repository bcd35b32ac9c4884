-- usage-total: sets a day's per-stream index's account total to the sum of its streams' fields
-- (the upgrade of an index written before the total existed). Exact whenever it runs, as every
-- write adds to a stream's field and to the total in one script.
-- KEYS[1] stream index {a:<account>}:u:s:<day>
-- ARGV[1] / ARGV[2] the total's out / in field
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return 0 end
local o, i = 0, 0
for n = 1, #fields, 2 do
  local f = fields[n]
  if f ~= ARGV[1] and f ~= ARGV[2] then
    if string.sub(f, -2) == string.sub(ARGV[1], -2) then o = o + tonumber(fields[n + 1])
    else i = i + tonumber(fields[n + 1]) end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.0f', o), ARGV[2], string.format('%.0f', i))
return 1
