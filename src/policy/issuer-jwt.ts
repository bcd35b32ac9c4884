// JWTs signed by an account's own issuers (docs/api.md#credential-issuers): the selector read
// without verifying, the signature checked with the issuer's secret or public keys, the claims read
// through its claim map, and a memo so that a JWT presented again costs no signature check. No I/O:
// the keys come from an IssuerKeySource (src/enforce/issuer-keys.ts fetches JWKS URLs), the clock is
// an argument. A verified credential can only narrow its issuer's policy token (credentialProblem).
import RE2 from 're2';
import { LRUCache } from 'lru-cache';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { ISSUER_ALGORITHMS, isHmac, selectorKey, type IssuerRecord, type JwtSelector } from '../domain/issuers.js';
import { subjectOf } from '../domain/sharing.js';
import { MAX_NAME, ipRuleProblem, patternCostProblem, wellFormed } from '../domain/matchers.js';
import { type Action, mediamtxAction } from '../contracts/decision.js';
import { ipInRanges, parseCidrs } from './rules.js';
import { digestOf } from './digests.js';
import { MAX_JWT_LENGTH, looksLikeJwt } from './self-signed.js';

/** A key id is compared, never used as a path or a URL; the bound keeps hostile ones out of logs and maps. */
export const MAX_KID_LENGTH = 256;
/** Entries of a MediaMTX permissions claim read; more is refused rather than cut. */
export const MAX_PERMISSIONS = 100;
const MAX_CLAIM_TEXT = 1024;

type Problem = { problem: string };
/**
 * A refusal: the reason (never the token), and whether it is only that the JWT has expired or its
 * issuer is disabled (answered as token_expired and token_disabled; every other as token_invalid).
 */
export type IssuerJwtProblem = { problem: string; expired?: true; disabled?: true };

const DISABLED: IssuerJwtProblem = { problem: 'the issuer is disabled', disabled: true };

const isProblem = (v: unknown): v is Problem => typeof v === 'object' && v !== null && 'problem' in v;

/** Where a JWT's key id is: the header's `kid`, else the payload's (Mux puts it there). */
function kidOf(header: Record<string, unknown>, payload: Record<string, unknown>): { kid: string | null } | Problem {
  const h = header.kid;
  const p = payload.kid;
  for (const [where, v] of [
    ['header', h],
    ['payload', p],
  ] as const) {
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '') return { problem: `the ${where} kid is not a non-empty string` };
    if (v.length > MAX_KID_LENGTH) return { problem: `the ${where} kid is longer than ${MAX_KID_LENGTH} characters` };
  }
  // Two different key ids would let one select the issuer and the other the key.
  if (typeof h === 'string' && typeof p === 'string' && h !== p) return { problem: 'the header kid and the payload kid differ' };
  return { kid: (h as string | undefined) ?? (p as string | undefined) ?? null };
}

