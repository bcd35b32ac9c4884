// A request's signed URL, signed cookies or CAT, for the signed-URL issuers of its account
// (docs/api.md#signed-url-issuers): which issuer's format the request carries, and its verification
// with that issuer's settings and keys. The request travels to the credential resolver as one value
// (encodeSigned): what a verifier reads of it, and nothing else.
import { randomBytes } from 'node:crypto';
import { Tag } from 'cbor-x';
import ipaddr from 'ipaddr.js';
import { parse as parseCookie } from 'cookie';
import { LRUCache } from 'lru-cache';
import type { IssuerRecord, SignedSettings } from '../domain/issuers.js';
import { rawParams, type SignedGrant, type SignedRequest, type SignedResult } from './signed-common.js';
import { findEdgeAuth, signEdgeAuth, verifyEdgeAuth } from './signed-akamai.js';
import { findCloudFront, signCloudFront, verifyCloudFront } from './signed-cloudfront.js';
import { CAT_HEADER, type CatKey, findCat, signCat, verifyCat } from './signed-cat.js';
import { signWowza, verifyWowza } from './signed-wowza.js';
import { findNimble, NIMBLE_PARAM, signNimble, verifyNimble } from './signed-nimble.js';
import { issuerKeys, secretUsable } from './signed-keys.js';
import { digestOf } from './digests.js';

import type { SignedFacts } from '../contracts/signed.js';

export type { SignedFacts };

/** The prefix of a presented value that carries a request's signed credential: no token, JWT or header value starts with a control character. */
export const SIGNED_PREFIX = '\u0001signed\u0001';

export const isSignedValue = (v: string): boolean => v.startsWith(SIGNED_PREFIX);

/** The longest value the decode and presentation caches keep (characters): longer ones are worked out each time. */
const MAX_REMEMBERED = 4096;

export function encodeSigned(accountId: string, f: SignedFacts): string {
  return `${SIGNED_PREFIX}${JSON.stringify([accountId, f.method, f.path, f.query, f.cookie, f.cat ?? null, f.clientIp ?? null, f.country ?? null])}`;
}

export function decodeSigned(v: string): { accountId: string; facts: SignedFacts } | undefined {
  let d = decoded.get(v);
  if (d === undefined) {
    d = decodeOnce(v) ?? null;
    // a long value (a request with a long query or many cookies) is decoded each time, never kept
    if (v.length > MAX_REMEMBERED) return d ?? undefined;
    if (decoded.size >= RECENT_MAX) decoded.clear();
    decoded.set(v, d);
  }
  return d ?? undefined;
}

/** What decodeSigned answered for the values presented lately (a player presents the same signed URL again and again); emptied when full. */
const decoded = new Map<string, { accountId: string; facts: SignedFacts } | null>();
const RECENT_MAX = 10_000;

function decodeOnce(v: string): { accountId: string; facts: SignedFacts } | undefined {
  if (!isSignedValue(v)) return undefined;
  try {
    const a = JSON.parse(v.slice(SIGNED_PREFIX.length)) as unknown;
    if (!Array.isArray(a) || a.length !== 8 || !a.slice(0, 5).every((x) => typeof x === 'string') || !a.slice(5).every((x) => x === null || typeof x === 'string')) return undefined;
    const [accountId, method, path, query, cookie, cat, clientIp, country] = a as [string, string, string, string, string, string | null, string | null, string | null];
    const facts: SignedFacts = { method, path, query, cookie };
    if (cat !== null) facts.cat = cat;
    if (clientIp !== null) facts.clientIp = clientIp;
    if (country !== null) facts.country = country;
    return { accountId, facts };
  } catch {
    return undefined;
  }
}

