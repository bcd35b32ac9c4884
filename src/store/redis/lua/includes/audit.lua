-- audit: an account's audit chain (docs/api.md#audit-log), appended in the step of the change it
-- records. The caller read the head, sealed the entry in Node (the key never reaches Redis) and
-- passes what the script checks and writes; an expected seq of '' means the write is not audited.
-- auditHeld(h, expected): KEYS[h] is the account's audit head, a hash {seq, mac, anchorSeq,
--   anchorMac} (keys.auditHead); true when no entry is given, or the head is still at seq
--   `expected` ('0': none), as the caller read it. A script checks it before it writes anything.
-- auditAppend(l, h, expected, seq, entry, mac): KEYS[l] is the account's entries, a zset scored by
--   seq (keys.auditLog); adds the entry and moves the head to it (nothing when not audited).
local function auditHeld(h, expected)
  if expected == '' then return true end
  return (redis.call('HGET', KEYS[h], 'seq') or '0') == expected
end

local function auditAppend(l, h, expected, seq, entry, mac)
  if expected == '' then return end
  redis.call('ZADD', KEYS[l], seq, entry)
  redis.call('HSET', KEYS[h], 'seq', seq, 'mac', mac)
end
