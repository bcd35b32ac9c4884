-- revision: the revision of a record "<rev>:<...>" (a token's, keys.tokenRecord, or an issuer's,
-- keys.issuer), which compare-and-set steps check against the revision their caller read.
-- tokenField(id): the field of token id `id` in its bucket (keys.ts tokenRecord: ids 1-64, 65-128,
-- ... share a bucket; TOKEN_BUCKET is 64).
local function tokenField(id)
  return string.format('%d', (tonumber(id) - 1) % 64)
end

-- recordRevision(k): KEYS[k] is the record, a string; its revision as a string, or nil when there is none.
local function recordRevision(k)
  local cur = redis.call('GET', KEYS[k])
  if not cur then return nil end
  return string.match(cur, '^(%d+):')
end

-- tokenRecordRevision(k, id): KEYS[k] is the bucket of token id `id` (keys.tokenRecord); the
-- record's revision, or nil when there is none.
local function tokenRecordRevision(k, id)
  local cur = redis.call('HGET', KEYS[k], tokenField(id))
  if not cur then return nil end
  return string.match(cur, '^(%d+):')
end
