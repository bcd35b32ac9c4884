// CTA-5007 Common Access Tokens (docs/callers.md#cta-5007-common-access-token): a CWT (RFC 8392),
// its claims a CBOR map in a COSE_Mac0 (HMAC-SHA-256, alg 5; or its 64-bit truncation, alg 4) or a
// COSE_Sign1 (ES256, alg -7), with or without the CWT tag (61) and the COSE tag (17, 18). The claims
// an origin can check are checked; a claim that restricts a request in a way this origin cannot
// check (a TLS fingerprint, a header match, coordinates, a proof of possession, …) refuses the token,
// so a restriction is never dropped silently.
import { createHash, createHmac, type KeyObject, sign as signBytes, verify as verifyBytes } from 'node:crypto';
import { Decoder, Tag } from 'cbor-x';
import RE2 from 're2';
import { type ExplainedField, MAX_CREDENTIAL, type SignedRequest, type SignedResult, addressMatches, outside, rawParams, refuse, sameBytes, single, timeProblem, when } from './signed-common.js';

export interface CatKey {
  /** The key id the token names (COSE header 4), as text. */
  kid: string;
  alg: 'HS256' | 'ES256';
  /** HS256: the secret as hex. ES256: an imported public (verify) key. */
  secret?: Buffer;
  publicKey?: KeyObject;
}

export interface CatSettings {
  keys: CatKey[];
  /** `iss` must be this when set. */
  issuer: string | null;
  /** `aud` must hold one of these when any is set. */
  audience: string[];
  /** The addresses viewers request through (`https://cdn.example.com`): catu's scheme, host and port are checked against them. */
  urls: string[];
  /** The query parameter a token may arrive in (besides the CTA-Common-Access-Token header and cookie). */
  queryParam: string;
  clockSkewSeconds: number;
}

export const CAT_HEADER = 'cta-common-access-token';

const decoder = new Decoder({ mapsAsObjects: false, useRecords: false });

/** Claim labels (RFC 8392, CTA-5007). */
const L = { iss: 1, sub: 2, aud: 3, exp: 4, nbf: 5, iat: 6, cti: 7, catreplay: 308, catv: 310, catnip: 311, catu: 312, catm: 313, catgeoiso3166: 316, catr: 323, catif: 322, catifdata: 320 } as const;
/** CAT claims a token may carry that restrict nothing at the origin (renewal and response instructions). */
const INFORMATIONAL = new Set<number>([L.catr, L.catif, L.catifdata]);
/** CTA-5007's claims this origin cannot check, by label: present, they refuse the token. */
const UNCHECKABLE: Record<number, string> = { 8: 'cnf', 282: 'geohash', 309: 'catpor', 314: 'catalpn', 315: 'cath', 317: 'catgeocoord', 318: 'catgeoalt', 319: 'cattpk', 321: 'catdpop', 324: 'cattprint' };
const CHECKED = new Set<number>([L.iss, L.sub, L.aud, L.exp, L.nbf, L.iat, L.cti, L.catreplay, L.catv, L.catnip, L.catu, L.catm, L.catgeoiso3166]);

/** The token in the request (header, cookie, then query parameter), or undefined. */
export function findCat(req: SignedRequest, queryParam: string): { token: string; from: string } | { problem: string } | undefined {
  const h = req.header(CAT_HEADER);
  if (h !== undefined) return { token: h.trim(), from: 'header CTA-Common-Access-Token' };
  for (const [name, value] of req.cookies) if (name.toLowerCase() === CAT_HEADER) return { token: value, from: `cookie ${name}` };
  const q = single(rawParams(req.query), queryParam);
  if (typeof q === 'object') return q;
  return q === undefined ? undefined : { token: q, from: `query ${queryParam}` };
}

