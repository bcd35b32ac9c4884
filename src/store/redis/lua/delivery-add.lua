-- delivery-add: appends a delivery attempt to a webhook's log, keeping the newest ones, only while
-- the webhook exists (a delivery finishing after a delete leaves no log behind).
-- KEYS[1] webhook hash {a:<account>}:wh:<id>, KEYS[2] its deliveries list
-- ARGV[1] delivery JSON, ARGV[2] how many attempts the log keeps (domain/store-rules.ts)
-- Returns DONE (1), or GONE (-1) when the webhook does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
return 1
