// The first step of every decision: the presented value (nothing, a token, a self-signed JWT)
// becomes a Credential, read from this instance's caches or the store as the caller allows.
import { hasLimits, tokenHash, type TokenRecord } from '../domain/tokens.js';
import type { Credential } from '../policy/evaluate.js';
import { looksLikeJwt, peekSelfSigned, signatureValid } from '../policy/self-signed.js';
import type { TokenLookup } from './lookup.js';

export const MAX_TOKEN_LENGTH = 8192;

/**
 * How a token record may be read:
 * - 'optimistic': a cached bind-on-usage token is taken without the version check (the bind that
 *   follows checks the token's revision), and so is a cached token with session limits when its
 *   admission checks the revision (`revChecked`); any other record is checked against the account
 *   version first;
 * - 'fresh': every record is checked, or loaded;
 * - 'cache': this instance's caches alone (the store is unreachable).
 */
export type Reading = 'optimistic' | 'fresh' | 'cache';

export interface Resolved {
  cred: Credential;
  /** False when the record was not checked against the account version ('optimistic' hits, 'cache'). */
  verified: boolean;
  /** The SHA-256 of a plain token's value (the cache key to forget when a bind finds the record stale). */
  hash?: string;
  /** The account version the record is current at (0 without a record). */
  ver: number;
}

/** Cache hits and misses of plain token lookups are counted here. */
export interface LookupCounter {
  cacheLookup(result: 'hit' | 'miss'): void;
}

/** Shared by every token-less request (nothing downstream changes a Resolved): no allocation for them. */
const NO_TOKEN: Resolved = { cred: { type: 'none' }, verified: true, ver: 0 };

/**
 * Token value → its SHA-256, for the values decided lately: a viewer or media server presents the
 * same token on every request, and the hash (~3 µs) was the largest single step of a cached
 * decision (docs/performance.md). Only values of plausible token length are kept. The viewer
 * sessions read it too (src/sessions/viewer-sessions.ts).
 */
const hashes = new Map<string, string>();
const HASHES_MAX = 10_000;
export function hashOf(value: string): string {
  let h = hashes.get(value);
  if (h === undefined) {
    h = tokenHash(value);
    if (value.length <= 256) {
      // emptied when full: a Map, so a hit costs no LRU bookkeeping
      if (hashes.size >= HASHES_MAX) hashes.clear();
      hashes.set(value, h);
    }
  }
  return h;
}

const bindsOnUsage = (t: TokenRecord): boolean => (t.bindIpsOnUsage ?? 0) > 0;

/** Whether a cached record may be taken unchecked: a store step after the decision checks its revision. */
const checkedLater = (t: TokenRecord, revChecked: boolean): boolean => bindsOnUsage(t) || (revChecked && hasLimits(t));

/**
 * A plain token value resolved from this instance's memory alone, when memory can vouch for it
 * (its cached record current by the account version the store holds in memory); undefined
 * otherwise, and resolveCredential() decides with the store. A bind it needs is the caller's to
 * settle. Counts nothing.
 */
export function resolveNow(value: string, lookup: TokenLookup): Resolved | undefined {
  if (value.length > MAX_TOKEN_LENGTH || looksLikeJwt(value)) return undefined;
  const hash = hashOf(value);
  const entry = lookup.entryByHashNow(hash);
  if (entry === undefined) return undefined;
  return { cred: { type: 'token', token: entry.token }, verified: true, hash, ver: entry.ver };
}

const invalid = (detail: string, hash?: string): Resolved => ({ cred: { type: 'invalid', detail }, verified: true, hash, ver: 0 });

/**
 * Resolves a presented token value. With the store ('optimistic', 'fresh') an unknown, malformed
 * or badly signed value is an 'invalid' credential. With 'cache', undefined when the caches cannot
 * vouch for the value either way (nothing cached for it, or a value only the store could judge):
 * the caller answers that the store is unavailable.
 */
export function resolveCredential(value: string | undefined, reading: 'optimistic' | 'fresh', lookup: TokenLookup, counter?: LookupCounter, revChecked?: boolean): Promise<Resolved>;
export function resolveCredential(value: string | undefined, reading: Reading, lookup: TokenLookup, counter?: LookupCounter, revChecked?: boolean): Promise<Resolved | undefined>;
export async function resolveCredential(
  value: string | undefined,
  reading: Reading,
  lookup: TokenLookup,
  counter?: LookupCounter,
  revChecked = false,
): Promise<Resolved | undefined> {
  if (value === undefined || value === '') return NO_TOKEN;
  const cacheOnly = reading === 'cache';
  if (value.length > MAX_TOKEN_LENGTH) return cacheOnly ? undefined : invalid('token too long');
  if (looksLikeJwt(value)) {
    const peek = peekSelfSigned(value);
    if ('problem' in peek) return cacheOnly ? undefined : invalid(peek.problem);
    const cached = reading === 'fresh' ? undefined : lookup.peekEntryById(peek.claims.tokenId);
    const unchecked = cacheOnly || (cached !== undefined && checkedLater(cached.token, revChecked));
    const entry = unchecked ? cached : await lookup.entryById(peek.claims.tokenId);
    if (!entry) return cacheOnly ? undefined : invalid('unknown parent token');
    const parent = entry.token;
    const cred: Credential = (await signatureValid(value, parent.token))
      ? { type: 'jwt', parent, claims: peek.claims }
      : { type: 'invalid', detail: 'bad signature' };
    return { cred, verified: !unchecked, ver: entry.ver };
  }
  const hash = hashOf(value);
  const cached = reading === 'fresh' ? undefined : lookup.peekEntryByHash(hash);
  if (cacheOnly) return cached && { cred: { type: 'token', token: cached.token }, verified: false, hash, ver: cached.ver };
  if (cached !== undefined && checkedLater(cached.token, revChecked)) {
    counter?.cacheLookup('hit');
    return { cred: { type: 'token', token: cached.token }, verified: false, hash, ver: cached.ver };
  }
  const before = lookup.stats.hits;
  const entry = await lookup.entryByHash(hash);
  counter?.cacheLookup(lookup.stats.hits > before ? 'hit' : 'miss');
  return entry ? { cred: { type: 'token', token: entry.token }, verified: true, hash, ver: entry.ver } : invalid('unknown token', hash);
}