interface Decoded {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

function decode(value: string): Decoded | Problem {
  // the shape a self-signed token has too, with a signature (an unsigned JWT is never an issuer's)
  if (typeof value !== 'string' || !looksLikeJwt(value) || value.endsWith('.')) {
    return { problem: `not a signed JWT of at most ${MAX_JWT_LENGTH} characters` };
  }
  try {
    return { header: decodeProtectedHeader(value) as Record<string, unknown>, payload: decodeJwt(value) as Record<string, unknown> };
  } catch {
    return { problem: 'not a decodable JWT' };
  }
}

/**
 * What a JWT-shaped value is, without verifying anything: a self-signed token (its payload has a
 * `streaming` claim: src/policy/self-signed.ts reads it), or an issuer's JWT and its selector
 * ({ iss, kid }: src/domain/issuers.ts selectIssuer). Two base64 decodes and two JSON parses of at
 * most 8 KiB: it runs for every JWT-shaped credential presented.
 */
export function peekJwt(value: string): JwtPeek {
  let p = peeks.get(value);
  if (p === undefined) {
    p = peekOnce(value);
    if (peeks.size >= PEEKS_MAX) peeks.clear();
    peeks.set(value, p);
  }
  return p;
}

type JwtPeek = { selfSigned: true } | { selfSigned: false; sel: JwtSelector } | Problem;

/** peekJwt's answers for the values presented lately (a viewer presents the same JWT on every request); emptied when full. */
const peeks = new Map<string, JwtPeek>();
const PEEKS_MAX = 10_000;

function peekOnce(value: string): JwtPeek {
  const d = decode(value);
  if (isProblem(d)) return d;
  if (Object.hasOwn(d.payload, 'streaming')) return { selfSigned: true };
  const iss = d.payload.iss;
  if (iss !== undefined && (typeof iss !== 'string' || iss === '')) return { problem: 'iss is not a non-empty string' };
  const k = kidOf(d.header, d.payload);
  if (isProblem(k)) return k;
  const sel: JwtSelector = { iss: (iss as string | undefined) ?? null, kid: k.kid };
  sel.key = selectorKey(sel);
  return { selfSigned: false, sel };
}

/** The selector of an issuer's JWT (peekJwt), or why the value is not one. */
export function peekIssuerJwt(value: string): JwtSelector | Problem {
  const p = peekJwt(value);
  if (isProblem(p)) return p;
  return p.selfSigned ? { problem: 'a self-signed token (it has a streaming claim), not an issuer JWT' } : { iss: p.sel.iss, kid: p.sel.kid };
}

// ---- keys -----------------------------------------------------------------------------------

/**
 * Where an issuer's public keys come from: its inline JWKs and its JWKS URL. `keysFor` answers the
 * public JWKs that may hold `kid` (every key when the JWT names none); a source fetching a URL
 * may refetch it once, rate-limited, when no key has `kid`. The array and its objects must stay
 * the same between calls while the set is unchanged (imported keys are cached by object).
 */
export interface IssuerKeySource {
  keysFor(issuer: IssuerRecord, kid: string | null): Promise<{ keys: readonly JWK[] } | Problem>;
  /** keysFor without a wait: the keys when they are at hand and need no fetch (fresh, `kid` among them), else undefined. */
  keysNow?(issuer: IssuerRecord, kid: string | null): { keys: readonly JWK[] } | undefined;
}

/** The key type (and curve) each asymmetric algorithm verifies with. */
const KEY_FAMILY: Record<string, { kty: string; crv?: string[] }> = {
  RS256: { kty: 'RSA' },
  RS384: { kty: 'RSA' },
  RS512: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  PS384: { kty: 'RSA' },
  PS512: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: ['P-256'] },
  ES384: { kty: 'EC', crv: ['P-384'] },
  ES512: { kty: 'EC', crv: ['P-521'] },
  EdDSA: { kty: 'OKP', crv: ['Ed25519'] },
};

/** Members of a private or symmetric JWK: a set holding one is refused, not trimmed (it was published by mistake). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * The verification keys of a JWK set as a source answers them: public RSA, EC and OKP keys for
 * signatures. A symmetric (`oct`) key or any private member refuses the whole set, so a shared
 * secret can never reach a public-key check; keys only for encryption, or of another type, are left out.
 */
export function publicJwks(set: unknown, maxKeys: number): { keys: JWK[] } | Problem {
  if (typeof set !== 'object' || set === null || !Array.isArray((set as { keys?: unknown }).keys)) return { problem: 'not a JWK set (an object with a keys array)' };
  const keys = (set as { keys: unknown[] }).keys;
  if (keys.length > maxKeys) return { problem: `more than ${maxKeys} keys` };
  const out: JWK[] = [];
  for (const [i, k] of keys.entries()) {
    if (typeof k !== 'object' || k === null || Array.isArray(k)) return { problem: `keys[${i}] is not an object` };
    const jwk = k as Record<string, unknown>;
    if (jwk.kty === 'oct') return { problem: `keys[${i}] is a symmetric key: only public keys verify here` };
    if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(jwk, m))) return { problem: `keys[${i}] holds private key material` };
    if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid.length > MAX_KID_LENGTH)) return { problem: `keys[${i}].kid is not a string of at most ${MAX_KID_LENGTH} characters` };
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (Array.isArray(jwk.key_ops) && !jwk.key_ops.includes('verify')) continue;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') continue;
    out.push(Object.freeze(Object.assign({}, jwk)) as JWK);
  }
  return { keys: out };
}

/** Whether `jwk` can verify `alg` for a JWT naming `kid`. */
function keyFits(jwk: JWK, alg: string, kid: string | null): boolean {
  const fam = KEY_FAMILY[alg];
  if (!fam || jwk.kty !== fam.kty) return false;
  if (fam.crv && !fam.crv.includes(jwk.crv as string)) return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  return kid === null || jwk.kid === kid;
}

