// The first step of every admission: the presented value (nothing, a token, a self-signed JWT, a
// credential issuer's JWT) becomes a Credential, read from this instance's caches or the store as
// the mode allows. One resolver per kind of credential, in RESOLVERS: adding a kind of credential
// is adding a row.
import { hasLimits, type TokenRecord } from '../domain/tokens.js';
import type { JwtSelector } from '../domain/issuers.js';
import type { Credential, SignedRefusal } from '../policy/evaluate.js';
import { looksLikeJwt, peekSelfSigned, signatureValid } from '../policy/self-signed.js';
import { peekJwt, type IssuerJwtMemo, type IssuerKeySource } from '../policy/issuer-jwt.js';
import { hashOf, type TokenLookup } from '../enforce/lookup.js';
import { carries, decodeSigned, revokedProblem, signedRequest, verifySigned, type SignedMemo } from '../policy/signed.js';
import type { Outside, SignedGrant } from '../policy/signed-common.js';
import type { IssuerRecord } from '../domain/issuers.js';

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

/** How issuers' JWTs are verified (docs/api.md#credential-issuers): their keys, the memo of verified JWTs, the clock. */
export interface IssuerVerification {
  keys: IssuerKeySource;
  memo: IssuerJwtMemo;
  /** Milliseconds since the epoch. */
  now(): number;
}

/** How signed URLs, cookies and CATs are verified (docs/api.md#signed-url-issuers). */
export interface SignedVerification {
  memo: SignedMemo;
  /** Milliseconds since the epoch. */
  now(): number;
  /** The country of an address (the geo lookup), for a CAT's catgeoiso3166 when no trusted header says. */
  countryOf(ip: string): string | undefined;
  /**
   * Marks `name` of the account used until `ttlMs` from now, across instances: true for exactly
   * one caller (a CAT whose catreplay prohibits reuse is admitted once).
   */
  useOnce(accountId: string, name: string, ttlMs: number): Promise<boolean>;
  /** The issuer with the keys its key references name (src/enforce/key-sources.ts); absent: records hold their keys. */
  keyed?(issuer: IssuerRecord): IssuerRecord | Promise<IssuerRecord>;
  /** Moves when a key read from a file or the environment changed: a grant verified across a change is not remembered. */
  keysGeneration?(): number;
}

/** What the resolvers read: the token and issuer lookups, and (absent: none accepted) issuer JWT and signed-URL verification. */
export interface CredentialSources {
  lookup: TokenLookup;
  issuers?: IssuerVerification;
  signed?: SignedVerification;
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
  fromMemory?(value: string, src: CredentialSources): Resolved | undefined;
  resolve(value: string, reading: Reading, src: CredentialSources, counter: LookupCounter | undefined, revChecked: boolean, probe?: boolean): Resolved | undefined | Promise<Resolved | undefined>;
}

/** Shared by every token-less request (nothing downstream changes a Resolved): no allocation for them. */
const NO_TOKEN: Resolved = { cred: { type: 'none' }, verified: true, ver: 0 };

const invalid = (detail: string, hash?: string, account?: string): Resolved => ({ cred: account === undefined ? { type: 'invalid', detail } : { type: 'invalid', detail, account }, verified: true, hash, ver: 0 });

/** A JWT no issuer claims and that is no self-signed token: refused as an unknown token is. */
const NO_ISSUER = 'no credential issuer claims this JWT (by its iss and kid), and it is not a self-signed token (no streaming claim)';

const bindsOnUsage = (t: TokenRecord): boolean => (t.bindIpsOnUsage ?? 0) > 0;

/** Whether a cached record may be taken unchecked: a store step after the decision checks its revision. */
const checkedLater = (t: TokenRecord, revChecked: boolean): boolean => bindsOnUsage(t) || (revChecked && hasLimits(t));

