// A session registry record on Redis (keys.sessionRecord), in one of two forms, both JSON text:
// an object, as earlier builds wrote it, or a row (docs/operations.md#what-a-viewer-session-costs-on-redis).
import type { Session } from '../sessions.js';

/**
 * The meta key saying which form records are written in, by an admission and at every later write:
 * `compact` (rows) or `json` (objects). Every instance of this build reads both; an earlier build
 * reads objects only, so a store it used writes objects until the operator switches it
 * (`streamgate store session-records compact`; upgrade.ts settles a new store's).
 */
export const SESSION_RECORDS_META = 'session-records';
export type SessionRecordForm = 'json' | 'compact';
export const isSessionRecordForm = (v: unknown): v is SessionRecordForm => v === 'json' || v === 'compact';

/** The row's version, its first element. */
const ROW_VERSION = 1;

/**
 * The row's fields after its version, in order: those every record has first, the rarer ones
 * after, so that a record leaves its unset tail out. session-record.lua spells the same list.
 */
export const ROW_FIELDS = [
  'id',
  'caller',
  'sessionId',
  'action',
  'accountId',
  'streamName',
  'startedOn',
  'lastSeenOn',
  'tokenId',
  'clientIp',
  'protocol',
  'serverAddress',
  'trackingId',
  'subject',
  'feedId',
  'native',
  'endedReason',
  'endedOn',
] as const satisfies ReadonlyArray<keyof Session>;

const DATES = new Set<string>(['startedOn', 'lastSeenOn', 'endedOn']);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A date as its epoch ms in digits when Date#toISOString gives it back exactly, else the text
 * itself. Digits in a string, not a number: the scripts' cjson formats and parses numbers far more
 * slowly than it copies text, and a touch writes a date into every record.
 */
function dateCell(v: string): string {
  if (!ISO_MS.test(v)) return v;
  const ms = Date.parse(v);
  return !Number.isNaN(ms) && new Date(ms).toISOString() === v ? String(ms) : v;
}
const DIGITS = /^\d+$/;

/**
 * The stored text of `s`. The row: [version, then ROW_FIELDS' values], null for one unset, the
 * unset tail left out; the action as 0 (subscribe) or 1 (publish), dates as their epoch ms in
 * digits. The bench's HTTP viewer takes about 180 bytes so, against 330 as an object.
 */
export function encodeSession(s: Session, form: SessionRecordForm): string {
  if (form === 'json') return JSON.stringify(s);
  const row: unknown[] = [ROW_VERSION];
  let last = 0;
  for (const f of ROW_FIELDS) {
    const v = s[f];
    if (v === undefined) {
      row.push(null);
      continue;
    }
    row.push(f === 'action' ? (v === 'publish' ? 1 : 0) : DATES.has(f) ? dateCell(v as string) : v);
    last = row.length;
  }
  row.length = last;
  return JSON.stringify(row);
}

/** A stored record, in either form, as the registry's Session. */
export function decodeSession(raw: string): Session {
  const j = JSON.parse(raw) as unknown;
  if (!Array.isArray(j)) return j as Session;
  if (j[0] !== ROW_VERSION) throw new Error(`a session record of row version ${String(j[0])}, which this build does not read`);
  const out: Record<string, unknown> = {};
  ROW_FIELDS.forEach((f, i) => {
    const v = j[i + 1];
    if (v === null || v === undefined) return;
    out[f] = f === 'action' ? (v === 1 ? 'publish' : 'subscribe') : DATES.has(f) && typeof v === 'string' && DIGITS.test(v) ? new Date(Number(v)).toISOString() : v;
  });
  return out as unknown as Session;
}
