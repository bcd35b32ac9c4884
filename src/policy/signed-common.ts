// What the signed-URL and signed-cookie formats share (docs/api.md#signed-url-issuers): the request as
// a verifier sees it, the grant a verified credential makes, the field-by-field explanation, and the
// small pieces every format needs (raw query parameters, wildcard paths, URL-safe base64, addresses).
// Pure: no I/O, no clock (the caller passes now).
import { timingSafeEqual } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { SignedFormat } from '../domain/issuers.js';

/** The request a signed credential is checked against: what the viewer asked for, as the origin received it. */
export interface SignedRequest {
  method: string;
  /** The path as the client sent it (still percent-encoded), without the query: `/hls/cam1/index.m3u8`. */
  path: string;
  /** The query as the client sent it, without `?` (raw: `+` and `%xx` as they arrived). */
  query: string;
  cookies: ReadonlyMap<string, string>;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The viewer's address, when the caller knows it (behind a CDN: from trustedProxies' header). */
  clientIp?: string;
  /** The viewer's country (ISO 3166-1 alpha-2), when the caller knows it. */
  country?: string;
}

/** One field of a presented credential, as the explanation shows it. */
export interface ExplainedField {
  name: string;
  value: string;
  /** What was checked and how it came out, e.g. "before now (1700000000 ≤ 1700000100)". */
  check?: string;
  ok?: boolean;
}

/** What a verified credential allows. Every bound here narrows the policy token, never widens it. */
export interface SignedGrant {
  format: SignedFormat;
  /** Unix seconds: the credential is refused from this time on. */
  exp: number | null;
  /** Unix seconds: refused before this time. */
  nbf?: number;
  /** The key that verified it, when the format names one (a CloudFront key-pair id, a CAT kid). */
  keyId?: string;
  /** An identifier the credential carries (EdgeAuth `id`, a CAT `cti` in hex, a WMSAuth `id`). */
  id?: string;
  /** What it signs, as the explanation shows it: an ACL, a resource, a content path. */
  scope: string;
  /** CTA-5007 catreplay: 1 prohibited (admitted once), 2 reuse detected (counted). */
  replay?: 'prohibited' | 'detect';
  /**
   * It grants one object, or restricts what a stream-wide viewer session cannot carry (a method, a
   * query): each request must present it, and no session credential stands for it.
   */
  narrow?: boolean;
}

/** The answer of a verifier: a grant, or a problem; both with the fields and the string that was signed. */
export type SignedResult =
  | { ok: true; grant: SignedGrant; fields: ExplainedField[]; signed: string }
  | { ok: false; problem: string; fields: ExplainedField[]; signed?: string; expired?: boolean; outside?: Outside };

/** A verified credential that does not cover the request: its path, its address, its country. */
export type Outside = 'path' | 'address' | 'country';

/** The most a presented credential may hold (bytes): larger is refused before it is parsed. */
export const MAX_CREDENTIAL = 8192;

export const refuse = (problem: string, fields: ExplainedField[] = [], signed?: string, expired?: boolean): SignedResult => ({
  ok: false,
  problem,
  fields,
  ...(signed !== undefined ? { signed } : {}),
  ...(expired ? { expired } : {}),
});

/**
 * The query's parameters in order as [name, raw value]: names percent-decoded (a name that does not
 * decode is kept as sent), values exactly as sent. A parameter without `=` has the value ''.
 */
export function rawParams(query: string): Array<[string, string]> {
  if (query === '') return [];
  const out: Array<[string, string]> = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    out.push([decodeLoose(name), eq < 0 ? '' : part.slice(eq + 1)]);
  }
  return out;
}

/** A refusal of a verified credential for what it does not cover. */
export const outside = (what: Outside, problem: string, fields: ExplainedField[], signed: string): SignedResult => ({ ok: false, problem, fields, signed, outside: what });

/** Percent-decoding that keeps the input when it is not valid percent-encoding (`+` stays `+`). */
export function decodeLoose(s: string): string {
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The one value of `name` in `params`, or a problem when it appears more than once (a doubled
 * parameter is refused: a verifier and a later reader could each take a different one).
 */
export function single(params: ReadonlyArray<[string, string]>, name: string): string | undefined | { problem: string } {
  let found: string | undefined;
  for (const [n, v] of params) {
    if (n !== name) continue;
    if (found !== undefined) return { problem: `parameter ${name} appears more than once` };
    found = v;
  }
  return found;
}

/**
 * Whether `text` matches a wildcard pattern where `*` is any run of characters (`/` included) and `?`
 * exactly one: the ACL and resource wildcards of EdgeAuth and CloudFront. Linear in practice and at
 * worst |text|·|pattern|, with no backtracking blow-up.
 */
export function wildcardMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === text[t])) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

/** Bytes equal in constant time (lengths may differ: then false). */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Strings equal in constant time for equal lengths. */
export function sameText(a: string, b: string): boolean {
  return sameBytes(Buffer.from(a), Buffer.from(b));
}

/** Whether `clientIp` is `rule` (an address) or inside it (a CIDR), IPv4 or IPv6; an unparsable rule or address never matches. */
export function addressMatches(clientIp: string, rule: string): boolean {
  try {
    const addr = ipaddr.process(clientIp);
    if (rule.includes('/')) {
      const [net, bits] = ipaddr.parseCIDR(rule);
      return addr.kind() === net.kind() && addr.match(net, bits);
    }
    const r = ipaddr.process(rule);
    return r.kind() === addr.kind() && r.toNormalizedString() === addr.toNormalizedString();
  } catch {
    return false;
  }
}

/** Unix seconds as text with its ISO form, for the explanation. */
export const when = (s: number): string => `${s} (${Number.isFinite(s) && Math.abs(s) < 8.64e12 ? new Date(s * 1000).toISOString() : 'out of range'})`;

/** A Unix-seconds field: digits only, at most 10 of them. */
export function seconds(v: string): number | undefined {
  return /^\d{1,10}$/.test(v) ? Number(v) : undefined;
}

/**
 * The time checks every format makes, as fields and a problem: refused at or after `exp` and before
 * `nbf`, each widened by `skew` seconds.
 */
export function timeProblem(now: number, skew: number, exp: number | null, nbf: number | undefined, fields: ExplainedField[]): { problem: string; expired?: boolean } | null {
  if (exp !== null) {
    const ok = now < exp + skew;
    fields.push({ name: 'expiry', value: when(exp), check: `now ${now}${skew ? ` (allowing ${skew} s)` : ''} is ${ok ? 'before' : 'at or after'} it`, ok });
    if (!ok) return { problem: `expired at ${when(exp)}`, expired: true };
  }
  if (nbf !== undefined) {
    const ok = nbf <= now + skew;
    fields.push({ name: 'start', value: when(nbf), check: `now ${now}${skew ? ` (allowing ${skew} s)` : ''} is ${ok ? 'at or after' : 'before'} it`, ok });
    if (!ok) return { problem: `not valid before ${when(nbf)}` };
  }
  return null;
}
