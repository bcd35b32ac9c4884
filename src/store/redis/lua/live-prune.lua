-- live-prune: removes expired live entries a reader found, each only if it still holds the value
-- read (a stream started again since keeps its new entry). No version move: readers already treat
-- an expired entry as absent.
-- KEYS[1] the account's live streams, a hash (keys.live)
-- ARGV[1..] stream name, entry as read, stream name, entry as read, ...
-- Replies: {DONE, how many were removed}.
local removed = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    removed = removed + 1
  end
end
return {Reply.DONE, removed}