// ---- CBOR, the few shapes COSE's to-be-signed structures need ------------------------------

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}
const bstr = (b: Buffer) => Buffer.concat([head(2, b.length), b]);
const tstr = (s: string) => Buffer.concat([head(3, Buffer.byteLength(s)), Buffer.from(s)]);

/** The bytes a COSE_Mac0 tag or COSE_Sign1 signature covers (RFC 9052 §4.4, §6.3), with no external data. */
function toBeSigned(context: 'MAC0' | 'Signature1', protectedBytes: Buffer, payload: Buffer): Buffer {
  return Buffer.concat([head(4, 4), tstr(context), bstr(protectedBytes), bstr(Buffer.alloc(0)), bstr(payload)]);
}

const asBuffer = (v: unknown): Buffer | undefined => (Buffer.isBuffer(v) ? v : v instanceof Uint8Array ? Buffer.from(v) : undefined);

interface Cose {
  kind: 'mac' | 'sign';
  tagged: string;
  protectedBytes: Buffer;
  alg: number;
  kid: string | undefined;
  payload: Buffer;
  tag: Buffer;
}

function unwrap(raw: Buffer): Cose | { problem: string } {
  let v: unknown;
  try {
    v = decoder.decode(raw);
  } catch {
    return { problem: 'not CBOR' };
  }
  const tags: number[] = [];
  while (v instanceof Tag) {
    tags.push(v.tag);
    v = v.value;
  }
  if (tags.length > 2 || (tags.length === 2 && tags[0] !== 61) || tags.some((t) => ![61, 17, 18].includes(t))) return { problem: `tags ${tags.join(', ')}: expected an optional CWT tag 61 and an optional COSE tag 17 or 18` };
  if (!Array.isArray(v) || v.length !== 4) return { problem: 'not a COSE_Mac0 or COSE_Sign1 (a 4-element array)' };
  const [p, u, payload, tag] = v as unknown[];
  const protectedBytes = asBuffer(p);
  if (protectedBytes === undefined) return { problem: 'the protected header is not a byte string' };
  let prot: unknown = new Map();
  if (protectedBytes.length > 0) {
    try {
      prot = decoder.decode(protectedBytes);
    } catch {
      return { problem: 'the protected header is not CBOR' };
    }
  }
  if (!(prot instanceof Map) || !(u instanceof Map)) return { problem: 'a COSE header is not a map' };
  if (typeof payload === 'string') return { problem: 'the payload is a text string, not a byte string holding the claims (a CWT needs a bstr payload)' };
  const pay = asBuffer(payload);
  const t = asBuffer(tag);
  if (pay === undefined || t === undefined) return { problem: 'the payload or the tag is not a byte string' };
  const alg = prot.get(1);
  if (typeof alg !== 'number') return { problem: 'the protected header names no algorithm (label 1)' };
  if (u.has(1)) return { problem: 'the algorithm is in the unprotected header' };
  const kidRaw = prot.get(4) ?? u.get(4);
  const kidBytes = asBuffer(kidRaw);
  const kid = kidBytes?.toString('utf8') ?? (typeof kidRaw === 'string' ? kidRaw : undefined);
  const coseTag = tags.find((x) => x !== 61);
  const kind = coseTag === 17 || (coseTag === undefined && (alg === 4 || alg === 5)) ? 'mac' : 'sign';
  return { kind, tagged: tags.length ? `tags ${tags.join(', ')}` : 'untagged', protectedBytes, alg, kid, payload: pay, tag: t };
}

/** The token's bytes: base64url without padding, padding tolerated. */
function bytesOf(token: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) return undefined;
  return Buffer.from(token, 'base64url');
}

