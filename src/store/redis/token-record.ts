// A token's record on Redis: one string "<rev>:<json>", its defaults left out and its common fields short (keys.ts token).
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { PUBLISH_SETTING_DEFAULTS } from '../../domain/tokens.js';
import { keys } from './keys.js';
import type { RedisConnection } from './connection.js';

/**
 * A token record is one string "<rev>:<json>" (docs/operations.md#what-a-token-costs-on-redis).
 * The JSON leaves out what the key already says (id, account) and every field at its default, which
 * decodeToken puts back, and spells the fields every token has short: the kind as one letter, the
 * dates as epoch milliseconds, a hex token value as the base64url of its bytes, the streams as
 * names (a pattern as a one-element array). A record in the first layout (long field names, which
 * has `kind`) still decodes; it is written in this one at its next write.
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

export function encodeToken(t: NewTokenRecord | TokenRecord): string {
  const defaults = DEFAULTS[t.kind];
  const out: Record<string, unknown> = { k: t.kind === 'publish' ? 'p' : 's' };
  for (const [k, v] of Object.entries(t)) {
    if (k === 'id' || k === 'rev' || k === 'accountId' || k === 'kind' || v === undefined) continue;
    switch (k) {
      case 'token':
        if (HEX_TOKEN.test(v as string)) out.x = Buffer.from(v as string, 'hex').toString('base64url');
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
  return JSON.stringify(out);
}

/** A record in the first layout (long field names). */
function decodeFirst(accountId: string, id: number, rev: number, j: Record<string, unknown> & { kind: TokenKind; addedOn: string; streams: Array<{ streamName: string; isRegex?: boolean }> }): TokenRecord {
  const defaults = DEFAULTS[j.kind];
  const t: Record<string, unknown> = { kind: j.kind, accountId };
  for (const [k, def] of Object.entries(defaults)) t[k] = Array.isArray(def) ? [] : def;
  Object.assign(t, j);
  t.accountId = accountId;
  t.updatedOn = j.updatedOn ?? j.addedOn;
  t.streams = j.streams.map((s) => ({ streamName: s.streamName, isRegex: s.isRegex === true }));
  t.id = id;
  t.rev = rev;
  return t as unknown as TokenRecord;
}

export function decodeToken(accountId: string, id: number, raw: string | null | undefined): TokenRecord | null {
  if (!raw) return null;
  const colon = raw.indexOf(':');
  const rev = Number(raw.slice(0, colon));
  const j = JSON.parse(raw.slice(colon + 1)) as Record<string, unknown>;
  if (typeof j.kind === 'string') return decodeFirst(accountId, id, rev, j as Parameters<typeof decodeFirst>[3]);
  const kind: TokenKind = j.k === 'p' ? 'publish' : 'subscribe';
  const defaults = DEFAULTS[kind];
  const t: Record<string, unknown> = { kind, accountId };
  for (const [k, def] of Object.entries(defaults)) t[k] = Array.isArray(def) ? [] : def;
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
        t.token = Buffer.from(v as string, 'base64url').toString('hex');
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
  for (const id of ids) pipe.get(keys.token(accountId, id));
  const res = (await pipe.exec()) ?? [];
  const out: TokenRecord[] = [];
  res.forEach(([err, raw], i) => {
    if (err) throw err;
    const t = decodeToken(accountId, ids[i], raw as string | null);
    if (t) out.push(t);
  });
  return out;
}
