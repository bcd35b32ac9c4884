-- delivery-add: appends a delivery attempt to a webhook's log, keeping the newest ones, only while
-- the webhook exists (a delivery finishing after a delete leaves no log behind).
-- KEYS[1] the webhook hash (keys.webhook)
-- KEYS[2] its deliveries, a list (keys.deliveries)
-- ARGV[1] the delivery JSON
-- ARGV[2] how many attempts the log keeps (domain/store-rules.ts DELIVERIES_KEPT)
-- Replies: DONE; GONE when the webhook does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return Reply.GONE end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
return Reply.DONE
