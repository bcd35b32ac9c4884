-- mark-swap: sets a mark and answers the value it held (store.ts swapMark).
-- KEYS[1] the mark, "<expires ms>:<value>" also expiring by PX (keys.mark; includes/mark.lua)
-- ARGV[1] the value
-- ARGV[2] ttl (ms)
-- ARGV[3] now (ms)
-- ARGV[4] 'always' | 'absent' | 'present': when to write
-- Replies: {DONE, the value held before or nil (none, or expired)} when written; with 'absent',
--   {EXISTS, the value held} when it held one; with 'present', {GONE, nil} when it held none
--   (nothing written in either).
--- @include "mark"
local held = markHeld(redis.call('GET', KEYS[1]), tonumber(ARGV[3]))
if ARGV[4] == 'absent' and held then return {Reply.EXISTS, held} end
if ARGV[4] == 'present' and not held then return {Reply.GONE, held} end
redis.call('SET', KEYS[1], (tonumber(ARGV[3]) + tonumber(ARGV[2])) .. ':' .. ARGV[1], 'PX', ARGV[2])
return {Reply.DONE, held}
