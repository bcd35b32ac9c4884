-- issuer-claim: marks a write of an issuer (a create or update about to write its record) as taking
-- its (iss, key ids) until a deadline, unless another issuer's entry overlaps them;
-- issuer-confirm makes it the issuer's holding once the record is written.
-- KEYS[1] the claims of the iss (keys.issuerClaims; includes/issuer-claims.lua)
-- ARGV[1] the account id
-- ARGV[2] the issuer id
-- ARGV[3] its key ids, a JSON array ('[]': any)
-- ARGV[4] the write's nonce (a taking of this write's before is replaced)
-- ARGV[5] a new nonce of the claims
-- ARGV[6] now (ms)
-- ARGV[7] the deadline of the taking (ms)
-- ARGV[8] the nonce of the claims as the caller read them ('' = none)
-- ARGV[9] the positions (a JSON array) of the entries of that read whose records the caller found
--   not to overlap: dropped, if the claims are still the ones it read
-- Replies: DONE; {EXISTS, the claims' JSON} when an entry of another issuer overlaps (nothing
--   written): the caller judges each by its record, or refuses at once a taking within its deadline.
--- @include "issuer-claims"
local raw = redis.call('GET', KEYS[1])
local c = issuerClaims(raw)
local a, i, w = ARGV[1], ARGV[2], ARGV[4]
local kids = cjson.decode(ARGV[3])
local stale = {}
if ARGV[8] ~= '' and c.n == ARGV[8] then
  for _, p in ipairs(cjson.decode(ARGV[9])) do stale[tonumber(p)] = true end
end
local kept = {}
for p, e in ipairs(c.e) do
  local mine = e.a == a and e.i == i
  if not stale[p] and not (mine and e.w == w) then
    if not mine and kidsOverlap(e.k, kids) then return {Reply.EXISTS, raw} end
    table.insert(kept, e)
  end
end
table.insert(kept, {a = a, i = i, k = kids, w = w, u = tonumber(ARGV[7])})
c.e = kept
issuerSave(1, c, ARGV[5])
return Reply.DONE
