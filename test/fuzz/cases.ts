// Builds fuzz requests for one entry point from its valid fixture: the path's parameters, query,
// headers, content type and body each either valid or hostile.
import fc from 'fast-check';
import { ADMIN_KEY } from '../helpers/app.js';
import { contentType, encodeBody, hostileHeaders, hostileQuery, mutate, type Req, type Target } from './harness.js';

export interface EntryPoint {
  method: string;
  /** express-style path; :id, :kind, :accountId are filled per request */
  path: string;
  auth: 'apiSecret' | 'admin' | 'none' | 'streamToken';
  /** A request the endpoint accepts (body, query), given the seeded state. */
  body?: (t: Target) => Record<string, unknown>;
  query?: (t: Target) => string;
  /** The content type the endpoint speaks (default JSON). */
  type?: string;
  /** A body that is not JSON (an image, a form), as the endpoint takes it. */
  raw?: (t: Target) => Buffer | string;
  /** Extra valid headers (e.g. X-Original-URI for auth_request). */
  headers?: (t: Target) => Record<string, string>;
}

export const FORM = 'application/x-www-form-urlencoded';

/**
 * Percent-encodes the UTF-8 bytes of any string. encodeURIComponent throws on a lone surrogate
 * (which fast-check generates: a soak run failed in the generator, not in Streamgate); here a lone
 * surrogate becomes U+FFFD like any UTF-8 encoder makes it.
 */
export function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.!~*'()]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A value as a form body: its fields (non-strings as JSON), or the value's own text. */
export function formEncode(v: unknown): string {
  if (typeof v !== 'object' || v === null) return String(v);
  return Object.entries(v)
    .map(([k, x]) => `${pct(k)}=${pct(typeof x === 'string' ? x : JSON.stringify(x) ?? '')}`)
    .join('&');
}

type Param = { live: number } | { fixed: string } | 'other';

const param: fc.Arbitrary<Param> = fc.oneof(
  { weight: 6, arbitrary: fc.nat(1000).map((n) => ({ live: n })) },
  { weight: 1, arbitrary: fc.constant('other' as const) },
  {
    weight: 3,
    arbitrary: fc.constantFrom('0', '-1', '1e3', '1.5', '99999999999999999999', '9007199254740993', 'abc', '%00', '%E0%A4%A', '..', '%2e%2e', 'x'.repeat(300), '__proto__', 'constructor', '1%20', 'Feeds', 'feeds').map((fixed) => ({ fixed })),
  },
);

/** One request of an entry point, resolved against the current state (live ids, current secrets). */
export interface Case {
  ep: EntryPoint;
  param: Param;
  valid: boolean;
  /** The body value and the bytes sent for it. */
  body: [unknown, Buffer | string | undefined];
  type: string | undefined;
  query: string | undefined;
  headers: Record<string, string>;
  auth: 'own' | 'other' | 'none' | 'garbage' | 'admin' | 'long';
}

export function caseOf(eps: EntryPoint[], t: Target): fc.Arbitrary<Case> {
  return fc.constantFrom(...eps).chain((ep) => {
    const valid = ep.body?.(t) ?? {};
    return fc.record({
      ep: fc.constant(ep),
      param,
      valid: fc.boolean(),
      body: mutate(valid).chain((b) => fc.tuple(fc.constant(b), ep.type === FORM ? fc.oneof(fc.constant(formEncode(b)), encodeBody(b)) : encodeBody(b))),
      type: contentType,
      query: fc.option(hostileQuery, { nil: undefined }),
      headers: hostileHeaders,
      auth: fc.constantFrom('own', 'own', 'own', 'other', 'none', 'garbage', 'admin', 'long'),
    });
  });
}

/** Turns a case into a request; a `valid` case keeps the fixture and varies only the headers' extras. */
export async function toRequest(c: Case, t: Target): Promise<Req> {
  const ids = await t.ids();
  const { ep } = c;
  const fill = (name: string): string => {
    if (name === 'kind') return typeof c.param === 'object' && 'live' in c.param ? ['Feeds', 'Recordings', 'Thumbnail'][c.param.live % 3] : pick(name);
    if (name === 'accountId') {
      if (c.param === 'other') return t.seeded.otherAccountId;
      if (typeof c.param === 'object' && 'live' in c.param) return t.seeded.accountId;
      return pick(name);
    }
    return pick(name);
  };
  const pick = (_name: string): string => {
    if (c.param === 'other') return String(t.seeded.otherPub.id);
    if ('fixed' in c.param) return pct(c.param.fixed).replace(/%25/g, '%');
    const pool = /webhooks/.test(ep.path) ? ids.webhooks : /recordings/.test(ep.path) ? ids.recordings : /issuers/.test(ep.path) ? ids.issuers : ids.tokens;
    return String(pool.length ? pool[c.param.live % pool.length] : c.param.live + 1);
  };
  const path = ep.path.replace(/:(\w+)/g, (_, name: string) => fill(name));
  const validQuery = ep.query?.(t);
  const query = c.valid ? validQuery : c.query ?? validQuery;
  const headers: Record<string, string> = { ...ep.headers?.(t) };
  const secret = {
    own: ep.auth === 'admin' ? ADMIN_KEY : ep.auth === 'streamToken' ? t.seeded.pub.token : t.seeded.secret,
    other: ep.auth === 'streamToken' ? t.seeded.sub.token : t.seeded.otherSecret,
    admin: ADMIN_KEY,
    garbage: 'not-a-secret',
    long: 'a'.repeat(10_000),
    none: undefined,
  }[c.valid ? 'own' : c.auth];
  if (secret !== undefined && ep.auth !== 'none') headers.authorization = `Bearer ${secret}`;
  const type = c.valid ? ep.type ?? 'application/json' : c.type;
  if (type !== undefined) headers['content-type'] = type;
  if (!c.valid) Object.assign(headers, c.headers);
  else if (c.headers.origin) headers.origin = c.headers.origin;
  const hasBody = ep.body !== undefined || ep.raw !== undefined || !c.valid;
  let body: Buffer | string | undefined;
  if (hasBody) {
    if (c.valid) body = ep.raw ? ep.raw(t) : JSON.stringify(ep.body?.(t) ?? {});
    else body = c.body[1];
  }
  return { method: ep.method, path: query ? `${path}?${query}` : path, headers, body, route: `${ep.method} ${ep.path}` };
}
