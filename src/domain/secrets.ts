// API secrets and account ids: generation, hashing and constant-time comparison.
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** 64 lower-case hex characters (32 random bytes). Token values use the same form. */
export const newSecret = (): string => randomBytes(32).toString('hex');
export const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
export const looksLikeSecret = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);

/** Constant-time equality of two strings of any length (compares their SHA-256 digests). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

const ACCOUNT_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
/** Short upper-case account ids such as ZG6NWV (no 0/O or 1/I to read them aloud safely). */
export function newAccountId(length = 6): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ACCOUNT_ALPHABET[randomInt(ACCOUNT_ALPHABET.length)];
  return s;
}
