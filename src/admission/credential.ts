// The first step of every admission: the presented value (nothing, a token, a self-signed JWT)
// becomes a Credential, read from this instance's caches or the store as the mode allows. One
// resolver per kind of credential, in RESOLVERS: adding a kind of credential is adding a row.
import { hasLimits, type TokenRecord } from '../domain/tokens.js';
import type { Credential } from '../policy/evaluate.js';
import { looksLikeJwt, peekSelfSigned, signatureValid } from '../policy/self-signed.js';
import { hashOf, type TokenLookup } from '../enforce/lookup.js';

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

/**
 * One kind of presented credential:
 * - `presents`: whether a presented value ('' when nothing was presented) is of this kind; the
 *   first row that says so resolves it;
 * - `fromMemory`: the credential from this instance's memory alone, without a wait, when memory
 *   can vouch for it; undefined when only the store can (absent: never), and the admission is made
 *   with the store. Counts nothing;
 * - `resolve`: the credential with the store ('optimistic', 'fresh': an unknown, malformed or badly
 *   signed value is an 'invalid' credential) or from the caches alone ('cache': undefined when
 *   they cannot vouch for the value either way).
 */
interface Resolver {
  kind: string;
  presents(value: string): boolean;
  fromMemory?(value: string, lookup: TokenLookup): Resolved | undefined;
  resolve(value: string, reading: Reading, lookup: TokenLookup, counter: LookupCounter | undefined, revChecked: boolean): Resolved | undefined | Promise<Resolved | undefined>;
}

/** Shared by every token-less request (nothing downstream changes a Resolved): no allocation for them. */
const NO_TOKEN: Resolved = { cred: { type: 'none' }, verified: true, ver: 0 };

const invalid = (detail: string, hash?: string): Resolved => ({ cred: { type: 'invalid', detail }, verified: true, hash, ver: 0 });

const bindsOnUsage = (t: TokenRecord): boolean => (t.bindIpsOnUsage ?? 0) > 0;

/** Whether a cached record may be taken unchecked: a store step after the decision checks its revision. */
const checkedLater = (t: TokenRecord, revChecked: boolean): boolean => bindsOnUsage(t) || (revChecked && hasLimits(t));

/** A self-signed subscribe JWT: its parent token by id (cached, else from the store), then its signature against the parent's value. */
async function selfSigned(value: string, reading: Reading, lookup: TokenLookup, _counter: LookupCounter | undefined, revChecked: boolean): Promise<Resolved | undefined> {
  const cacheOnly = reading === 'cache';
  const peek = peekSelfSigned(value);
  if ('problem' in peek) return cacheOnly ? undefined : invalid(peek.problem);
  const cached = reading === 'fresh' ? undefined : lookup.peekEntryById(peek.claims.tokenId);
  const unchecked = cacheOnly || (cached !== undefined && checkedLater(cached.token, revChecked));
  const entry = unchecked ? cached : await lookup.entryById(peek.claims.tokenId);
  if (!entry) return cacheOnly ? undefined : invalid('unknown parent token');
  const parent = entry.token;
  const cred: Credential = (await signatureValid(value, parent.token)) ? { type: 'jwt', parent, claims: peek.claims } : { type: 'invalid', detail: 'bad signature' };
  return { cred, verified: !unchecked, ver: entry.ver };
}

/** A plain token value: its record by the value's SHA-256, cached or from the store. */
function plainToken(value: string, reading: Reading, lookup: TokenLookup, counter: LookupCounter | undefined, revChecked: boolean): Resolved | undefined | Promise<Resolved> {
  const hash = hashOf(value);
  const cached = reading === 'fresh' ? undefined : lookup.peekEntryByHash(hash);
  if (reading === 'cache') return cached && { cred: { type: 'token', token: cached.token }, verified: false, hash, ver: cached.ver };
  if (cached !== undefined && checkedLater(cached.token, revChecked)) {
    counter?.cacheLookup('hit');
    return { cred: { type: 'token', token: cached.token }, verified: false, hash, ver: cached.ver };
  }
  return plainFromStore(hash, lookup, counter);
}

async function plainFromStore(hash: string, lookup: TokenLookup, counter: LookupCounter | undefined): Promise<Resolved> {
  const before = lookup.stats.hits;
  const entry = await lookup.entryByHash(hash);
  counter?.cacheLookup(lookup.stats.hits > before ? 'hit' : 'miss');
  return entry ? { cred: { type: 'token', token: entry.token }, verified: true, hash, ver: entry.ver } : invalid('unknown token', hash);
}

/**
 * A plain token whose cached record the store's in-process account version confirms current (the
 * embedded store keeps versions in memory; Redis while its version watch vouches for them). A bind
 * it needs is the pipeline's to settle.
 */
function plainFromMemory(value: string, lookup: TokenLookup): Resolved | undefined {
  const hash = hashOf(value);
  const entry = lookup.entryByHashNow(hash);
  if (entry === undefined) return undefined;
  return { cred: { type: 'token', token: entry.token }, verified: true, hash, ver: entry.ver };
}

/** The kinds of credential, in the order a presented value is tried against them. */
const RESOLVERS: readonly Resolver[] = [
  // a token-less request: decided on its account's streams (secured or open), which memory alone does not tell
  { kind: 'none', presents: (v) => v === '', resolve: () => NO_TOKEN },
  { kind: 'too long', presents: (v) => v.length > MAX_TOKEN_LENGTH, resolve: (_v, reading) => (reading === 'cache' ? undefined : invalid('token too long')) },
  { kind: 'self-signed JWT', presents: looksLikeJwt, resolve: selfSigned },
  { kind: 'plain token', presents: () => true, fromMemory: plainFromMemory, resolve: plainToken },
];

/** The resolver of a presented value ('' for none). */
function resolverOf(value: string): Resolver {
  for (let i = 0; i < RESOLVERS.length; i++) if (RESOLVERS[i].presents(value)) return RESOLVERS[i];
  throw new TypeError('no credential resolver takes this value'); // the last row takes every value
}

/**
 * A presented value resolved from this instance's memory alone, when memory can vouch for it;
 * undefined otherwise (nothing presented included: a token-less request needs its account's
 * secured streams), and the admission is made with the store.
 */
export function resolveNow(value: string | undefined, lookup: TokenLookup): Resolved | undefined {
  const v = value ?? '';
  return resolverOf(v).fromMemory?.(v, lookup);
}

/**
 * Resolves a presented token value. With the store ('optimistic', 'fresh') an unknown, malformed
 * or badly signed value is an 'invalid' credential. With 'cache', undefined when the caches cannot
 * vouch for the value either way (nothing cached for it, or a value only the store could judge):
 * the caller answers that the store is unavailable.
 */
export function resolveCredential(value: string | undefined, reading: 'optimistic' | 'fresh', lookup: TokenLookup, counter?: LookupCounter, revChecked?: boolean): Promise<Resolved>;
export function resolveCredential(value: string | undefined, reading: Reading, lookup: TokenLookup, counter?: LookupCounter, revChecked?: boolean): Promise<Resolved | undefined>;
export function resolveCredential(
  value: string | undefined,
  reading: Reading,
  lookup: TokenLookup,
  counter?: LookupCounter,
  revChecked = false,
): Promise<Resolved | undefined> {
  const v = value ?? '';
  const r = resolverOf(v).resolve(v, reading, lookup, counter, revChecked);
  return r instanceof Promise ? r : Promise.resolve(r);
}
