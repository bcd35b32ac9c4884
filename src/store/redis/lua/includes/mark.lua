-- mark: a mark (keys.mark) holds "<expires ms>:<value>" and also expires by PX; the expiry in the
-- value is the store's clock, which decides.
-- markHeld(raw, now): the value of a mark read as `raw` at `now` (ms), or false (none, or expired).
local function markHeld(raw, now)
  if not raw then return false end
  local cut = string.find(raw, ':', 1, true)
  if tonumber(string.sub(raw, 1, cut - 1)) <= now then return false end
  return string.sub(raw, cut + 1)
end
