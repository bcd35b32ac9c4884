-- account-name-confirm: the account that took a name (account-name-claim) has written its record:
-- it holds the name from now on.
-- KEYS[1] the name's claim (keys.accountName; includes/account-name.lua)
-- ARGV[1] the account id
-- ARGV[2] a new nonce
-- Replies: DONE; MOVED when another account has taken the name since (the taking was past its
--   deadline): nothing written, the caller takes its record's change back.
--- @include "account-name"
local c = nameClaim(redis.call('GET', KEYS[1]))
local id = ARGV[1]
if c.p == id then
  c.p = nil
  c.u = nil
  nameHold(c, id)
  nameSave(1, c, ARGV[2])
  return Reply.DONE
end
if nameHolds(c, id) then return Reply.DONE end
return Reply.MOVED
