-- mark-take: removes a mark that holds a value (store.ts takeMark).
-- KEYS[1] the mark, "<expires ms>:<value>" (keys.mark; includes/mark.lua)
-- ARGV[1] the value
-- ARGV[2] now (ms)
-- Replies: DONE when it removed the mark; GONE when the mark is gone or expired; MOVED when it holds
--   another value.
--- @include "mark"
local held = markHeld(redis.call('GET', KEYS[1]), tonumber(ARGV[2]))
if not held then return Reply.GONE end
if held ~= ARGV[1] then return Reply.MOVED end
redis.call('DEL', KEYS[1])
return Reply.DONE
