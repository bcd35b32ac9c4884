-- session-record: ending a registry record (keys.sessionRecord): it says why and when, and is kept a
-- while.
-- endRecord(k, rec, reason, at, keepMs): `rec`, decoded from KEYS[k], gets endedReason `reason` and
-- endedOn `at` and is written back to expire in keepMs; answers its JSON.
local function endRecord(k, rec, reason, at, keepMs)
  rec.endedReason = reason
  rec.endedOn = at
  local raw = cjson.encode(rec)
  redis.call('SET', KEYS[k], raw, 'PX', keepMs)
  return raw
end
