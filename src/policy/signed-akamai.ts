// Akamai EdgeAuth (Auth Token 2.0) tokens, verified and issued as Akamai's SDKs make them
// (docs/callers.md#akamai-edgeauth): `name=value` fields joined by the field delimiter (`ip`, `st`,
// `exp`, `acl`, `id`, `data`, then `hmac`), the HMAC over everything before `~hmac=` as received,
// then `~url=<path>` for a URL token (no `acl`) and `~salt=<salt>` when a salt is set; the key
// hex-decoded; the digest lower-case hex.
import { createHmac } from 'node:crypto';
import { type ExplainedField, MAX_CREDENTIAL, type SignedRequest, type SignedResult, addressMatches, decodeLoose, outside, rawParams, refuse, sameText, seconds, single, timeProblem, wildcardMatch } from './signed-common.js';

export const EDGEAUTH_ALGORITHMS = ['sha256', 'sha1', 'md5'] as const;

export interface EdgeAuthSettings {
  /** The shared key as hex (even length), as Akamai's property configuration holds it. */
  key: string;
  /** A second key accepted during a rotation. */
  transitionKey?: string | null;
  algorithm: (typeof EDGEAUTH_ALGORITHMS)[number];
  fieldDelimiter: string;
  aclDelimiter: string;
  salt?: string | null;
  /** Akamai's "escape token input": ip, id, data and a URL token's url URL-escaped before signing. */
  escapeEarly: boolean;
  /** Query parameters and cookies the token may arrive in, in order (`hdnts`, `__token__`). */
  names: string[];
  clockSkewSeconds: number;
}

const FIELDS = new Set(['ip', 'st', 'exp', 'acl', 'id', 'data', 'hmac']);

/** The SDKs' escape: encodeURIComponent, then `~ ' *` escaped too, every escape in lower case. */
export function edgeAuthEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/~/g, '%7E')
    .replace(/'/g, '%27')
    .replace(/\*/g, '%2A')
    .replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
}

/** The presented token and where it came from, or undefined when the request carries none. */
export function findEdgeAuth(req: SignedRequest, names: readonly string[]): { token: string; from: string } | { problem: string } | undefined {
  const params = rawParams(req.query);
  for (const name of names) {
    const v = single(params, name);
    if (typeof v === 'object') return v;
    // a token whose fields were percent-encoded as one query value (no `=` left) is decoded once
    if (v !== undefined) return { token: v.includes('=') ? v : decodeLoose(v), from: `query ${name}` };
  }
  for (const name of names) {
    const c = req.cookies.get(name);
    if (c !== undefined) return { token: c, from: `cookie ${name}` };
  }
  return undefined;
}

function hmacHex(algorithm: string, keyHex: string, input: string): string {
  return createHmac(algorithm, Buffer.from(keyHex, 'hex')).update(input).digest('hex');
}