function verifyCose(c: Cose, key: CatKey): boolean {
  if (c.kind === 'mac') {
    if (key.alg !== 'HS256' || !key.secret || (c.alg !== 5 && c.alg !== 4)) return false;
    const full = createHmac('sha256', key.secret).update(toBeSigned('MAC0', c.protectedBytes, c.payload)).digest();
    return sameBytes(c.alg === 4 ? full.subarray(0, 8) : full, c.tag);
  }
  if (key.alg !== 'ES256' || !key.publicKey || c.alg !== -7 || c.tag.length !== 64) return false;
  return verifyBytes('sha256', toBeSigned('Signature1', c.protectedBytes, c.payload), { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, c.tag);
}

// ---- claims ------------------------------------------------------------------------------------

const URI_PARTS = ['scheme', 'host', 'port', 'path', 'query', 'parent-path', 'filename', 'stem', 'extension'];
const MATCHES: Record<number, string> = { 0: 'exact', 1: 'prefix', 2: 'suffix', 3: 'contains', 4: 'regex', [-1]: 'sha256', [-2]: 'sha512-256' };

function uriPart(part: number, path: string, query: string, base: URL | undefined): string | undefined {
  const file = path.slice(path.lastIndexOf('/') + 1);
  const dot = file.indexOf('.');
  switch (part) {
    case 0:
      return base?.protocol.slice(0, -1);
    case 1:
      return base?.hostname;
    case 2:
      return base?.port;
    case 3:
      return path;
    case 4:
      return query;
    case 5:
      return path.slice(0, path.lastIndexOf('/'));
    case 6:
      return file;
    case 7:
      return dot < 0 ? file : file.slice(0, dot);
    case 8:
      return dot < 0 ? '' : file.slice(dot);
  }
  return undefined;
}

function matchOne(type: number, value: string, want: unknown): boolean | { problem: string } {
  if (type === 4) {
    if (!Array.isArray(want) || typeof want[0] !== 'string' || want[0].length > 512) return { problem: 'a regex match is not [pattern, flags]' };
    try {
      return new RE2(want[0], typeof want[1] === 'string' ? want[1].replace(/[^imsu]/g, '') : '').test(value);
    } catch {
      return { problem: 'a regex match does not compile' };
    }
  }
  const w = typeof want === 'string' ? want : asBuffer(want)?.toString('hex');
  if (w === undefined) return { problem: `a ${MATCHES[type] ?? type} match value is not text` };
  switch (type) {
    case 0:
      return value === w;
    case 1:
      return value.startsWith(w);
    case 2:
      return value.endsWith(w);
    case 3:
      return value.includes(w);
    case -1:
      return createHash('sha256').update(value).digest('hex') === w.toLowerCase();
    case -2:
      return createHash('sha512-256').update(value).digest('hex') === w.toLowerCase();
  }
  return { problem: `match type ${type} is not one CTA-5007 defines` };
}

/** catu against the request: every component listed, every match of it. */
function catuProblem(catu: unknown, req: SignedRequest, s: CatSettings): string | null {
  if (!(catu instanceof Map)) return 'catu is not a map';
  const query = rawParams(req.query)
    .filter(([n]) => n !== s.queryParam)
    .map(([n, v]) => `${n}=${v}`)
    .sort()
    .join('&');
  const bases = s.urls.length > 0 ? s.urls.map((u) => new URL(u)) : [undefined];
  const problems: string[] = [];
  for (const base of bases) {
    let problem: string | null = null;
    for (const [part, matches] of catu) {
      const name = URI_PARTS[part as number];
      if (name === undefined) return `catu component ${String(part)} is not one CTA-5007 defines`;
      if (!(matches instanceof Map) || matches.size === 0) return `catu ${name} holds no match`;
      const value = uriPart(part as number, req.path, query, base);
      if (value === undefined) return `catu checks the ${name}, and this issuer has no urls to check it against`;
      for (const [type, want] of matches) {
        const wanted = part === 4 && typeof want === 'string' ? want.replace(/^\?/, '').split('&').filter(Boolean).sort().join('&') : want;
        const r = matchOne(type as number, value, wanted);
        if (typeof r === 'object') return `catu ${name}: ${r.problem}`;
        if (!r) {
          problem = `the ${name} ${value} fails catu's ${MATCHES[type as number]} match`;
          break;
        }
      }
      if (problem) break;
    }
    if (problem === null) return null;
    problems.push(problem);
  }
  return problems[0] ?? null;
}

/** catnip against the client address: tag 52 (IPv4) or 54 (IPv6) addresses and prefixes; an ASN cannot be checked here. */
function catnipProblem(catnip: unknown, clientIp: string | undefined): string | null {
  const list = Array.isArray(catnip) ? catnip : [catnip];
  if (clientIp === undefined) return 'catnip restricts addresses, and the client address is unknown';
  let asn = false;
  for (const e of list) {
    if (typeof e === 'number') {
      asn = true;
      continue;
    }
    if (!(e instanceof Tag) || (e.tag !== 52 && e.tag !== 54)) return 'a catnip entry is not an address (tag 52 or 54) or an ASN';
    const v4 = e.tag === 52;
    const size = v4 ? 4 : 16;
    let bytes: Buffer | undefined;
    let bits = size * 8;
    if (Array.isArray(e.value)) {
      const [a, b] = e.value as unknown[];
      // RFC 9164: [length, prefix bytes] for a prefix, [address bytes, length] for an interface
      const [len, raw] = typeof a === 'number' ? [a, b] : [b, a];
      bytes = asBuffer(raw);
      if (typeof len !== 'number' || len < 0 || len > size * 8) return 'a catnip prefix length is out of range';
      bits = len;
    } else bytes = asBuffer(e.value);
    if (bytes === undefined || bytes.length > size) return 'a catnip address is not a byte string of its family';
    const full = Buffer.concat([bytes, Buffer.alloc(size - bytes.length)]);
    const text = v4 ? [...full].join('.') : [...Array(8).keys()].map((i) => full.readUInt16BE(i * 2).toString(16)).join(':');
    if (addressMatches(clientIp, `${text}/${bits}`)) return null;
  }
  return asn && list.every((e) => typeof e === 'number') ? 'catnip names autonomous systems, which this origin cannot check' : `address ${clientIp} is in no catnip entry`;
}

export function verifyCat(token: string, req: SignedRequest, s: CatSettings, now: number): SignedResult {
  const fields: ExplainedField[] = [];
  if (token.length > MAX_CREDENTIAL) return refuse(`the token is longer than ${MAX_CREDENTIAL} characters`);
  const raw = bytesOf(token);
  if (raw === undefined) return refuse('the token is not base64url');
  const c = unwrap(raw);
  if ('problem' in c) return refuse(`not a CAT: ${c.problem}`);
  fields.push({ name: 'structure', value: `${c.kind === 'mac' ? 'COSE_Mac0' : 'COSE_Sign1'}, ${c.tagged}, alg ${c.alg}` }, { name: 'kid', value: c.kid ?? '(none)' });
  const keys = c.kid === undefined ? s.keys : s.keys.filter((k) => k.kid === c.kid);
  if (keys.length === 0) return refuse(`kid ${String(c.kid).slice(0, 64)} is not one of the issuer's keys`, fields);
  const key = keys.find((k) => verifyCose(c, k));
  const signed = toBeSigned(c.kind === 'mac' ? 'MAC0' : 'Signature1', c.protectedBytes, c.payload).toString('hex');
  fields.push({ name: c.kind === 'mac' ? 'tag' : 'signature', value: c.tag.toString('hex'), check: key ? `matches key ${key.kid}` : 'matches no key of the issuer', ok: key !== undefined });
  if (!key) return refuse(`the ${c.kind === 'mac' ? 'MAC' : 'signature'} does not match: the key, algorithm or the claims differ`, fields, signed);

  let claims: unknown;
  try {
    claims = decoder.decode(c.payload);
  } catch {
    return refuse('the claims are not CBOR', fields, signed);
  }
  if (!(claims instanceof Map)) return refuse('the claims are not a CBOR map', fields, signed);
  for (const label of claims.keys()) {
    if (typeof label === 'number' && UNCHECKABLE[label] !== undefined) return refuse(`the token carries ${UNCHECKABLE[label]} (${label}), a restriction this origin cannot check`, fields, signed);
    if (typeof label === 'number' && label >= 282 && label <= 399 && !CHECKED.has(label) && !INFORMATIONAL.has(label)) return refuse(`the token carries claim ${label}, which this origin does not know`, fields, signed);
  }
  const get = (l: number) => claims.get(l) as unknown;
  const iss = get(L.iss);
  if (s.issuer !== null) {
    fields.push({ name: 'iss', value: String(iss), check: iss === s.issuer ? 'is the issuer' : `is not ${s.issuer}`, ok: iss === s.issuer });
    if (iss !== s.issuer) return refuse(`iss is not ${s.issuer}`, fields, signed);
  }
  if (s.audience.length > 0) {
    const aud = get(L.aud);
    const list = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
    const ok = list.some((a) => typeof a === 'string' && s.audience.includes(a));
    fields.push({ name: 'aud', value: list.join(', ') || '(none)', check: ok ? 'names this origin' : `names none of ${s.audience.join(', ')}`, ok });
    if (!ok) return refuse('aud is not one the issuer accepts', fields, signed);
  }
  const num = (l: number) => {
    const v = get(l);
    return v === undefined ? undefined : typeof v === 'number' && Number.isFinite(v) ? Math.floor(v) : null;
  };
  const exp = num(L.exp);
  const nbf = num(L.nbf);
  const iat = num(L.iat);
  if (exp === null || nbf === null || iat === null) return refuse('exp, nbf and iat must be NumericDates', fields, signed);
  if (exp === undefined) return refuse('exp is missing (a token without one would never expire)', fields, signed);
  const catv = get(L.catv);
  if (catv !== undefined && catv !== 1) return refuse(`catv ${String(catv)} is not version 1`, fields, signed);
  const time = timeProblem(now, s.clockSkewSeconds, exp, nbf, fields);
  if (time) return refuse(time.problem, fields, signed, time.expired);
  if (iat !== undefined && iat > now + s.clockSkewSeconds) return refuse(`issued in the future (iat ${when(iat)})`, fields, signed);

  const catu = get(L.catu);
  if (catu !== undefined) {
    const p = catuProblem(catu, req, s);
    fields.push({ name: 'catu', value: req.path, check: p ?? 'the URI matches', ok: p === null });
    if (p) return outside('path', p, fields, signed);
  }
  const catm = get(L.catm);
  if (catm !== undefined) {
    const list = (Array.isArray(catm) ? catm : [catm]).filter((m): m is string => typeof m === 'string').map((m) => m.toUpperCase());
    if (req.method === '') return refuse("catm restricts methods, and the request's method is unknown (an auth_request caller tells it with hooks.authRequest.methodFrom)", fields, signed);
    const ok = list.includes(req.method.toUpperCase());
    fields.push({ name: 'catm', value: list.join(', '), check: `${req.method} ${ok ? 'is' : 'is not'} among them`, ok });
    if (!ok) return refuse(`method ${req.method} is not in catm`, fields, signed);
  }
  const catnip = get(L.catnip);
  if (catnip !== undefined) {
    const p = catnipProblem(catnip, req.clientIp);
    fields.push({ name: 'catnip', value: req.clientIp ?? 'unknown', check: p ?? 'the address is in it', ok: p === null });
    if (p) return outside('address', p, fields, signed);
  }
  const geo = get(L.catgeoiso3166);
  if (geo !== undefined) {
    const list = (Array.isArray(geo) ? geo : [geo]).filter((g): g is string => typeof g === 'string').map((g) => g.toUpperCase());
    const country = req.country?.toUpperCase();
    const ok = country !== undefined && list.some((g) => g === country || g.split('-')[0] === country);
    fields.push({ name: 'catgeoiso3166', value: list.join(', '), check: country === undefined ? 'the viewer country is unknown' : `${country} ${ok ? 'is' : 'is not'} among them`, ok });
    if (!ok) return outside('country', country === undefined ? 'catgeoiso3166 restricts countries, and the viewer country is unknown' : `country ${country} is not in catgeoiso3166`, fields, signed);
  }
  const replay = get(L.catreplay);
  if (replay !== undefined && replay !== 0 && replay !== 1 && replay !== 2) return refuse('catreplay is not 0, 1 or 2', fields, signed);
  const cti = asBuffer(get(L.cti));
  if (replay === 1 && cti === undefined) return refuse('catreplay prohibits reuse, and the token has no cti to track it by', fields, signed);
  const sub = get(L.sub);
  return {
    ok: true,
    grant: {
      format: 'cat',
      exp,
      ...(nbf !== undefined ? { nbf } : {}),
      keyId: key.kid,
      ...(cti !== undefined ? { id: cti.toString('hex') } : typeof sub === 'string' ? { id: sub } : {}),
      scope: catu !== undefined ? 'catu' : 'any URI',
      ...(catNarrow(catu, catm) ? { narrow: true } : {}),
      ...(replay === 1 ? { replay: 'prohibited' as const } : replay === 2 ? { replay: 'detect' as const } : {}),
    },
    fields,
    signed,
  };
}

/**
 * Whether a CAT restricts what a stream-wide viewer session cannot carry: methods (catm), the query,
 * or one object (an exact path or filename match), so each request must present it.
 */
function catNarrow(catu: unknown, catm: unknown): boolean {
  if (catm !== undefined) return true;
  if (!(catu instanceof Map)) return false;
  if (catu.has(4)) return true;
  for (const part of [3, 6]) {
    const m = catu.get(part);
    if (m instanceof Map && m.has(0)) return true;
  }
  return false;
}

// ---- issuing --------------------------------------------------------------------------------

function encodeItem(v: unknown): Buffer {
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new Error('only integers');
    return v >= 0 ? head(0, v) : head(1, -1 - v);
  }
  if (typeof v === 'string') return tstr(v);
  if (Buffer.isBuffer(v)) return bstr(v);
  if (v instanceof Tag) return Buffer.concat([head(6, v.tag), encodeItem(v.value)]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(encodeItem)]);
  if (v instanceof Map) return Buffer.concat([head(5, v.size), ...[...v].flatMap(([k, x]) => [encodeItem(k), encodeItem(x)])]);
  throw new Error(`cannot encode ${typeof v}`);
}

/**
 * Issues a CAT: claims by label (numbers, text, Buffers, arrays, Maps, Tags), MACed with HS256
 * (COSE_Mac0) or signed with ES256 (COSE_Sign1), wrapped in the CWT tag; base64url without padding.
 */
export function signCat(claims: Map<number, unknown>, kid: string, key: { alg: 'HS256'; secret: Buffer } | { alg: 'ES256'; privateKey: KeyObject }): string {
  const payload = encodeItem(claims);
  const alg = key.alg === 'HS256' ? 5 : -7;
  const protectedBytes = encodeItem(new Map([[1, alg]]));
  const unprotected = new Map([[4, Buffer.from(kid)]]);
  const context = key.alg === 'HS256' ? 'MAC0' : 'Signature1';
  const tbs = toBeSigned(context, protectedBytes, payload);
  const tag = key.alg === 'HS256' ? createHmac('sha256', key.secret).update(tbs).digest() : signBytes('sha256', tbs, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  const cose = new Tag([protectedBytes, unprotected, payload, tag], key.alg === 'HS256' ? 17 : 18);
  return encodeItem(new Tag(cose, 61)).toString('base64url');
}
