-- issuer-release: an issuer lets go of an iss: a write's taking that wrote no record (it failed or
-- was refused), and the holdings of revisions before one (deleted, or moved to another iss).
-- KEYS[1] the claims of the iss (keys.issuerClaims; includes/issuer-claims.lua)
-- ARGV[1] the account id
-- ARGV[2] the issuer id
-- ARGV[3] the write's nonce whose taking goes ('' = none, '*' = every taking of the issuer)
-- ARGV[4] holdings of revisions below this go ('0' = none)
-- ARGV[5] a new nonce of the claims
-- Replies: DONE (also when nothing was there).
--- @include "issuer-claims"
local raw = redis.call('GET', KEYS[1])
if not raw then return Reply.DONE end
local c = issuerClaims(raw)
local a, i, w = ARGV[1], ARGV[2], ARGV[3]
local below = tonumber(ARGV[4])
local kept = {}
for _, e in ipairs(c.e) do
  local mine = e.a == a and e.i == i
  local goes = mine and ((e.w and (w == '*' or e.w == w)) or (e.r and tonumber(e.r) < below))
  if not goes then table.insert(kept, e) end
end
if #kept == #c.e then return Reply.DONE end
c.e = kept
issuerSave(1, c, ARGV[5])
return Reply.DONE
