-- session-record: a registry record (keys.sessionRecord) in either of its forms, both JSON: an
-- object, or a row (src/store/redis/session-record.ts: version 1, then the fields of ROW in order,
-- null for one unset and the unset tail left out, the action 0 or 1, dates as their epoch ms in
-- digits, a string: cjson formats and parses numbers far more slowly than it copies text). A record
-- is written in the form the store writes (the caller says which), whatever form it was read in.
-- decodeRecord(raw): the record as a table by field name, its dates as they were stored.
-- encodeRecord(rec, row): the record's text, as a row when `row`, else as an object.
-- openRecord, getField, setField: a record changed in place in the form it is written in (below),
--   for the touches, which change one field of many records.
-- stamp(row, iso, ms): a date as the form keeps it.
-- endRecord(k, rec, row, reason, iso, ms, keepMs): `rec`, decoded from KEYS[k], gets endedReason
--   `reason` and endedOn now and is written back to expire in keepMs; answers its text.
local ROW = {'id', 'caller', 'sessionId', 'action', 'accountId', 'streamName', 'startedOn', 'lastSeenOn', 'tokenId', 'clientIp', 'protocol', 'serverAddress', 'trackingId', 'subject', 'feedId', 'native', 'endedReason', 'endedOn'}
local DATES = {startedOn = true, lastSeenOn = true, endedOn = true}
-- days since 1970-01-01 of a proleptic Gregorian date, and back (Hinnant's civil algorithms)
local function daysFromCivil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end
local function msToIso(v)
  if type(v) ~= 'string' or not string.find(v, '^%d+$') then return v end
  v = tonumber(v)
  local days = math.floor(v / 86400000)
  local rem = v - days * 86400000
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d, math.floor(rem / 3600000), math.floor(rem / 60000) % 60, math.floor(rem / 1000) % 60, rem % 1000)
end
-- a date in Date#toISOString's form as its epoch ms in digits; any other text stays text
local function isoToMs(v)
  if type(v) ~= 'string' then return v end
  local y, mo, d, h, mi, s, ms = string.match(v, '^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d)%.(%d%d%d)Z$')
  if not y then return v end
  local out = ((daysFromCivil(tonumber(y), tonumber(mo), tonumber(d)) * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60000 + tonumber(s) * 1000 + tonumber(ms)
  local digits = string.format('%.0f', out)
  if msToIso(digits) ~= v then return v end
  return digits
end
local AT = {}
for i, f in ipairs(ROW) do AT[f] = i + 1 end
local function decodeRecord(raw)
  local j = cjson.decode(raw)
  -- a row starts with '['
  if string.byte(raw, 1) ~= 91 then return j end
  local rec = {}
  for i, f in ipairs(ROW) do
    local v = j[i + 1]
    if v ~= nil and v ~= cjson.null then rec[f] = v end
  end
  rec.action = rec.action == 1 and 'publish' or 'subscribe'
  return rec
end
-- the record (by field name) as the table its form encodes: a row's array, or the object
local function shapeRecord(rec, row)
  if not row then
    for f in pairs(DATES) do rec[f] = msToIso(rec[f]) end
    return rec
  end
  local out = {1}
  local last = 1
  for i, f in ipairs(ROW) do
    local v = rec[f]
    if f == 'action' then
      v = v == 'publish' and 1 or 0
    elseif DATES[f] then
      v = isoToMs(v)
    end
    if v == nil then
      out[i + 1] = cjson.null
    else
      out[i + 1] = v
      last = i + 1
    end
  end
  for i = #out, last + 1, -1 do out[i] = nil end
  return out
end
local function encodeRecord(rec, row)
  return cjson.encode(shapeRecord(rec, row))
end
-- openRecord(raw, row): the decoded text in the form `row` says, as it encodes (a row's array or
-- the object), converted only when it was stored in the other form; read and change its fields
-- with getField and setField, and encode it with cjson.encode.
local function openRecord(raw, row)
  local isRow = string.byte(raw, 1) == 91
  if isRow == row then return cjson.decode(raw) end
  return shapeRecord(decodeRecord(raw), row)
end
local function getField(j, row, f)
  if not row then return j[f] end
  local v = j[AT[f]]
  if v == cjson.null then return nil end
  return v
end
-- a row grows to the field with nulls between (cjson refuses a sparse array)
local function setField(j, row, f, v)
  if not row then
    j[f] = v
    return
  end
  local at = AT[f]
  for i = #j + 1, at - 1 do j[i] = cjson.null end
  j[at] = v
end
local function stamp(row, iso, ms)
  if row then return ms end
  return iso
end
local function endRecord(k, rec, row, reason, iso, ms, keepMs)
  rec.endedReason = reason
  rec.endedOn = stamp(row, iso, ms)
  local raw = encodeRecord(rec, row)
  redis.call('SET', KEYS[k], raw, 'PX', keepMs)
  return raw
end
