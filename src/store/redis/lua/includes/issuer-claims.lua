-- issuer-claims: the claims of an `iss` (keys.issuerClaims) are JSON {n, e}: `n` a nonce every write
-- changes, `e` the entries, each {a, i, k} (account, issuer id as a string, its key ids; [] = any)
-- and either `r`, the revision of the issuer's record that holds them, or `w`, `u`: a write
-- (a create or update whose record is being written, named by its own nonce) taking them until `u`
-- (ms, the store's clock). A record's (iss, key ids) always has an entry; an entry may outlive
-- what it names (a crash between steps), which the record read beside it tells.
-- issuerClaims(raw): the claims read as `raw` (empty ones when none).
-- kidsOverlap(a, b): whether two key id lists could both claim one JWT (one is any, or they share one).
-- issuerSave(k, c, nonce): writes the claims to KEYS[k] with a new nonce, or deletes KEYS[k] when
--   no entry is left.
local function issuerClaims(raw)
  if not raw then return {e = {}} end
  local c = cjson.decode(raw)
  if type(c.e) ~= 'table' then c.e = {} end
  return c
end

local function kidsOverlap(a, b)
  if #a == 0 or #b == 0 then return true end
  for _, x in ipairs(a) do
    for _, y in ipairs(b) do
      if x == y then return true end
    end
  end
  return false
end

local function issuerSave(k, c, nonce)
  if #c.e == 0 then
    redis.call('DEL', KEYS[k])
    return
  end
  c.n = nonce
  redis.call('SET', KEYS[k], cjson.encode(c))
end