/** A self-signed subscribe JWT: its parent token by id (cached, else from the store), then its signature against the parent's value. */
async function selfSigned(value: string, reading: Reading, lookup: TokenLookup, revChecked: boolean): Promise<Resolved | undefined> {
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

/**
 * An issuer's JWT (docs/api.md#credential-issuers): the issuer its selector names (cached while its
 * account version holds, else from the store), its policy token as a self-signed token's parent is
 * read, then the JWT verified (or found in the memo of verified JWTs). The credential carries all
 * three: evaluate() applies the policy token's rules and the claims' narrowing.
 */
async function issuerJwt(value: string, sel: JwtSelector, reading: Reading, src: CredentialSources, revChecked: boolean): Promise<Resolved | undefined> {
  const cacheOnly = reading === 'cache';
  const v = src.issuers;
  if (v === undefined) return cacheOnly ? undefined : invalid(NO_ISSUER);
  const { lookup } = src;
  const found = cacheOnly ? lookup.peekIssuer(sel) : await lookup.issuerEntry(sel);
  if (!found) return cacheOnly ? undefined : invalid(NO_ISSUER);
  const { issuer } = found;
  const cached = reading === 'fresh' ? undefined : lookup.peekEntryById(issuer.policyTokenId);
  const unchecked = cacheOnly || (cached !== undefined && checkedLater(cached.token, revChecked));
  const entry = unchecked ? cached : await lookup.entryById(issuer.policyTokenId);
  if (!entry) return cacheOnly ? undefined : invalid(`issuer ${issuer.id}'s policy token ${issuer.policyTokenId} does not exist`, undefined, issuer.accountId);
  const policy = entry.token;
  // The API only names a token of the issuer's own account; a record that says otherwise decides nothing.
  if (policy.accountId !== issuer.accountId) return invalid(`issuer ${issuer.id}'s policy token ${policy.id} is not of its account`, undefined, issuer.accountId);
  const result = await v.memo.verify(value, issuer, v.keys, Math.floor(v.now() / 1000));
  if ('problem' in result) {
    const reason = result.expired ? 'token_expired' : result.disabled ? 'token_disabled' : undefined;
    return { cred: { type: 'invalid', detail: `issuer ${issuer.id}: ${result.problem}`, reason, account: issuer.accountId }, verified: true, ver: 0 };
  }
  return { cred: { type: 'issuer', issuer, policy, claims: result }, verified: !unchecked, ver: entry.ver };
}

/**
 * An issuer's JWT from memory alone: its issuer and policy token current by the store's in-process
 * account versions, the JWT remembered as verified with a key still held (src/policy/issuer-jwt.ts
 * IssuerJwtMemo.verifyNow). A self-signed token is the store path's, as before.
 */
function jwtFromMemory(value: string, src: CredentialSources): Resolved | undefined {
  const v = src.issuers;
  if (v === undefined) return undefined;
  const peek = peekJwt(value);
  if ('problem' in peek || peek.selfSigned) return undefined;
  const found = src.lookup.issuerNow(peek.sel);
  if (found === undefined) return undefined;
  const { issuer } = found;
  const entry = src.lookup.entryByIdNow(issuer.policyTokenId);
  if (entry === undefined || entry.token.accountId !== issuer.accountId) return undefined;
  const result = v.memo.verifyNow(value, issuer, v.keys, Math.floor(v.now() / 1000));
  // a refusal is the store path's to give (it reads the issuer and the policy token fresh)
  if (result === undefined || 'problem' in result) return undefined;
  return { cred: { type: 'issuer', issuer, policy: entry.token, claims: result }, verified: true, ver: entry.ver };
}

/** A JWT: a self-signed token (a streaming claim) or an issuer's, told apart by one peek at its payload. */
function jwtCredential(value: string, reading: Reading, src: CredentialSources, _counter: LookupCounter | undefined, revChecked: boolean): Promise<Resolved | undefined> | Resolved | undefined {
  const peek = peekJwt(value);
  if ('problem' in peek) return reading === 'cache' ? undefined : invalid(peek.problem);
  return peek.selfSigned ? selfSigned(value, reading, src.lookup, revChecked) : issuerJwt(value, peek.sel, reading, src, revChecked);
}

/** A plain token value: its record by the value's SHA-256, cached or from the store. */
function plainToken(value: string, reading: Reading, { lookup }: CredentialSources, counter: LookupCounter | undefined, revChecked: boolean): Resolved | undefined | Promise<Resolved> {
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
function plainFromMemory(value: string, { lookup }: CredentialSources): Resolved | undefined {
  const hash = hashOf(value);
  const entry = lookup.entryByHashNow(hash);
  if (entry === undefined) return undefined;
  return { cred: { type: 'token', token: entry.token }, verified: true, hash, ver: entry.ver };
}

/** A refused signed credential: 403 signature_invalid, as the CDNs that issue them answer. */
const signedInvalid = (detail: string, account?: string): Resolved => ({
  cred: account === undefined ? { type: 'invalid', detail, reason: 'signature_invalid' } : { type: 'invalid', detail, reason: 'signature_invalid', account },
  verified: true,
  ver: 0,
});

/** What a verified credential that does not cover the request is refused as. */
const OUTSIDE: Record<Outside, SignedRefusal> = { path: 'stream_not_allowed', address: 'ip_not_allowed', country: 'country_not_allowed' };

/**
 * A request's signed URL, cookies or CAT (src/policy/signed.ts encodeSigned): the account's
 * signed-URL issuers whose format the request carries, each verified (or found in the memo) until
 * one grants it; then its policy token, as an issuer JWT's is read. A CAT that prohibits reuse is
 * admitted once across instances (a probe, which binds nothing, does not use it up).
 */
async function signedCredential(value: string, reading: Reading, src: CredentialSources, revChecked: boolean, probe: boolean): Promise<Resolved | undefined> {
  const cacheOnly = reading === 'cache';
  const d = decodeSigned(value);
  const v = src.signed;
  if (d === undefined || v === undefined) return cacheOnly ? undefined : signedInvalid('signed-URL credentials are not accepted here');
  const { lookup } = src;
  const set = cacheOnly ? lookup.accountIssuersNow(d.accountId) : await lookup.accountIssuers(d.accountId);
  if (set === undefined) return undefined;
  const candidates = set.signed.filter((i) => carries(i, d.facts));
  if (candidates.length === 0) return cacheOnly ? undefined : signedInvalid(`no active signed-URL issuer of the account takes this request's credential`);
  const ip = d.facts.clientIp;
  const country = d.facts.country ?? (ip !== undefined ? v.countryOf(ip) : undefined);
  const now = Math.floor(v.now() / 1000);
  const req = signedRequest(d.facts, ip, country);
  let refusal: Resolved | undefined;
  for (const issuer of candidates) {
    let grant = v.memo.get(issuer, value, ip, country, now);
    let verifiedAt: number | undefined;
    if (grant === undefined) {
      verifiedAt = v.keysGeneration?.();
      const k = v.keyed?.(issuer) ?? issuer;
      if (k instanceof Promise && cacheOnly) return undefined;
      const r = verifySigned(k instanceof Promise ? await k : k, req, now);
      if (!r.ok) {
        const reason = r.expired ? 'signature_expired' : r.outside !== undefined ? OUTSIDE[r.outside] : 'signature_invalid';
        refusal ??= { cred: { type: 'invalid', detail: `issuer ${issuer.id}: ${r.problem}`, reason, account: issuer.accountId }, verified: true, ver: 0 };
        continue;
      }
      grant = r.grant;
    }
    const revoked = revokedProblem(issuer, grant);
    if (revoked !== null) return signedInvalid(`issuer ${issuer.id}: ${revoked}`, issuer.accountId);
    const cached = reading === 'fresh' ? undefined : lookup.peekEntryById(issuer.policyTokenId);
    const unchecked = cacheOnly || (cached !== undefined && checkedLater(cached.token, revChecked));
    const entry = unchecked ? cached : await lookup.entryById(issuer.policyTokenId);
    if (!entry) return cacheOnly ? undefined : signedInvalid(`issuer ${issuer.id}'s policy token ${issuer.policyTokenId} does not exist`, issuer.accountId);
    if (entry.token.accountId !== issuer.accountId) return signedInvalid(`issuer ${issuer.id}'s policy token ${entry.token.id} is not of its account`, issuer.accountId);
    if (grant.replay === 'prohibited' && !probe) {
      if (cacheOnly) return undefined;
      const ttl = Math.max(1000, ((grant.exp ?? now + 86_400) + issuer.clockSkewSeconds - now) * 1000);
      if (!(await v.useOnce(issuer.accountId, `cat-replay:${issuer.id}:${grant.id}`, ttl))) {
        return { cred: { type: 'invalid', detail: `issuer ${issuer.id}: the token prohibits reuse (catreplay 1) and was presented before`, reason: 'uses_exhausted', account: issuer.accountId }, verified: true, ver: 0 };
      }
    }
    // a key that changed while this was decided (a rotation read meanwhile): decided, not remembered
    if (verifiedAt === v.keysGeneration?.()) v.memo.set(issuer, value, ip, country, grant);
    return { cred: { type: 'signed', issuer, policy: entry.token, grant }, verified: !unchecked, ver: entry.ver };
  }
  return refusal;
}

/** A signed credential from memory alone: a remembered grant, its issuer and policy token current by in-process account versions. */
function signedFromMemory(value: string, src: CredentialSources): Resolved | undefined {
  const v = src.signed;
  const d = decodeSigned(value);
  if (v === undefined || d === undefined) return undefined;
  const set = src.lookup.accountIssuersNow(d.accountId);
  if (set === undefined) return undefined;
  const ip = d.facts.clientIp;
  const country = d.facts.country ?? (ip !== undefined ? v.countryOf(ip) : undefined);
  const now = Math.floor(v.now() / 1000);
  let issuer: IssuerRecord | undefined;
  let grant: SignedGrant | undefined;
  for (const i of set.signed) {
    grant = v.memo.get(i, value, ip, country, now);
    if (grant !== undefined) {
      issuer = i;
      break;
    }
  }
  if (issuer === undefined || grant === undefined || revokedProblem(issuer, grant) !== null) return undefined;
  const entry = src.lookup.entryByIdNow(issuer.policyTokenId);
  if (entry === undefined || entry.token.accountId !== issuer.accountId) return undefined;
  return { cred: { type: 'signed', issuer, policy: entry.token, grant }, verified: true, ver: entry.ver };
}

/** The resolver of a request's signed credential (AccessRequest.signed), never of a presented token value. */
const SIGNED: Resolver = {
  kind: 'signed URL',
  presents: () => false,
  fromMemory: signedFromMemory,
  resolve: (v, reading, src, _counter, revChecked, probe) => signedCredential(v, reading, src, revChecked, probe ?? false),
};

/** The kinds of credential, in the order a presented value is tried against them. */
const RESOLVERS: readonly Resolver[] = [
  // a token-less request: decided on its account's streams (secured or open), which memory alone does not tell
  { kind: 'none', presents: (v) => v === '', resolve: () => NO_TOKEN },
  { kind: 'too long', presents: (v) => v.length > MAX_TOKEN_LENGTH, resolve: (_v, reading) => (reading === 'cache' ? undefined : invalid('token too long')) },
  // a self-signed JWT, or a credential issuer's: one peek at the payload tells them apart
  { kind: 'JWT', presents: looksLikeJwt, fromMemory: jwtFromMemory, resolve: jwtCredential },
  { kind: 'plain token', presents: () => true, fromMemory: plainFromMemory, resolve: plainToken },
];

/** The resolver of a presented value ('' for none), or of a request's signed credential. */
function resolverOf(value: string, signed = false): Resolver {
  if (signed) return SIGNED;
  for (let i = 0; i < RESOLVERS.length; i++) if (RESOLVERS[i].presents(value)) return RESOLVERS[i];
  throw new TypeError('no credential resolver takes this value'); // the last row takes every value
}

/**
 * A presented value resolved from this instance's memory alone, when memory can vouch for it;
 * undefined otherwise (nothing presented included: a token-less request needs its account's
 * secured streams), and the admission is made with the store.
 */
export function resolveNow(value: string | undefined, src: CredentialSources, signed?: string): Resolved | undefined {
  if (signed !== undefined) return SIGNED.fromMemory?.(signed, src);
  const v = value ?? '';
  return resolverOf(v).fromMemory?.(v, src);
}

/** A request's signed credential (AccessRequest.signed), and whether the resolution is a probe (binding nothing). */
export interface Signed {
  value: string;
  probe?: boolean;
}

/**
 * Resolves a presented token value, or with `signed` the request's signed credential. With the store ('optimistic', 'fresh') an unknown, malformed
 * or badly signed value is an 'invalid' credential. With 'cache', undefined when the caches cannot
 * vouch for the value either way (nothing cached for it, or a value only the store could judge):
 * the caller answers that the store is unavailable.
 */
export function resolveCredential(value: string | undefined, reading: 'optimistic' | 'fresh', src: CredentialSources, counter?: LookupCounter, revChecked?: boolean, signed?: Signed): Promise<Resolved>;
export function resolveCredential(value: string | undefined, reading: Reading, src: CredentialSources, counter?: LookupCounter, revChecked?: boolean, signed?: Signed): Promise<Resolved | undefined>;
export function resolveCredential(
  value: string | undefined,
  reading: Reading,
  src: CredentialSources,
  counter?: LookupCounter,
  revChecked = false,
  signed?: Signed,
): Promise<Resolved | undefined> {
  const v = signed?.value ?? value ?? '';
  const r = resolverOf(v, signed !== undefined).resolve(v, reading, src, counter, revChecked, signed?.probe);
  return r instanceof Promise ? r : Promise.resolve(r);
}
