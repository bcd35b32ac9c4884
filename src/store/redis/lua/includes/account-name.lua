-- account-name: the claim of an account name (keys.accountName) is JSON {n, h, p, u}: `n` a nonce
-- every write changes, `h` the accounts holding the name (their records have it; more than one only
-- for names shared before names were unique), `p` an account taking it (a create or rename whose
-- record is being written) until `u` (ms, the store's clock); `h` and `p`, `u` absent when none.
-- nameClaim(raw): the claim read as `raw` (an empty one when none).
-- nameHolds(c, id): whether `id` is among the claim's holders.
-- nameHold(c, id): adds `id` to the holders (once).
-- nameSave(k, c, nonce): writes the claim to KEYS[k] with a new nonce.
local function nameClaim(raw)
  if not raw then return {} end
  return cjson.decode(raw)
end

local function nameHolds(c, id)
  for _, h in ipairs(c.h or {}) do
    if h == id then return true end
  end
  return false
end

local function nameHold(c, id)
  if nameHolds(c, id) then return end
  c.h = c.h or {}
  table.insert(c.h, id)
end

local function nameSave(k, c, nonce)
  c.n = nonce
  if c.h and #c.h == 0 then c.h = nil end
  redis.call('SET', KEYS[k], cjson.encode(c))
end
