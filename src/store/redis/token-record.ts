// A token's record on Redis: one string "<rev>:<json>", its defaults left out (keys.ts token).
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { PUBLISH_SETTING_DEFAULTS } from '../../domain/tokens.js';
import { keys } from './keys.js';
import type { RedisConnection } from './connection.js';

/**
 * A token record is one string "<rev>:<json>" (under 1 KiB per token; docs/operations.md#what-a-token-costs-on-redis). The JSON leaves out
 * what the key already says (id, account) and every field at its default, which decodeToken puts
 * back: a typical record is much shorter, and a string costs far less than a hash
 * whose JSON field is too long to be kept as a listpack.
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

const isDefault = (value: unknown, def: unknown): boolean =>
  value === def || (Array.isArray(value) && Array.isArray(def) && value.length === 0 && def.length === 0);

export function encodeToken(t: NewTokenRecord | TokenRecord): string {
  const defaults = DEFAULTS[t.kind];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) {
    if (k === 'id' || k === 'rev' || k === 'accountId' || v === undefined) continue;
    if (k === 'updatedOn' && v === t.addedOn) continue;
    if (k === 'streams') {
      out.streams = (v as TokenRecord['streams']).map((s) => (s.isRegex ? { streamName: s.streamName, isRegex: true } : { streamName: s.streamName }));
      continue;
    }
    if (k in defaults && isDefault(v, defaults[k])) continue;
    out[k] = v;
  }
  return JSON.stringify(out);
}

export function decodeToken(accountId: string, id: number, raw: string | null | undefined): TokenRecord | null {
  if (!raw) return null;
  const colon = raw.indexOf(':');
  const rev = Number(raw.slice(0, colon));
  const j = JSON.parse(raw.slice(colon + 1)) as Record<string, unknown> & { kind: TokenKind; addedOn: string; streams: Array<{ streamName: string; isRegex?: boolean }> };
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
