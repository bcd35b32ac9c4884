// A token's record on Redis: one string "<rev>:<CBOR>", its defaults left out and its common fields short (keys.ts token).
import { Encoder } from 'cbor-x';
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { PUBLISH_SETTING_DEFAULTS } from '../../domain/tokens.js';
import { keys } from './keys.js';
import type { RedisConnection } from './connection.js';

/**
 * A token record is one string "<rev>:<CBOR>" (docs/operations.md#what-a-token-costs-on-redis).
 * It leaves out what the key already says (id, account) and every field at its default, which
 * decodeToken puts back, and spells the fields every token has short: the kind as one letter, the
 * dates as epoch milliseconds, a hex token value as its bytes, the streams as names (a pattern as a
 * one-element array). CBOR rather than JSON: the bench's typical token takes 125 bytes instead of
 * 168, two allocation size classes smaller (64 bytes less per token). Records of the earlier
 * layouts ("<rev>:<JSON>", with long or short field names) still decode; they are written in this
 * one at their next write.
 */
const DEFAULTS: Record<TokenKind, Record<string, unknown>> = {
  subscribe: { isActive: true, allowedOrigins: [], allowedIpAddresses: [], allowedCountries: [], deniedCountries: [] },
  publish: {
    isActive: true,
    allowedOrigins: [],
    allowedIpAddresses: [],
    allowedCountries: [],
    deniedCountries: [],
    ...PUBLISH_SETTING_DEFAULTS,
  },
};

/** Short names of the fields most tokens set; the others keep their own names. */
const SHORT: Record<string, string> = {
  label: 'l',
  isActive: 'v',
  allowedOrigins: 'o',
  allowedIpAddresses: 'i',
  allowedCountries: 'c',
  deniedCountries: 'd',
};
const LONG: Record<string, string> = Object.fromEntries(Object.entries(SHORT).map(([k, v]) => [v, k]));

/** A date as Date#toISOString writes it: kept as its epoch ms. */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HEX_TOKEN = /^[0-9a-f]{64}$/;

const isDefault = (value: unknown, def: unknown): boolean =>
  value === def || (Array.isArray(value) && Array.isArray(def) && value.length === 0 && def.length === 0);

/** A date field: its ms under `short`, or the string itself under the upper-case name when it is not canonical. */
function putDate(out: Record<string, unknown>, short: string, v: string): void {
  const ms = ISO_MS.test(v) ? Date.parse(v) : Number.NaN;
  if (!Number.isNaN(ms) && new Date(ms).toISOString() === v) out[short] = ms;
  else out[short.toUpperCase()] = v;
}

const getDate = (j: Record<string, unknown>, short: string): string | undefined => {
  const ms = j[short];
  if (typeof ms === 'number') return new Date(ms).toISOString();
  const v = j[short.toUpperCase()];
  return typeof v === 'string' ? v : undefined;
};

/** Plain maps and byte strings, no record structures or tags: the smallest form, decoded by any CBOR reader. */
const cbor = new Encoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, variableMapSize: true });
const COLON = 0x3a;
const BRACE = 0x7b;

/**
 * The stored form of a record without its rev (the scripts put "<rev>:" before it): a CBOR array
 * of what every token has — kind (0 subscribe, 1 publish), label, token value (bytes, or the text
 * of one that is not 64 hex digits), addedOn (ms, or the text of a date not in toISOString form),
 * streams — then, when any, a map of the other fields by their short names.
 */
export function encodeToken(t: NewTokenRecord | TokenRecord): Buffer {
  const { k, l, x, t: text, a, A, s, ...rest } = shortForm(t);
  const row: unknown[] = [k === 'p' ? 1 : 0, l ?? '', x ?? text, a ?? A, s];
  if (Object.keys(rest).length > 0) row.push(rest);
  return cbor.encode(row);
}

/** The short-named map of a stored row (encodeToken). */
function fromRow(row: unknown[]): Record<string, unknown> {
  const [kind, label, token, added, streams, rest] = row as [number, string, Uint8Array | string, number | string, unknown, Record<string, unknown> | undefined];
  const m: Record<string, unknown> = Object.assign({}, rest);
  m.k = kind === 1 ? 'p' : 's';
  m.l = label;
  m[typeof token === 'string' ? 't' : 'x'] = token;
  m[typeof added === 'number' ? 'a' : 'A'] = added;
  m.s = streams;
  return m;
}

/** The value a record is stored as at `rev` (what the scripts write). */
export const tokenValue = (rev: number, t: NewTokenRecord | TokenRecord): Buffer => Buffer.concat([Buffer.from(`${rev}:`), encodeToken(t)]);

