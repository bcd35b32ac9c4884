-- token-id-take: the next token id of an account's run (keys.tokenIdRun; tokens.ts nextId). An
-- account takes ids from the deployment's sequence a run of 64 at a time, so that its record
-- buckets (keys.tokenRecord) fill; this keeps one run per account however many take at once.
-- KEYS[1] the account's ids not given out yet, a list (keys.tokenIdRun)
-- ARGV[1] the first id of a run the caller took from the sequence ('' = none taken yet)
-- ARGV[2] the run's length
-- Replies: {DONE, the id} — from the list, or else the given run's first (the rest of it then
--   fills the list; a run given while the list holds ids is left unused: its ids are skipped);
--   GONE when the list is empty and no run was given (take one and call again).
local id = redis.call('LPOP', KEYS[1])
if id then return {Reply.DONE, id} end
if ARGV[1] == '' then return Reply.GONE end
local first = tonumber(ARGV[1])
for i = 1, tonumber(ARGV[2]) - 1 do
  redis.call('RPUSH', KEYS[1], string.format('%d', first + i))
end
return {Reply.DONE, ARGV[1]}
