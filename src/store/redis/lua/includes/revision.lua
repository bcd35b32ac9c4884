-- revision: the revision of a record "<rev>:<json>" (a token's, keys.token, or an issuer's,
-- keys.issuer), which compare-and-set steps check against the revision their caller read.
-- tokenRevision(k): KEYS[k] is the record; its revision as a string, or nil when there is none.
local function tokenRevision(k)
  local cur = redis.call('GET', KEYS[k])
  if not cur then return nil end
  return string.match(cur, '^(%d+):')
end
