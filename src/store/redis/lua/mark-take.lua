-- mark-take: removes a mark that holds a value (store.ts takeMark).
-- KEYS[1] the mark ("<expires ms>:<value>", see mark-swap.lua)
-- ARGV[1] value, ARGV[2] now ms
-- Returns DONE (1) when it removed the mark; 0 when the mark is gone, expired or holds another value.
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local cut = string.find(raw, ':', 1, true)
if tonumber(string.sub(raw, 1, cut - 1)) <= tonumber(ARGV[2]) or string.sub(raw, cut + 1) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
