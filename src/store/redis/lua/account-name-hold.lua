-- account-name-hold: records an account as holding the name its record has (the upgrade of accounts
-- written before names had claims, when two accounts could share one).
-- KEYS[1] the name's claim (keys.accountName; includes/account-name.lua)
-- ARGV[1] the account id
-- ARGV[2] a new nonce
-- Replies: DONE.
--- @include "account-name"
local c = nameClaim(redis.call('GET', KEYS[1]))
if nameHolds(c, ARGV[1]) then return Reply.DONE end
nameHold(c, ARGV[1])
nameSave(1, c, ARGV[2])
return Reply.DONE
