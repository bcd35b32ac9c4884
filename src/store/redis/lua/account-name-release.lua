-- account-name-release: an account that took a name (account-name-claim) wrote no record (its id
-- exists, or it does not): it is no longer taking it.
-- KEYS[1] the name's claim (keys.accountName; includes/account-name.lua)
-- ARGV[1] the account id
-- ARGV[2] a new nonce
-- Replies: DONE (also when it was not taking the name).
--- @include "account-name"
local c = nameClaim(redis.call('GET', KEYS[1]))
if c.p ~= ARGV[1] then return Reply.DONE end
c.p = nil
c.u = nil
if c.h then
  nameSave(1, c, ARGV[2])
else
  redis.call('DEL', KEYS[1])
end
return Reply.DONE
