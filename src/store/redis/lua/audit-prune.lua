-- audit-prune: removes an account's oldest audit entries up to a seq and keeps that entry (its seq,
-- MAC and text, and the MAC before it) as the anchor the rest of the chain verifies from (retention;
-- docs/api.md#audit-log).
-- KEYS[1] the account's audit entries, a zset (keys.auditLog)
-- KEYS[2] the account's audit head, a hash (keys.auditHead)
-- ARGV[1] the seq of the last entry removed
-- ARGV[2] its MAC
-- ARGV[3] its text, as stored
-- ARGV[4] the MAC of the entry before it ('' before the first)
-- Replies: {DONE, how many were removed}; nothing is removed or anchored below an anchor already further.
local anchored = tonumber(redis.call('HGET', KEYS[2], 'anchorSeq') or '0')
if anchored >= tonumber(ARGV[1]) then return {Reply.DONE, 0} end
local n = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('HSET', KEYS[2], 'anchorSeq', ARGV[1], 'anchorMac', ARGV[2], 'anchorText', ARGV[3], 'anchorPrev', ARGV[4])
return {Reply.DONE, n}