function shortForm(t: NewTokenRecord | TokenRecord): Record<string, unknown> {
  const defaults = DEFAULTS[t.kind];
  const out: Record<string, unknown> = { k: t.kind === 'publish' ? 'p' : 's' };
  for (const [k, v] of Object.entries(t)) {
    if (k === 'id' || k === 'rev' || k === 'accountId' || k === 'kind' || v === undefined) continue;
    switch (k) {
      case 'token':
        if (HEX_TOKEN.test(v as string)) out.x = Buffer.from(v as string, 'hex');
        else out.t = v;
        continue;
      case 'addedOn':
        putDate(out, 'a', v as string);
        continue;
      case 'updatedOn':
        if (v !== t.addedOn) putDate(out, 'u', v as string);
        continue;
      case 'expiresOn':
        putDate(out, 'e', v as string);
        continue;
      case 'streams':
        out.s = (v as TokenRecord['streams']).map((r) => (r.isRegex ? [r.streamName] : r.streamName));
        continue;
      case 'tracking':
        out.r = (v as { trackingId: string }).trackingId;
        continue;
    }
    if (k in defaults && isDefault(v, defaults[k])) continue;
    out[SHORT[k] ?? k] = v;
  }
  return out;
}

/** A record of `kind` with every field a stored record may leave out at its default (fresh arrays). */
function atDefaults(kind: TokenKind, accountId: string): Record<string, unknown> {
  const t: Record<string, unknown> = { kind, accountId };
  for (const [k, def] of Object.entries(DEFAULTS[kind])) t[k] = Array.isArray(def) ? [] : def;
  return t;
}

/** A record in the first layout (long field names). */
function decodeFirst(accountId: string, id: number, rev: number, j: Record<string, unknown> & { kind: TokenKind; addedOn: string; streams: Array<{ streamName: string; isRegex?: boolean }> }): TokenRecord {
  const t = Object.assign(atDefaults(j.kind, accountId), j);
  t.accountId = accountId;
  t.updatedOn = j.updatedOn ?? j.addedOn;
  t.streams = j.streams.map((s) => ({ streamName: s.streamName, isRegex: s.isRegex === true }));
  t.id = id;
  t.rev = rev;
  return t as unknown as TokenRecord;
}

/** A stored record (as GET gives it, bytes or text) with its id and account, or null when there is none. */
export function decodeToken(accountId: string, id: number, raw: Buffer | string | null | undefined): TokenRecord | null {
  if (raw === null || raw === undefined || raw.length === 0) return null;
  let rev: number;
  let j: Record<string, unknown>;
  if (typeof raw === 'string') {
    const colon = raw.indexOf(':');
    rev = Number(raw.slice(0, colon));
    j = JSON.parse(raw.slice(colon + 1)) as Record<string, unknown>;
  } else {
    const colon = raw.indexOf(COLON);
    rev = Number(raw.subarray(0, colon).toString('latin1'));
    const body = raw.subarray(colon + 1);
    j = body[0] === BRACE ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : fromRow(cbor.decode(body) as unknown[]);
  }
  if (typeof j.kind === 'string') return decodeFirst(accountId, id, rev, j as Parameters<typeof decodeFirst>[3]);
  const t = atDefaults(j.k === 'p' ? 'publish' : 'subscribe', accountId);
  for (const [k, v] of Object.entries(j)) {
    switch (k) {
      case 'k':
      case 'a':
      case 'A':
      case 'u':
      case 'U':
      case 'e':
      case 'E':
        continue;
      case 'x':
        // bytes (CBOR), or their base64url (the JSON layout)
        t.token = (typeof v === 'string' ? Buffer.from(v, 'base64url') : Buffer.from(v as Uint8Array)).toString('hex');
        continue;
      case 't':
        t.token = v;
        continue;
      case 's':
        t.streams = (v as Array<string | [string]>).map((r) => (typeof r === 'string' ? { streamName: r, isRegex: false } : { streamName: r[0], isRegex: true }));
        continue;
      case 'r':
        t.tracking = { trackingId: v };
        continue;
    }
    t[LONG[k] ?? k] = v;
  }
  const addedOn = getDate(j, 'a') ?? '';
  t.addedOn = addedOn;
  t.updatedOn = getDate(j, 'u') ?? addedOn;
  const expiresOn = getDate(j, 'e');
  if (expiresOn !== undefined) t.expiresOn = expiresOn;
  t.id = id;
  t.rev = rev;
  return t as unknown as TokenRecord;
}

/** Records of several tokens of one account in one pipeline; ids deleted meanwhile are skipped. */
export async function readTokens(c: RedisConnection, accountId: string, ids: number[]): Promise<TokenRecord[]> {
  if (ids.length === 0) return [];
  const pipe = c.redis.pipeline();
  for (const id of ids) pipe.hgetBuffer(...keys.tokenRecord(accountId, id));
  const res = (await pipe.exec()) ?? [];
  const out: TokenRecord[] = [];
  res.forEach(([err, raw], i) => {
    if (err) throw err;
    const t = decodeToken(accountId, ids[i], raw as Buffer | null);
    if (t) out.push(t);
  });
  return out;
}
