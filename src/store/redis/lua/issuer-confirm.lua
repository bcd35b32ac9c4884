-- issuer-confirm: the write that took an issuer's (iss, key ids) (issuer-claim) has written the
-- record: its taking becomes the issuer's holding at that revision, and holdings of earlier
-- revisions of the issuer go.
-- KEYS[1] the claims of the iss (keys.issuerClaims; includes/issuer-claims.lua)
-- ARGV[1] the account id
-- ARGV[2] the issuer id
-- ARGV[3] the write's nonce
-- ARGV[4] the revision it wrote
-- ARGV[5] a new nonce of the claims
-- Replies: DONE; MOVED when its taking is gone (another write judged it past its deadline and took
--   the key ids): nothing written, the caller takes its record's change back.
--- @include "issuer-claims"
local c = issuerClaims(redis.call('GET', KEYS[1]))
local a, i, w = ARGV[1], ARGV[2], ARGV[3]
local rev = tonumber(ARGV[4])
local taking = nil
local newer = false
local kept = {}
for _, e in ipairs(c.e) do
  local mine = e.a == a and e.i == i
  if mine and e.w == w then
    taking = e
  elseif mine and e.r and tonumber(e.r) < rev then
    -- the issuer's earlier holding: its record has moved on
  else
    if mine and e.r then newer = true end
    table.insert(kept, e)
  end
end
if not taking then return Reply.MOVED end
-- a later revision confirmed first holds what the record has now
if not newer then table.insert(kept, {a = a, i = i, k = taking.k, r = rev}) end
c.e = kept
issuerSave(1, c, ARGV[5])
return Reply.DONE
