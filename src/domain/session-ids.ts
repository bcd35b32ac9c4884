// The session registry's ids (docs/api.md#running-sessions): 16 base64url characters of 96 random
// bits, drawn from a pool of random bytes refilled as randomUUID refills its own. A registry id is
// stored in a session's record, its pointer and every live index it is in, so its length is paid
// several times per session (docs/operations.md#what-a-viewer-session-costs-on-redis).
import { randomBytes } from 'node:crypto';

const ID_BYTES = 12;
const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let next = 0;

/** A new registry id: 16 characters of [A-Za-z0-9_-], unique for all practical purposes (96 random bits). */
export function newSessionId(): string {
  if (next >= pool.length) {
    pool = randomBytes(ID_BYTES * POOL_IDS);
    next = 0;
  }
  const id = pool.toString('base64url', next, next + ID_BYTES);
  next += ID_BYTES;
  return id;
}
