-- secured-remove: removes the secured-stream entries of one name (exact and regex) and moves the
-- account version when any was removed.
-- KEYS[1] secured-streams hash, KEYS[2] account version
-- ARGV[1] the exact entry's field, ARGV[2] the regex entry's field
-- Returns {exact value or false, regex value or false}: what was removed.
local e = redis.call('HGET', KEYS[1], ARGV[1])
local r = redis.call('HGET', KEYS[1], ARGV[2])
if e or r then
  redis.call('HDEL', KEYS[1], ARGV[1], ARGV[2])
  redis.call('PUBLISH', KEYS[2], redis.call('INCR', KEYS[2]))
end
return {e, r}
