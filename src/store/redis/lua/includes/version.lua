-- version: moving an account version (keys.version). The new value is published on the key's own
-- name, in the same step, for the instances that hold versions in memory
-- (docs/decision-path.md#watched-account-versions).
-- moveVersion(k): KEYS[k] is the account version.
local function moveVersion(k)
  redis.call('PUBLISH', KEYS[k], redis.call('INCR', KEYS[k]))
end