/** Verifies `token` for `req` at `now` (Unix seconds). */
export function verifyEdgeAuth(token: string, req: SignedRequest, s: EdgeAuthSettings, now: number): SignedResult {
  const fields: ExplainedField[] = [];
  if (token.length > MAX_CREDENTIAL) return refuse(`the token is longer than ${MAX_CREDENTIAL} characters`);
  const d = s.fieldDelimiter;
  const cut = token.lastIndexOf(`${d}hmac=`);
  if (cut < 0) return refuse(`no ${d}hmac= field: not an EdgeAuth token`);
  const signedPart = token.slice(0, cut);
  const hmac = token.slice(cut + d.length + 5);
  const values = new Map<string, string>();
  for (const part of signedPart.split(d)) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    if (!FIELDS.has(name) || name === 'hmac') return refuse(`field "${name.slice(0, 32)}" is not an EdgeAuth field (ip, st, exp, acl, id, data)`, fields);
    if (values.has(name)) return refuse(`field ${name} appears more than once`, fields);
    values.set(name, eq < 0 ? '' : part.slice(eq + 1));
    fields.push({ name, value: values.get(name)! });
  }
  fields.push({ name: 'hmac', value: hmac });
  if (!/^[0-9a-f]+$/.test(hmac)) return refuse('hmac is not lower-case hex', fields);
  const exp = values.has('exp') ? seconds(values.get('exp')!) : undefined;
  if (exp === undefined) return refuse(values.has('exp') ? 'exp is not Unix seconds' : 'exp is missing (EdgeAuth requires one)', fields);
  const st = values.has('st') ? seconds(values.get('st')!) : undefined;
  if (values.has('st') && st === undefined) return refuse('st is not Unix seconds', fields);

  const acl = values.get('acl');
  const url = acl === undefined ? (s.escapeEarly ? edgeAuthEscape(req.path) : req.path) : undefined;
  const signed = `${signedPart}${url !== undefined ? `${d}url=${url}` : ''}${s.salt ? `${d}salt=${s.salt}` : ''}`;
  const keys = [s.key, ...(s.transitionKey ? [s.transitionKey] : [])];
  const matched = keys.findIndex((k) => sameText(hmacHex(s.algorithm, k, signed), hmac));
  fields.push({ name: 'signature', value: `HMAC-${s.algorithm.toUpperCase()} over the signed string`, check: matched < 0 ? 'does not match' : matched === 0 ? 'matches the key' : 'matches the transition key', ok: matched >= 0 });
  if (matched < 0) return refuse('hmac does not match: the key, algorithm, salt or a signed field differs', fields, signed);

  const time = timeProblem(now, s.clockSkewSeconds, exp, st, fields);
  if (time) return refuse(time.problem, fields, signed, time.expired);

  if (acl !== undefined) {
    const list = acl.split(s.aclDelimiter);
    const hit = list.find((p) => wildcardMatch(p, req.path));
    fields.push({ name: 'path', value: req.path, check: hit !== undefined ? `matches acl ${hit}` : `matches no acl entry (${list.join(' ')})`, ok: hit !== undefined });
    if (hit === undefined) return outside('path', `path ${req.path} is outside the signed acl`, fields, signed);
  } else fields.push({ name: 'path', value: req.path, check: 'signed as the url (a URL token)', ok: true });

  const ip = values.get('ip');
  if (ip !== undefined) {
    const want = s.escapeEarly ? decodeLoose(ip) : ip;
    const ok = req.clientIp !== undefined && addressMatches(req.clientIp, want);
    fields.push({ name: 'address', value: req.clientIp ?? 'unknown', check: ok ? `is ip ${want}` : `is not ip ${want}`, ok });
    if (!ok) return outside('address', req.clientIp === undefined ? `the token is bound to ip ${want} and the client address is unknown` : `address ${req.clientIp} is not the token's ip ${want}`, fields, signed);
  }
  const id = values.get('id');
  // a URL token, or an ACL without a wildcard, grants one object
  const narrow = acl === undefined || !/[*?]/.test(acl);
  return { ok: true, grant: { format: 'akamai-edgeauth', exp, ...(st !== undefined ? { nbf: st } : {}), ...(id !== undefined ? { id } : {}), scope: acl !== undefined ? `acl ${acl}` : `url ${req.path}`, ...(narrow ? { narrow } : {}) }, fields, signed };
}

export interface EdgeAuthGrantInput {
  /** Path patterns (`*`, `?`), joined by the ACL delimiter; or the one URL a URL token signs. */
  acl?: string[];
  url?: string;
  start?: number;
  exp: number;
  ip?: string;
  id?: string;
  data?: string;
}

/** Issues a token in the SDKs' field order (ip, st, exp, acl, id, data, hmac). */
export function signEdgeAuth(g: EdgeAuthGrantInput, s: Pick<EdgeAuthSettings, 'key' | 'algorithm' | 'fieldDelimiter' | 'aclDelimiter' | 'salt' | 'escapeEarly'>): string {
  const esc = (v: string) => (s.escapeEarly ? edgeAuthEscape(v) : v);
  const d = s.fieldDelimiter;
  const parts: string[] = [];
  if (g.ip !== undefined) parts.push(`ip=${esc(g.ip)}`);
  if (g.start !== undefined) parts.push(`st=${g.start}`);
  parts.push(`exp=${g.exp}`);
  if (g.acl !== undefined) parts.push(`acl=${g.acl.join(s.aclDelimiter)}`);
  if (g.id !== undefined) parts.push(`id=${esc(g.id)}`);
  if (g.data !== undefined) parts.push(`data=${esc(g.data)}`);
  const signedPart = parts.join(d);
  const input = `${signedPart}${g.acl === undefined && g.url !== undefined ? `${d}url=${esc(g.url)}` : ''}${s.salt ? `${d}salt=${s.salt}` : ''}`;
  return `${signedPart}${d}hmac=${hmacHex(s.algorithm, s.key, input)}`;
}
