// The SHA-256 of a presented value (base64url), for the values presented lately: a player or a
// media server presents the same JWT or signed URL on every request, and the memos of verified
// credentials are keyed by it. A Map emptied when full (a hit costs no LRU bookkeeping).
import { createHash } from 'node:crypto';

const digests = new Map<string, string>();
const DIGESTS_MAX = 10_000;

/** Values longer than this are hashed each time, never kept: the cache holds at most DIGESTS_MAX × this. */
const KEPT_MAX_LENGTH = 4096;

export function digestOf(value: string): string {
  let d = digests.get(value);
  if (d === undefined) {
    d = createHash('sha256').update(value).digest('base64url');
    if (value.length > KEPT_MAX_LENGTH) return d;
    if (digests.size >= DIGESTS_MAX) digests.clear();
    digests.set(value, d);
  }
  return d;
}