/** Imported keys by JWK object and algorithm: a WebCrypto key is bound to one algorithm. */
const imported = new WeakMap<JWK, Map<string, Promise<CryptoKey | Uint8Array>>>();

function importOnce(jwk: JWK, alg: string): Promise<CryptoKey | Uint8Array> {
  let byAlg = imported.get(jwk);
  if (!byAlg) {
    byAlg = new Map();
    imported.set(jwk, byAlg);
  }
  let key = byAlg.get(alg);
  if (!key) {
    key = importJWK(jwk, alg);
    const cache = byAlg;
    // A key that does not import is not kept: the next presentation tries again (and fails the same way).
    key.catch(() => cache.delete(alg));
    byAlg.set(alg, key);
  }
  return key;
}

async function signatureHolds(value: string, key: CryptoKey | Uint8Array, alg: string): Promise<boolean> {
  try {
    // One algorithm, already checked against the issuer's: jose refuses a key of another kind.
    await compactVerify(value, key, { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

/** Whether two public JWKs are the same key (sets fetched again hold new objects for the same keys). */
function sameKey(a: JWK, b: JWK): boolean {
  return a.kty === b.kty && a.kid === b.kid && a.n === b.n && a.e === b.e && a.crv === b.crv && a.x === b.x && a.y === b.y;
}

/**
 * Whether the public key that verified a remembered JWT is still among the issuer's keys (a stale
 * JWKS set is fetched again first, as for a verification): a key dropped from the set stops every
 * JWT it verified, not only new ones.
 */
async function keyStillHeld(key: JWK, kid: string | null, issuer: IssuerRecord, keys: IssuerKeySource): Promise<boolean> {
  const found = await keys.keysFor(issuer, kid);
  return !isProblem(found) && found.keys.some((k) => sameKey(k, key));
}

/**
 * The signature check: HMAC only with the issuer's secret, public-key algorithms only with its
 * public JWKs (so a public key is never an HMAC secret, and a secret never a public key). The
 * public key that verified it (null for HMAC), or the problem.
 */
async function signatureProblem(value: string, alg: string, kid: string | null, issuer: IssuerRecord, keys: IssuerKeySource): Promise<{ key: JWK | null } | string> {
  if (isHmac(alg)) {
    if (issuer.secret === null || issuer.secret === '') return `${alg} needs the issuer's secret and it has none`;
    return (await signatureHolds(value, new TextEncoder().encode(issuer.secret), alg)) ? { key: null } : 'the signature does not verify';
  }
  const found = await keys.keysFor(issuer, kid);
  if (isProblem(found)) return `no keys: ${found.problem}`;
  const candidates = found.keys.filter((k) => keyFits(k, alg, kid));
  if (candidates.length === 0) return kid === null ? `no ${alg} key among the issuer's keys` : `no ${alg} key with the JWT's kid among the issuer's keys`;
  for (const jwk of candidates) {
    let key: CryptoKey | Uint8Array;
    try {
      key = await importOnce(jwk, alg);
    } catch {
      continue;
    }
    if (await signatureHolds(value, key, alg)) return { key: jwk };
  }
  return 'the signature does not verify';
}

// ---- claims ---------------------------------------------------------------------------------

/** One entry of a MediaMTX permissions claim; `re` is the vetted, compiled `~regexp`. */
export interface IssuerPermission {
  action: string;
  path: string;
  re?: RE2;
}

/** What a verified issuer JWT allows and says, read through the issuer's claim map. */
export interface IssuerCredential {
  issuerId: number;
  stream?: string;
  permissions?: IssuerPermission[];
  action?: Action;
  /** Set (true or false) only when the claim map names the claim: then only `true` allows. */
  canPublish?: boolean;
  canSubscribe?: boolean;
  /** IPv4 addresses or CIDR blocks the request must come from. */
  address?: string[];
  viewerId?: string;
  exp: number;
  nbf?: number;
  iat?: number;
  jti?: string;
  sub?: string;
  kid?: string;
}

/**
 * A claim by its path: the top-level claim of that exact name first (`aws:channel-arn`, or a name
 * holding dots), else a dotted path through objects (`video.room`). Own properties only.
 */
export function claimAt(payload: Record<string, unknown>, path: string): unknown {
  if (Object.hasOwn(payload, path)) return payload[path];
  let v: unknown = payload;
  for (const part of path.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v) || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

const ACTION_WORDS: Record<string, Action> = { publish: 'publish', subscribe: 'subscribe', read: 'subscribe', play: 'subscribe', playback: 'subscribe' };

/** Compiled MediaMTX regexps by source: vetted once, a bounded few kept. */
const permissionRegexps = new LRUCache<string, RE2>({ max: 500 });

/**
 * A `~regexp` path as MediaMTX reads it (Go syntax, unanchored), compiled only after the cost
 * check Streamgate applies to every user pattern (docs/api.md#pattern-cost): an issuer's signature
 * does not make an unvetted regular expression safe to run.
 */
function permissionRegexp(source: string): RE2 | Problem {
  const hit = permissionRegexps.get(source);
  if (hit) return hit;
  const cost = patternCostProblem(source);
  if (cost !== null) return { problem: cost };
  try {
    const re = new RE2(source, 'u');
    permissionRegexps.set(source, re);
    return re;
  } catch (e) {
    return { problem: `not a valid regular expression for the RE2 engine: ${(e as Error).message}` };
  }
}

/** A MediaMTX permissions claim (an array, or a JSON string of one) as entries, regexps vetted. */
export function readPermissions(v: unknown, claim: string): IssuerPermission[] | Problem {
  let list = v;
  if (typeof v === 'string') {
    if (v.length > MAX_PERMISSIONS * MAX_CLAIM_TEXT) return { problem: `claim ${claim} is too long` };
    try {
      list = JSON.parse(v);
    } catch {
      return { problem: `claim ${claim} is a string but not a JSON array` };
    }
  }
  if (!Array.isArray(list)) return { problem: `claim ${claim} is not an array of permissions` };
  if (list.length > MAX_PERMISSIONS) return { problem: `claim ${claim} has more than ${MAX_PERMISSIONS} entries` };
  const out: IssuerPermission[] = [];
  for (const [i, e] of list.entries()) {
    const entry = e as { action?: unknown; path?: unknown } | null;
    if (typeof entry !== 'object' || entry === null || typeof entry.action !== 'string') return { problem: `claim ${claim}[${i}] has no action` };
    const path = entry.path ?? '';
    if (typeof path !== 'string' || path.length > MAX_CLAIM_TEXT || !wellFormed(path)) return { problem: `claim ${claim}[${i}].path is not a string of at most ${MAX_CLAIM_TEXT} characters` };
    if (path.startsWith('~')) {
      const re = permissionRegexp(path.slice(1));
      if (isProblem(re)) return { problem: `claim ${claim}[${i}].path: ${re.problem}` };
      out.push({ action: entry.action, path, re });
    } else {
      out.push({ action: entry.action, path });
    }
  }
  return out;
}

/** Whether a permissions entry allows `action` on `stream`: a path "" is any stream, "~re" an unanchored match. */
export function permissionAllows(p: IssuerPermission, stream: string, action: Action): boolean {
  if (mediamtxAction(p.action) !== action) return false;
  if (p.path === '') return true;
  return p.re ? p.re.test(stream) : p.path === stream;
}

const optionalString = (payload: Record<string, unknown>, name: string): string | undefined | Problem => {
  const v = payload[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > MAX_CLAIM_TEXT) return { problem: `${name} is not a string of at most ${MAX_CLAIM_TEXT} characters` };
  return v;
};

/** The credential the claim map reads from a verified payload, or the claim that is wrong. */
function readClaims(payload: Record<string, unknown>, issuer: IssuerRecord, kid: string | null): IssuerCredential | Problem {
  const m = issuer.claims;
  const exp = payload.exp;
  if (exp === undefined) return { problem: 'exp is required' };
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return { problem: 'exp is not a number' };
  const cred: IssuerCredential = { issuerId: issuer.id, exp };
  for (const k of ['nbf', 'iat'] as const) {
    const v = payload[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) return { problem: `${k} is not a number` };
    cred[k] = v;
  }
  for (const k of ['jti', 'sub'] as const) {
    const v = optionalString(payload, k);
    if (isProblem(v)) return v;
    if (v !== undefined) cred[k] = v;
  }
  if (kid !== null) cred.kid = kid;

  if (m.permissions) {
    const perms = readPermissions(claimAt(payload, m.permissions), m.permissions);
    if (isProblem(perms)) return perms;
    cred.permissions = perms;
  } else {
    const claim = m.stream || 'sub';
    const stream = claimAt(payload, claim);
    if (typeof stream !== 'string' || stream === '' || stream.length > MAX_NAME || !wellFormed(stream)) {
      return { problem: `claim ${claim} (the stream) is not a name of 1 to ${MAX_NAME} characters` };
    }
    cred.stream = stream;
  }
  if (m.action) {
    const v = claimAt(payload, m.action);
    const action = typeof v === 'string' && Object.hasOwn(ACTION_WORDS, v) ? ACTION_WORDS[v] : undefined;
    if (action === undefined) return { problem: `claim ${m.action} (the action) is not publish, subscribe, read, play or playback` };
    cred.action = action;
  }
  for (const k of ['canPublish', 'canSubscribe'] as const) {
    const claim = m[k];
    if (!claim) continue;
    const v = claimAt(payload, claim);
    if (v !== undefined && typeof v !== 'boolean') return { problem: `claim ${claim} is not true or false` };
    // Only an explicit true allows: a missing claim narrows, whatever the issuer's own default.
    cred[k] = v === true;
  }
  if (m.address) {
    const v = claimAt(payload, m.address);
    const list = typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v;
    if (!Array.isArray(list) || list.length === 0 || list.length > 100 || list.some((a) => typeof a !== 'string' || ipRuleProblem(a) !== null)) {
      return { problem: `claim ${m.address} (the address) is not an IPv4 address, CIDR block or a list of them` };
    }
    cred.address = list as string[];
  }
  if (m.viewerId) {
    const v = claimAt(payload, m.viewerId);
    if (v !== undefined) {
      if (typeof v !== 'string' || v === '' || v.length > MAX_CLAIM_TEXT) return { problem: `claim ${m.viewerId} (the viewer id) is not a string of at most ${MAX_CLAIM_TEXT} characters` };
      cred.viewerId = v;
    }
  }
  return cred;
}

/**
 * What refuses a credential that verified, checked again whenever it is used (a memo hit too):
 * the issuer disabled, its revoked ids, and time. `exp` is refused once `now` reaches it plus the
 * issuer's skew; `nbf` and `iat` later than `now` plus the skew are refused too.
 */
export function standingProblem(cred: IssuerCredential, issuer: IssuerRecord, nowSeconds: number): IssuerJwtProblem | null {
  if (!issuer.isActive) return DISABLED;
  const skew = issuer.clockSkewSeconds;
  if (cred.exp + skew <= nowSeconds) return { problem: 'the JWT has expired', expired: true };
  if (cred.nbf !== undefined && cred.nbf > nowSeconds + skew) return { problem: 'the JWT is not valid yet (nbf)' };
  if (cred.iat !== undefined && cred.iat > nowSeconds + skew) return { problem: 'the JWT was issued in the future (iat)' };
  const r = issuer.revoked;
  if (cred.jti !== undefined && r.jti.includes(cred.jti)) return { problem: 'its jti is revoked' };
  if (cred.sub !== undefined && r.sub.includes(cred.sub)) return { problem: 'its sub is revoked' };
  if (cred.kid !== undefined && r.kid.includes(cred.kid)) return { problem: 'its kid is revoked' };
  return null;
}

/** The lifetime bound: `exp` at most maxLifetimeSeconds after `iat`, or after now without `iat`. */
function lifetimeProblem(cred: IssuerCredential, issuer: IssuerRecord, nowSeconds: number): string | null {
  const max = issuer.maxLifetimeSeconds;
  if (max === null) return null;
  const from = cred.iat ?? nowSeconds;
  return cred.exp - from > max ? `exp is more than ${max} s after ${cred.iat === undefined ? 'now' : 'iat'}` : null;
}

function audienceProblem(aud: unknown, allowed: readonly string[]): string | null {
  if (allowed.length === 0) return null;
  const list = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : undefined;
  if (list === undefined || list.length === 0) return 'aud is required';
  return list.some((a) => typeof a === 'string' && allowed.includes(a)) ? null : 'aud is not one the issuer accepts';
}

/**
 * Verifies `value` as a JWT of `issuer` at `nowSeconds`: the algorithm among the issuer's (never
 * `none`), the signature (HMAC with its secret, else its public keys), `iss`, `aud`, `exp`
 * (required), `nbf`, `iat`, the lifetime bound, revocation, then the claims through the claim
 * map. Revocation is checked after the signature, so a forged JWT learns nothing of the lists.
 * The problem names what failed, never the token.
 */
export async function verifyIssuerJwt(value: string, issuer: IssuerRecord, keys: IssuerKeySource, nowSeconds: number): Promise<IssuerCredential | IssuerJwtProblem> {
  const r = await verifyKeyed(value, issuer, keys, nowSeconds);
  return isProblem(r) ? r : r.cred;
}

/** verifyIssuerJwt, with the public key that verified the signature (null for HMAC). */
async function verifyKeyed(value: string, issuer: IssuerRecord, keys: IssuerKeySource, nowSeconds: number): Promise<{ cred: IssuerCredential; key: JWK | null } | IssuerJwtProblem> {
  if (!issuer.isActive) return DISABLED;
  const d = decode(value);
  if (isProblem(d)) return d;
  const { header, payload } = d;
  const alg = header.alg;
  if (typeof alg !== 'string' || !(ISSUER_ALGORITHMS as readonly string[]).includes(alg) || !(issuer.algorithms as readonly string[]).includes(alg)) {
    return { problem: `algorithm ${typeof alg === 'string' ? alg.slice(0, 16) : String(alg)} is not one the issuer allows (${issuer.algorithms.join(', ')})` };
  }
  // An unencoded payload, or extensions the verifier must understand: nothing an issuer here uses.
  if (header.b64 !== undefined || header.crit !== undefined) return { problem: 'the JWT header has b64 or crit' };
  const k = kidOf(header, payload);
  if (isProblem(k)) return k;
  const iss = payload.iss ?? null;
  if (iss !== issuer.issuer) return { problem: issuer.issuer === null ? 'iss is present and the issuer expects none' : "iss is not the issuer's" };
  if (issuer.keyIds.length > 0 && (k.kid === null || !issuer.keyIds.includes(k.kid))) return { problem: "kid is not one of the issuer's key ids" };

  const sig = await signatureProblem(value, alg, k.kid, issuer, keys);
  if (typeof sig === 'string') return { problem: sig };

  const aud = audienceProblem(payload.aud, issuer.audience);
  if (aud !== null) return { problem: aud };
  const cred = readClaims(payload, issuer, k.kid);
  if (isProblem(cred)) return cred;
  const lifetime = lifetimeProblem(cred, issuer, nowSeconds);
  if (lifetime !== null) return { problem: lifetime };
  return standingProblem(cred, issuer, nowSeconds) ?? { cred, key: sig.key };
}

/** The claim path that names the stream in `issuer`'s credentials (permissions, else stream, else sub). */
export const streamClaimOf = (issuer: Pick<IssuerRecord, 'claims'>): string => issuer.claims.permissions ?? (issuer.claims.stream || 'sub');

/**
 * The subject token sharing counts a credential's uses under (docs/api.md#token-sharing): the viewer
 * claim when the claim map names one, else `sub` unless it names the stream, else `jti`; none else.
 */
export function jwtSubject(cred: IssuerCredential, issuer: Pick<IssuerRecord, 'claims'>): string | undefined {
  const viewer = issuer.claims.viewerId;
  if (cred.viewerId !== undefined) return subjectOf(viewer === 'sub' ? 'sub' : viewer === 'jti' ? 'jti' : 'viewer', cred.viewerId);
  if (cred.sub !== undefined && cred.sub !== '' && streamClaimOf(issuer) !== 'sub') return subjectOf('sub', cred.sub);
  if (cred.jti !== undefined && cred.jti !== '') return subjectOf('jti', cred.jti);
  return undefined;
}

/** Whether the credential's stream claim (or a permissions entry) allows `action` on `streamName`, as a problem or null. */
export function streamClaimProblem(cred: IssuerCredential, issuer: Pick<IssuerRecord, 'claims'>, streamName: string, action: Action): string | null {
  const claim = streamClaimOf(issuer);
  if (cred.permissions) {
    return cred.permissions.some((p) => permissionAllows(p, streamName, action)) ? null : `no entry of claim ${claim} allows ${action} on '${streamName}'`;
  }
  return cred.stream === streamName ? null : `claim ${claim} names stream '${cred.stream}'`;
}

/** Whether the credential's action claims (action, canPublish, canSubscribe) allow `action`, as a problem or null. */
export function actionClaimProblem(cred: IssuerCredential, issuer: Pick<IssuerRecord, 'claims'>, action: Action): string | null {
  const m = issuer.claims;
  if (cred.action !== undefined && cred.action !== action) return `claim ${m.action} says ${cred.action}`;
  if (action === 'publish' && cred.canPublish === false) return `claim ${m.canPublish} is not true: the credential may not publish`;
  if (action === 'subscribe' && cred.canSubscribe === false) return `claim ${m.canSubscribe} is not true: the credential may not subscribe`;
  return null;
}

/** Whether the credential's address claim (if it has one) holds `clientIp`, as a problem or null. */
export function addressClaimProblem(cred: IssuerCredential, issuer: Pick<IssuerRecord, 'claims'>, clientIp: string | undefined): string | null {
  if (cred.address === undefined) return null;
  if (clientIp === undefined) return `the client address is unknown, and claim ${issuer.claims.address} restricts addresses`;
  return ipInRanges(clientIp, parseCidrs(cred.address)) ? null : `address ${clientIp} is not in claim ${issuer.claims.address}`;
}

/**
 * What a verified credential allows of a request, as a problem or null. The narrowing rule: a
 * credential can only narrow its policy token (whose rules are evaluated as well: src/policy/evaluate.ts
 * runs these checks within its own), so each claim the map reads must allow the request: the stream
 * (or a permissions entry), the action, the canPublish/canSubscribe flag, the address.
 */
export function credentialProblem(cred: IssuerCredential, issuer: Pick<IssuerRecord, 'claims'>, req: { streamName: string; action: Action; clientIp?: string }): string | null {
  return streamClaimProblem(cred, issuer, req.streamName, req.action) ?? actionClaimProblem(cred, issuer, req.action) ?? addressClaimProblem(cred, issuer, req.clientIp);
}

// ---- memo -----------------------------------------------------------------------------------

/**
 * Verified JWTs by issuer id, its record's rev and the SHA-256 of the value, until their `exp`:
 * a JWT presented again costs a hash instead of a signature check. Any write of the issuer
 * (disabling it, revoking an id, new keys or claims) moves its rev, so nothing verified under the
 * old record is found; standingProblem (disabled, revoked ids, time) runs again on every hit, and
 * so does the check that the public key that verified it is still one of the issuer's keys (a key
 * dropped from its JWKS ends the JWTs it verified at the set's next refresh).
 */
export class IssuerJwtMemo {
  private readonly entries: LRUCache<string, { cred: IssuerCredential; key: JWK | null }>;

  constructor(maxEntries: number) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * verify() from memory alone, without a wait: a remembered JWT whose standing and key the memo
   * and the key source can vouch for at once; undefined when only verify() can tell (not
   * remembered, or its key set needs a fetch).
   */
  verifyNow(value: string, issuer: IssuerRecord, keys: IssuerKeySource, nowSeconds: number): IssuerCredential | IssuerJwtProblem | undefined {
    const hit = this.entries.get(`${issuer.id}:${issuer.rev}:${digestOf(value)}`);
    if (hit === undefined) return undefined;
    const standing = standingProblem(hit.cred, issuer, nowSeconds);
    if (standing !== null) return standing.expired ? undefined : standing;
    if (hit.key === null) return hit.cred;
    const key = hit.key;
    return keys.keysNow?.(issuer, hit.cred.kid ?? null)?.keys.some((k) => sameKey(k, key)) ? hit.cred : undefined;
  }

  async verify(value: string, issuer: IssuerRecord, keys: IssuerKeySource, nowSeconds: number): Promise<IssuerCredential | IssuerJwtProblem> {
    const id = `${issuer.id}:${issuer.rev}:${digestOf(value)}`;
    const hit = this.entries.get(id);
    if (hit) {
      const standing = standingProblem(hit.cred, issuer, nowSeconds);
      if (standing !== null) {
        // Expired (a revocation moves the rev, so it is never found here): of no further use.
        if (standing.expired) this.entries.delete(id);
        return standing;
      }
      if (hit.key === null || (await keyStillHeld(hit.key, hit.cred.kid ?? null, issuer, keys))) return hit.cred;
      this.entries.delete(id);
      return { problem: "the key that verified it is no longer among the issuer's keys" };
    }
    const result = await verifyKeyed(value, issuer, keys, nowSeconds);
    if (isProblem(result)) return result;
    this.entries.set(id, result);
    return result.cred;
  }
}
