-- account-name-claim: marks an account as taking a name (a create or rename about to write its
-- record) until a deadline; account-name-confirm makes it a holder once the record is written.
-- KEYS[1] the name's claim (keys.accountName; includes/account-name.lua)
-- ARGV[1] the account id
-- ARGV[2] a new nonce
-- ARGV[3] now (ms)
-- ARGV[4] the deadline of the taking (ms)
-- ARGV[5] the nonce of the claim as the caller read it and found none of its other accounts named so
--   any more ('' = none): that claim, if it is still the same, is replaced
-- ARGV[6] '1' when the account's record has the name already (a rename that keeps it, in another
--   case): as one of the holders it may keep it
-- Replies: DONE; {EXISTS, the claim's JSON} when another account holds the name or is taking it
--   (nothing written).
--- @include "account-name"
local raw = redis.call('GET', KEYS[1])
local c = nameClaim(raw)
local id = ARGV[1]
if c.p and c.p ~= id and tonumber(c.u) > tonumber(ARGV[3]) then return {Reply.EXISTS, raw} end
if c.p == id or (ARGV[6] == '1' and nameHolds(c, id)) then
  -- its own name: another account whose taking is past its deadline may have written its record
  -- meanwhile, so it stays a holder (a holder whose record has another name counts for nothing)
  if c.p and c.p ~= id then nameHold(c, c.p) end
elseif raw and not (ARGV[5] ~= '' and c.n == ARGV[5]) then
  return {Reply.EXISTS, raw}
else
  c = {}
end
c.p = id
c.u = tonumber(ARGV[4])
nameSave(1, c, ARGV[2])
return Reply.DONE
