-- session-indexes: the live indexes of the session registry, zsets of registry id → expiry (ms):
-- the account's (keys.sessionsLive), a token's (keys.sessionsOfToken), a stream's
-- (keys.sessionsOfStream) and a stream's publishers' (keys.publishersOfStream).
-- pruneIndexes(first, last, now): the members expired at `now` leave KEYS[first..last].
local function pruneIndexes(first, last, now)
  for i = first, last do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
end
-- unindex(id, at): the id leaves KEYS[i] for each i in the list `at`.
local function unindex(id, at)
  for _, i in ipairs(at) do redis.call('ZREM', KEYS[i], id) end
end
