-- mark-swap: sets a mark and answers the value it held (store.ts swapMark).
-- KEYS[1] the mark: "<expires ms>:<value>", also expiring by PX (the expiry in the value is the
--   store's clock, which the check below follows)
-- ARGV[1] value, ARGV[2] ttl ms, ARGV[3] now ms, ARGV[4] 'always' | 'absent' | 'present'
-- Returns the value held before (nil: none, or expired); with 'absent'/'present' nothing is
-- written when the mark held one / held none.
local raw = redis.call('GET', KEYS[1])
local held = false
if raw then
  local cut = string.find(raw, ':', 1, true)
  if tonumber(string.sub(raw, 1, cut - 1)) > tonumber(ARGV[3]) then held = string.sub(raw, cut + 1) end
end
if (ARGV[4] == 'absent' and held) or (ARGV[4] == 'present' and not held) then return held end
redis.call('SET', KEYS[1], (tonumber(ARGV[3]) + tonumber(ARGV[2])) .. ':' .. ARGV[1], 'PX', ARGV[2])
return held
