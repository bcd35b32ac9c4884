// Wowza Streaming Engine SecureToken v2, verified and issued as Wowza computes it
// (docs/callers.md#wowza-securetoken): the content path (`application/instance/stream`, without the
// HTTP streaming file a player asks for), `?`, then the `<prefix>name=value` parameters (the hash
// left out), the bare shared secret and, when the issuer binds addresses, the bare client address,
// sorted by code unit and joined by `&`; SHA-256/384/512; base64 with `-` `_` for `+` `/`, padding kept.
import { createHash } from 'node:crypto';
import { type ExplainedField, MAX_CREDENTIAL, type SignedRequest, type SignedResult, decodeLoose, rawParams, refuse, sameText, seconds, timeProblem } from './signed-common.js';

export const WOWZA_ALGORITHMS = ['sha256', 'sha384', 'sha512'] as const;

export interface WowzaSettings {
  secret: string;
  /** The parameter prefix (`wowzatoken`). */
  prefix: string;
  algorithm: (typeof WOWZA_ALGORITHMS)[number];
  /** The client address is one of the hashed items (Wowza's "include client IP address"). */
  includeClientIp: boolean;
  /** Refuse a hash without `<prefix>endtime` (Wowza accepts one; a link that never expires is a leak that never ends). */
  requireEndTime: boolean;
  clockSkewSeconds: number;
}

const digest = (algorithm: string, text: string) =>
  createHash(algorithm).update(text).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');

/**
 * The content paths a request path may have been signed as: the path without its leading `/`, and
 * (for HTTP streaming: `…/playlist.m3u8`, `…/chunklist_w1.m3u8`, `…/media_3.ts`) without its last segment.
 */
export function wowzaContentPaths(path: string): string[] {
  const p = decodeLoose(path).replace(/^\/+/, '');
  const cut = p.lastIndexOf('/');
  return cut > 0 ? [p.slice(0, cut), p] : [p];
}

/** The string SecureToken hashes. */
export function wowzaHashInput(contentPath: string, params: ReadonlyArray<[string, string]>, secret: string, clientIp: string | undefined): string {
  const items = params.map(([n, v]) => `${n}=${v}`);
  items.push(secret);
  if (clientIp !== undefined) items.push(clientIp);
  items.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `${contentPath}?${items.join('&')}`;
}

export function verifyWowza(req: SignedRequest, s: WowzaSettings, now: number): SignedResult {
  const fields: ExplainedField[] = [];
  if (req.query.length > MAX_CREDENTIAL) return refuse(`the query is longer than ${MAX_CREDENTIAL} characters`);
  const mine = rawParams(req.query)
    .filter(([n]) => n.startsWith(s.prefix))
    .map(([n, v]): [string, string] => [n, decodeLoose(v)]);
  const seen = new Set<string>();
  for (const [n, v] of mine) {
    if (seen.has(n)) return refuse(`parameter ${n} appears more than once`);
    // the hashed string joins name=value items with &: an encoded = or & would let one parameter stand for two
    if (/[=&]/.test(n) || v.includes('&')) return refuse(`parameter ${n.slice(0, 64)} holds an encoded = or &`);
    seen.add(n);
  }
  const hash = mine.find(([n]) => n === `${s.prefix}hash`)?.[1];
  if (hash === undefined) return refuse(`parameter ${s.prefix}hash is missing`);
  const signedParams = mine.filter(([n]) => n !== `${s.prefix}hash`);
  for (const [n, v] of mine) fields.push({ name: n, value: v });
  const end = seen.has(`${s.prefix}endtime`) ? seconds(mine.find(([n]) => n === `${s.prefix}endtime`)![1]) : undefined;
  if (seen.has(`${s.prefix}endtime`) && end === undefined) return refuse(`${s.prefix}endtime is not Unix seconds`, fields);
  if (end === undefined && s.requireEndTime) return refuse(`${s.prefix}endtime is missing (this issuer requires an expiry)`, fields);
  const start = seen.has(`${s.prefix}starttime`) ? seconds(mine.find(([n]) => n === `${s.prefix}starttime`)![1]) : undefined;
  if (seen.has(`${s.prefix}starttime`) && start === undefined) return refuse(`${s.prefix}starttime is not Unix seconds`, fields);
  if (s.includeClientIp && req.clientIp === undefined) return refuse('the issuer hashes the client address, and it is unknown', fields);

  const ip = s.includeClientIp ? req.clientIp : undefined;
  const candidates = wowzaContentPaths(req.path).map((cp) => ({ cp, input: wowzaHashInput(cp, signedParams, s.secret, ip) }));
  const hit = candidates.find((c) => sameText(digest(s.algorithm, c.input).replace(/=+$/, ''), hash.replace(/=+$/, '')));
  const shown = (hit ?? candidates[0]!).input.replace(s.secret, '<secret>');
  fields.push({ name: 'hash', value: `${s.algorithm.toUpperCase()} of the sorted string`, check: hit ? `matches for content path ${hit.cp}` : `matches for none of ${candidates.map((c) => c.cp).join(', ')}`, ok: hit !== undefined });
  if (!hit) return refuse('the hash does not match: the secret, algorithm, content path, a parameter or the client address differs', fields, shown);
  const time = timeProblem(now, s.clockSkewSeconds, end ?? null, start, fields);
  if (time) return refuse(time.problem, fields, shown, time.expired);
  return { ok: true, grant: { format: 'wowza-securetoken', exp: end ?? null, ...(start !== undefined ? { nbf: start } : {}), scope: `content path ${hit.cp}` }, fields, signed: shown };
}

/** Issues the query parameters for `contentPath` (`live/_definst_/cam1`). */
export function signWowza(contentPath: string, g: { start?: number; exp: number; ip?: string; custom?: Record<string, string> }, s: Pick<WowzaSettings, 'secret' | 'prefix' | 'algorithm'>): Array<[string, string]> {
  const params: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(g.custom ?? {})) params.push([`${s.prefix}${k}`, v]);
  if (g.start !== undefined) params.push([`${s.prefix}starttime`, String(g.start)]);
  params.push([`${s.prefix}endtime`, String(g.exp)]);
  params.push([`${s.prefix}hash`, digest(s.algorithm, wowzaHashInput(contentPath, params, s.secret, g.ip))]);
  return params;
}
