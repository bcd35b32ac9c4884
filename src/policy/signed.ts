// A request's signed URL, signed cookies or CAT, for the signed-URL issuers of its account
// (docs/api.md#signed-url-issuers): which issuer's format the request carries, and its verification
// with that issuer's settings and keys. The request travels to the credential resolver as one value
// (encodeSigned): what a verifier reads of it, and nothing else.
import { createHash } from 'node:crypto';
import { parse as parseCookie } from 'cookie';
import { LRUCache } from 'lru-cache';
import type { IssuerRecord } from '../domain/issuers.js';
import { rawParams, type SignedGrant, type SignedRequest, type SignedResult } from './signed-common.js';
import { findEdgeAuth, verifyEdgeAuth } from './signed-akamai.js';
import { findCloudFront, verifyCloudFront } from './signed-cloudfront.js';
import { CAT_HEADER, type CatKey, findCat, verifyCat } from './signed-cat.js';
import { verifyWowza } from './signed-wowza.js';
import { findNimble, NIMBLE_PARAM, verifyNimble } from './signed-nimble.js';
import { issuerKeys } from './signed-keys.js';

import type { SignedFacts } from '../contracts/signed.js';

export type { SignedFacts };

/** The prefix of a presented value that carries a request's signed credential: no token, JWT or header value starts with a control character. */
export const SIGNED_PREFIX = '\u0001signed\u0001';

export const isSignedValue = (v: string): boolean => v.startsWith(SIGNED_PREFIX);

export function encodeSigned(accountId: string, f: SignedFacts): string {
  return `${SIGNED_PREFIX}${JSON.stringify([accountId, f.method, f.path, f.query, f.cookie, f.cat ?? null, f.clientIp ?? null, f.country ?? null])}`;
}

export function decodeSigned(v: string): { accountId: string; facts: SignedFacts } | undefined {
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

/** Verifies the request's credential with `issuer` (its settings, secret and keys) at `now` (Unix seconds). */
export function verifySigned(issuer: IssuerRecord, req: SignedRequest, now: number): SignedResult {
  const s = issuer.settings;
  const skew = issuer.clockSkewSeconds;
  const none = (what: string): SignedResult => ({ ok: false, problem: `the request carries no ${what}`, fields: [] });
  if (s === null) return { ok: false, problem: `issuer ${issuer.id} is a jwt issuer`, fields: [] };
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
      if (s.secretKeyId !== null && issuer.secret !== null) catKeys.push({ kid: s.secretKeyId, alg: 'HS256', secret: Buffer.from(issuer.secret, 'hex') });
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

  private static key(issuer: IssuerRecord, value: string, clientIp: string | undefined, country: string | undefined): string {
    return `${issuer.id}:${issuer.rev}:${createHash('sha256').update(value).update('\u0000').update(clientIp ?? '').update('\u0000').update(country ?? '').digest('base64url')}`;
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

  set(issuer: IssuerRecord, value: string, clientIp: string | undefined, country: string | undefined, g: SignedGrant): void {
    // a credential admitted once must be decided in full every time
    if (g.replay === 'prohibited') return;
    this.entries.set(SignedMemo.key(issuer, value, clientIp, country), g);
  }
}
