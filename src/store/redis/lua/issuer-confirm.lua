-- issuer-confirm: the write that took an issuer's (iss, key ids) (issuer-claim) has written the
-- record: its taking becomes the issuer's holding at that revision; holdings of earlier revisions
-- of the issuer go, and so do its other writes' takings past their deadline (a write that stopped
-- between its steps; one still running finds its taking gone and takes its change back).
-- KEYS[1] the claims of the iss (keys.issuerClaims; includes/issuer-claims.lua)
-- ARGV[1] the account id
-- ARGV[2] the issuer id
-- ARGV[3] the write's nonce
-- ARGV[4] the revision it wrote
-- ARGV[5] a new nonce of the claims
-- ARGV[6] now (ms)
-- Replies: DONE; MOVED when its taking is gone (another write judged it past its deadline and took
--   the key ids): nothing written, the caller takes its record's change back.
--- @include "issuer-claims"
local c = issuerClaims(redis.call('GET', KEYS[1]))
local a, i, w = ARGV[1], ARGV[2], ARGV[3]
local rev = tonumber(ARGV[4])
local now = tonumber(ARGV[6])
local taking = nil
local newer = false
local kept = {}
for _, e in ipairs(c.e) do
  local mine = e.a == a and e.i == i
  if mine and e.w == w then
    taking = e
  elseif mine and e.r and tonumber(e.r) < rev then
    -- the issuer's earlier holding: its record has moved on
  elseif mine and e.w and tonumber(e.u) <= now then
    -- another write of the issuer, past its deadline
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