function cookiesOf(header: string): Map<string, string> {
  if (header === '') return new Map();
  const parsed = parseCookie(header);
  return new Map(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

const hasParam = (query: string, name: string) => query !== '' && rawParams(query).some(([n]) => n === name);
const hasCookie = (cookie: string, name: string) => cookie.includes(name) && cookiesOf(cookie).has(name);

/** The query parameters and cookies (exact names; a name ending in `*` is a prefix) a format's credential travels in. */
function namesOf(issuer: IssuerRecord): { params: string[]; cookies: string[] } {
  const s = issuer.settings;
  switch (s?.format) {
    case 'akamai-edgeauth':
      return { params: s.names, cookies: s.names };
    case 'cloudfront':
      return { params: ['Expires', 'Policy', 'Signature', 'Key-Pair-Id', 'Hash-Algorithm'], cookies: ['CloudFront-Expires', 'CloudFront-Policy', 'CloudFront-Signature', 'CloudFront-Key-Pair-Id', 'CloudFront-Hash-Algorithm'] };
    case 'cat':
      return { params: [s.queryParam], cookies: [CAT_HEADER] };
    case 'wowza-securetoken':
      return { params: [`${s.prefix}*`], cookies: [] };
    case 'nimble-wmsauth':
      return { params: [NIMBLE_PARAM], cookies: [] };
    default:
      return { params: [], cookies: [] };
  }
}

const named = (names: readonly string[], n: string) => names.some((x) => (x.endsWith('*') ? n.startsWith(x.slice(0, -1)) : x.toLowerCase() === n.toLowerCase()));

/** The parameters and cookies of the request that `issuers`' formats read, as found in the query and Cookie header. */
function credentialParts(issuers: readonly IssuerRecord[], f: SignedFacts): { params: string[]; cookie: string } {
  const params = issuers.flatMap((i) => namesOf(i).params);
  const cookieNames = issuers.flatMap((i) => namesOf(i).cookies);
  const cookie =
    f.cookie === ''
      ? ''
      : [...cookiesOf(f.cookie)]
          .filter(([n]) => named(cookieNames, n))
          .map(([n, v]) => `${n}=${v}`)
          .join('; ');
  const mine = rawParams(f.query)
    .filter(([n]) => named(params, n))
    .map(([n, v]) => `${n}=${v}`);
  return { params: mine, cookie };
}

const presentedOf = (accountId: string, params: string[], cookie: string, cat: string | undefined): string =>
  `${SIGNED_PREFIX}${JSON.stringify([accountId, params.sort(), cookie.split('; ').sort(), cat ?? null])}`;

function packValue(accountId: string, f: SignedFacts, cookie: string): string {
  const facts: SignedFacts = { method: f.method, path: f.path, query: f.query, cookie };
  if (f.cat !== undefined) facts.cat = f.cat;
  if (f.clientIp !== undefined) facts.clientIp = f.clientIp;
  if (f.country !== undefined) facts.country = f.country;
  return encodeSigned(accountId, facts);
}

/** The issuer sets presentations were remembered for, by a number (a new set after any write of an account's issuers). */
const setIds = new WeakMap<readonly IssuerRecord[], number>();
let lastSetId = 0;
/** What requests presented lately, by issuer set, account, query, Cookie header and CAT header: the presented value and the cookies it takes. Emptied when full. */
const presentations = new Map<string, { presented: string; cookie: string }>();
const PRESENTATIONS_MAX = 5000;

/**
 * The signed credential a request presents to the account's signed-URL `issuers`, or undefined
 * when it carries none of their formats: the request as they read it, packed for the decision
 * (`value`), and the credential alone (`presented`): the parameters, cookies and header those
 * formats read, without the path or anything else the request carries (a viewer's session cookie,
 * other cookies). The viewer session a decision starts is tied to `presented`, so every request of
 * the viewer carrying the same credential is the same viewer. A viewer presents the same query, cookies or
 * header again and again: what a credential presents is remembered (bounded: at most
 * PRESENTATIONS_MAX values of at most MAX_REMEMBERED characters, requests carrying none are not
 * kept), and the packed request for a full decision is made only when read.
 */
export function presentSigned(accountId: string, issuers: readonly IssuerRecord[], f: SignedFacts): { readonly value: string; readonly presented: string } | undefined {
  if (issuers.length === 0) return undefined;
  let setId = setIds.get(issuers);
  if (setId === undefined) {
    setId = ++lastSetId;
    setIds.set(issuers, setId);
  }
  // an absent CAT header and an empty one differ (an empty one is carried, and refused)
  const key = `${setId}\n${accountId}\n${f.query}\n${f.cookie}\n${f.cat === undefined ? '-' : `+${f.cat}`}`;
  let p = presentations.get(key);
  if (p === undefined) {
    if (!issuers.some((i) => carries(i, f))) return undefined;
    const parts = credentialParts(issuers, f);
    p = { presented: presentedOf(accountId, parts.params, parts.cookie, f.cat), cookie: parts.cookie };
    if (key.length <= MAX_REMEMBERED) {
      if (presentations.size >= PRESENTATIONS_MAX) presentations.clear();
      presentations.set(key, p);
    }
  }
  const { presented, cookie } = p;
  let value: string | undefined;
  return {
    presented,
    get value() {
      value ??= packValue(accountId, f, cookie);
      return value;
    },
  };
}

/**
 * Whether the request carries a credential of `issuer`'s format (a cheap look at parameter and
 * cookie names, before anything is verified).
 */
export function carries(issuer: IssuerRecord, f: SignedFacts): boolean {
  const s = issuer.settings;
  if (s === null) return false;
  switch (s.format) {
    case 'akamai-edgeauth':
      return s.names.some((n) => hasParam(f.query, n) || hasCookie(f.cookie, n));
    case 'cloudfront':
      return hasParam(f.query, 'Key-Pair-Id') || hasParam(f.query, 'Signature') || hasCookie(f.cookie, 'CloudFront-Key-Pair-Id') || hasCookie(f.cookie, 'CloudFront-Signature');
    case 'cat':
      return f.cat !== undefined || hasParam(f.query, s.queryParam) || [...cookiesOf(f.cookie).keys()].some((n) => n.toLowerCase() === CAT_HEADER);
    case 'wowza-securetoken':
      return hasParam(f.query, `${s.prefix}hash`);
    case 'nimble-wmsauth':
      return hasParam(f.query, NIMBLE_PARAM);
  }
}

/** The request as the verifiers read it. */
export function signedRequest(f: SignedFacts, clientIp: string | undefined, country: string | undefined): SignedRequest {
  return {
    method: f.method,
    path: f.path,
    query: f.query,
    cookies: cookiesOf(f.cookie),
    header: (n) => (n === CAT_HEADER ? f.cat : undefined),
    ...(clientIp !== undefined ? { clientIp } : {}),
    ...(country !== undefined ? { country } : {}),
  };
}

/** Whether the format verifies with the issuer's secret and it has none (its key source could not be read). */
const secretMissing = (issuer: IssuerRecord, s: SignedSettings): boolean =>
  (s.format === 'akamai-edgeauth' || s.format === 'wowza-securetoken' || s.format === 'nimble-wmsauth') && !secretUsable(s, issuer.secret);
const keyMissing = (issuer: IssuerRecord): string =>
  `issuer ${issuer.id} has no usable secret: ${issuer.secretFrom !== null ? 'its key source (secretFrom) could not be read or holds no key of the format' : 'none is stored'}`;

/** Verifies the request's credential with `issuer` (its settings, secret and keys) at `now` (Unix seconds). */
export function verifySigned(issuer: IssuerRecord, req: SignedRequest, now: number): SignedResult {
  const s = issuer.settings;
  const skew = issuer.clockSkewSeconds;
  const none = (what: string): SignedResult => ({ ok: false, problem: `the request carries no ${what}`, fields: [] });
  if (s === null) return { ok: false, problem: `issuer ${issuer.id} is a jwt issuer`, fields: [] };
  // never verified with an empty key (anyone could sign with it): a key source that cannot be read verifies nothing
  if (secretMissing(issuer, s)) return { ok: false, problem: keyMissing(issuer), fields: [] };
  switch (s.format) {
    case 'akamai-edgeauth': {
      const t = findEdgeAuth(req, s.names);
      if (t === undefined) return none(`EdgeAuth token (${s.names.join(', ')})`);
      if ('problem' in t) return { ok: false, problem: t.problem, fields: [] };
      return verifyEdgeAuth(t.token, req, { key: issuer.secret ?? '', algorithm: s.algorithm, fieldDelimiter: s.fieldDelimiter, aclDelimiter: s.aclDelimiter, escapeEarly: s.escapeEarly, names: s.names, salt: s.salt, clockSkewSeconds: skew }, now);
    }
    case 'cloudfront': {
      const p = findCloudFront(req);
      if (p === undefined) return none('CloudFront signed URL or cookies');
      if ('problem' in p) return { ok: false, problem: p.problem, fields: [] };
      return verifyCloudFront(p, req, { publicKeys: s.publicKeys, urls: s.urls, clockSkewSeconds: skew }, now);
    }
    case 'cat': {
      const t = findCat(req, s.queryParam);
      if (t === undefined) return none('Common Access Token');
      if ('problem' in t) return { ok: false, problem: t.problem, fields: [] };
      const keys = issuerKeys(issuer);
      const catKeys: CatKey[] = [...keys.publicKeys].map(([kid, publicKey]) => ({ kid, alg: 'ES256', publicKey }));
      if (s.secretKeyId !== null && secretUsable(s, issuer.secret)) catKeys.push({ kid: s.secretKeyId, alg: 'HS256', secret: Buffer.from(issuer.secret!, 'hex') });
      return verifyCat(t.token, req, { keys: catKeys, issuer: issuer.issuer, audience: issuer.audience, urls: s.urls, queryParam: s.queryParam, clockSkewSeconds: skew }, now);
    }
    case 'wowza-securetoken':
      return verifyWowza(req, { secret: issuer.secret ?? '', prefix: s.prefix, algorithm: s.algorithm, includeClientIp: s.includeClientIp, requireEndTime: s.requireEndTime, clockSkewSeconds: skew }, now);
    case 'nimble-wmsauth': {
      const v = findNimble(req);
      if (v === undefined) return none(NIMBLE_PARAM);
      if (typeof v === 'object') return { ok: false, problem: v.problem, fields: [] };
      return verifyNimble(v, req, { key: issuer.secret ?? '', toleranceSeconds: skew, maxValidMinutes: s.maxValidMinutes }, now);
    }
  }
}

/**
 * The issuer's revocation lists applied to a verified grant: `revoked.jti` names credential ids
 * (EdgeAuth `id`, a CAT's `cti` in hex, WMSAuth `id`), `revoked.kid` key ids. Null when none applies.
 */
export function revokedProblem(issuer: IssuerRecord, g: SignedGrant): string | null {
  if (g.id !== undefined && issuer.revoked.jti.includes(g.id)) return `its id ${g.id} is revoked`;
  if (g.keyId !== undefined && issuer.revoked.kid.includes(g.keyId)) return `its key ${g.keyId} is revoked`;
  return null;
}

/**
 * Verified signed credentials by issuer id and rev, and the SHA-256 of the presented value with the
 * client address and country it was verified for: a request presented again (a player re-asking
 * with the same signed URL) costs a hash instead of a signature check, until the grant expires.
 * Any write of the issuer moves its rev, so nothing verified under the old record is found.
 */
export class SignedMemo {
  private readonly entries: LRUCache<string, SignedGrant>;

  constructor(maxEntries: number) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  /** The packed value holds the client address (and a trusted header's country); a looked-up country is added. */
  private static key(issuer: IssuerRecord, value: string, _clientIp: string | undefined, country: string | undefined): string {
    return `${issuer.id}:${issuer.rev}:${digestOf(value)}:${country ?? ''}`;
  }

  /** The remembered grant, when still within its times at `now` (Unix seconds). */
  get(issuer: IssuerRecord, value: string, clientIp: string | undefined, country: string | undefined, now: number): SignedGrant | undefined {
    const k = SignedMemo.key(issuer, value, clientIp, country);
    const g = this.entries.get(k);
    if (g === undefined) return undefined;
    const skew = issuer.clockSkewSeconds;
    if ((g.exp !== null && now >= g.exp + skew) || (g.nbf !== undefined && g.nbf > now + skew)) {
      this.entries.delete(k);
      return undefined;
    }
    return g;
  }

  /** Forgets every grant (a key read from a file or the environment changed). */
  clear(): void {
    this.entries.clear();
  }

  set(issuer: IssuerRecord, value: string, clientIp: string | undefined, country: string | undefined, g: SignedGrant): void {
    // a credential admitted once must be decided in full every time
    if (g.replay === 'prohibited') return;
    this.entries.set(SignedMemo.key(issuer, value, clientIp, country), g);
  }
}

/** What /api/issuers/{id}/sign is asked for (docs/api.md#issuing-for-the-edge). */
export interface SignInput {
  /** The path the grant covers, as viewers request it: `/hls/ACCT/cam1/*` (a trailing `*`: everything under it). */
  path: string;
  /** Unix seconds. */
  now: number;
  lifetimeSeconds: number;
  clientIp?: string;
  /** A viewer or session id the credential carries (EdgeAuth id, a CAT's sub, a WMSAuth id). */
  id?: string;
}

/** What a signer answers: the credential in the forms the format travels in. */
export interface SignOutput {
  expiresAt: number;
  /** Query parameters to append to the viewer's URLs, in order. */
  query?: Array<[string, string]>;
  /** Cookies to set for the viewer. */
  cookies?: Record<string, string>;
  /** Request headers the viewer (or the CDN) sends. */
  headers?: Record<string, string>;
  /** The signed URL, when the grant is for one URL. */
  url?: string;
}

/** The IPv4 or IPv6 address as a CAT catnip entry (RFC 9164 tag 52 or 54, the address's bytes). */
function catnipOf(ip: string): Tag {
  const v4 = /^\d{1,3}(?:\.\d{1,3}){3}$/.test(ip);
  return new Tag(Buffer.from(ipaddr.parse(ip).toByteArray()), v4 ? 52 : 54);
}

/**
 * Signs a grant for `path` in `issuer`'s format with its own keys: the same grant the origin then
 * verifies, so the CDN's edge and the origin enforce one thing. Throws (a message for a 400) when the
 * issuer cannot sign it: no signing key, or a grant the format cannot express.
 */
export function signFor(issuer: IssuerRecord, g: SignInput): SignOutput {
  const s = issuer.settings;
  if (s === null) throw new SignProblem(`issuer ${issuer.id} is a jwt issuer: JWTs are signed by their identity provider`);
  if (secretMissing(issuer, s)) throw new SignProblem(keyMissing(issuer));
  const exp = g.now + g.lifetimeSeconds;
  const wildcard = g.path.endsWith('*');
  const prefix = wildcard ? g.path.slice(0, -1) : g.path;
  switch (s.format) {
    case 'akamai-edgeauth': {
      const token = signEdgeAuth(
        { acl: [g.path], start: g.now, exp, ...(g.clientIp !== undefined ? { ip: g.clientIp } : {}), ...(g.id !== undefined ? { id: g.id } : {}) },
        { key: issuer.secret ?? '', algorithm: s.algorithm, fieldDelimiter: s.fieldDelimiter, aclDelimiter: s.aclDelimiter, salt: s.salt, escapeEarly: s.escapeEarly },
      );
      const name = s.names[0] ?? 'hdnts';
      return { expiresAt: exp, query: [[name, token]], cookies: { [name]: token } };
    }
    case 'cloudfront': {
      const key = issuerKeys(issuer).signing;
      if (key === null || s.signingKeyId === null) throw new SignProblem('this cloudfront issuer has no signing key (settings.signingKeyId and signingKey)');
      const base = s.urls[0]!;
      const params = signCloudFront({ resource: `${base}${g.path}`, exp, ...(g.clientIp !== undefined ? { ip: g.clientIp } : {}) }, s.signingKeyId, key.export({ type: 'pkcs8', format: 'pem' }) as string, s.hashAlgorithm);
      const query = Object.entries(params);
      const cookies = Object.fromEntries(query.map(([k, v]) => [`CloudFront-${k}`, v]));
      const url = wildcard ? undefined : `${base}${g.path}?${query.map(([k, v]) => `${k}=${v}`).join('&')}`;
      return { expiresAt: exp, query, cookies, ...(url !== undefined ? { url } : {}) };
    }
    case 'cat': {
      // without a signingKeyId, the HS256 key signs when there is one
      const kid = s.signingKeyId ?? s.secretKeyId;
      if (kid === null) throw new SignProblem('this cat issuer has no signing key (settings.signingKeyId and signingKey, or an HS256 secret)');
      const claims = new Map<number, unknown>();
      if (issuer.issuer !== null) claims.set(1, issuer.issuer);
      if (g.id !== undefined) claims.set(2, g.id);
      if (issuer.audience.length > 0) claims.set(3, issuer.audience[0]);
      claims.set(4, exp);
      claims.set(5, g.now);
      claims.set(6, g.now);
      claims.set(7, randomBytes(16));
      claims.set(310, 1);
      if (g.clientIp !== undefined) claims.set(311, [catnipOf(g.clientIp)]);
      claims.set(312, new Map([[3, new Map([[wildcard ? 1 : 0, prefix]])]]));
      let token: string;
      if (kid === s.secretKeyId) {
        if (!secretUsable(s, issuer.secret)) throw new SignProblem(keyMissing(issuer));
        token = signCat(claims, kid, { alg: 'HS256', secret: Buffer.from(issuer.secret!, 'hex') });
      } else {
        const key = issuerKeys(issuer).signing;
        if (key === null) throw new SignProblem(`this cat issuer has no private key for ${kid} (signingKey)`);
        token = signCat(claims, kid, { alg: 'ES256', privateKey: key });
      }
      return { expiresAt: exp, query: [[s.queryParam, token]], cookies: { [CAT_COOKIE]: token }, headers: { [CAT_COOKIE]: token } };
    }
    case 'wowza-securetoken': {
      if (wildcard) throw new SignProblem('a wowza-securetoken hash signs one content path: give the path without *');
      if (s.includeClientIp && g.clientIp === undefined) throw new SignProblem('this issuer hashes the client address: give clientIp');
      const contentPath = g.path.replace(/^\/+/, '');
      const query = signWowza(contentPath, { start: g.now, exp, ...(s.includeClientIp ? { ip: g.clientIp } : {}) }, { secret: issuer.secret ?? '', prefix: s.prefix, algorithm: s.algorithm });
      return { expiresAt: exp, query };
    }
    case 'nimble-wmsauth': {
      if (g.clientIp === undefined && g.id === undefined) throw new SignProblem('a WMSAuth signature binds the client address or an id: give clientIp or id');
      const minutes = Math.ceil(g.lifetimeSeconds / 60);
      if (minutes > s.maxValidMinutes) throw new SignProblem(`lifetimeSeconds is more than this issuer's maxValidMinutes (${s.maxValidMinutes})`);
      const stream = prefix.replace(/^\/+/, '');
      const sign = signNimble({ issued: g.now, validMinutes: minutes, ...(g.clientIp !== undefined ? { ip: g.clientIp } : {}), ...(g.id !== undefined ? { id: g.id } : {}), ...(stream !== '' ? { stream } : {}) }, issuer.secret ?? '');
      return { expiresAt: g.now + minutes * 60, query: [[NIMBLE_PARAM, sign]] };
    }
  }
}

/** A grant an issuer cannot sign, with the reason. */
export class SignProblem extends Error {}

const CAT_COOKIE = 'CTA-Common-Access-Token';
