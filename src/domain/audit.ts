// The audit log of management changes (docs/api.md#audit-log): an entry's shape, its canonical
// form, the HMAC chain that seals each account's entries, the chain's verification, and the diff of
// a change with secret values masked. Pure but for node:crypto's HMAC; the key is always an argument.
import { createHmac } from 'node:crypto';

/** What a change did: a record created, changed or deleted; a session cut; streams stopped. */
export const AUDIT_ACTIONS = ['create', 'update', 'delete', 'cut', 'stop'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an entry's change is about (docs/api.md#audit-log lists them). */
export const AUDIT_RESOURCES = [
  'account',
  'apiSecret',
  'publishToken',
  'subscribeToken',
  'securedStream',
  'webhook',
  'issuer',
  'recording',
  'session',
  'stream',
] as const;
export type AuditResource = (typeof AUDIT_RESOURCES)[number];

/** A field's value before and after (absent before a create, after a delete); secret values masked. */
export interface AuditChange {
  from?: unknown;
  to?: unknown;
}

/** One entry of an account's audit chain, as stored and answered. */
export interface AuditEntry {
  /** 1, 2, 3, ... per account: the entry's place in its account's chain. */
  seq: number;
  accountId: string;
  /** When the change was made (ISO 8601, the management service's clock). */
  at: string;
  /** `api-secret:<first 8 hex of the secret's SHA-256>`, `admin`, `cli` or `system`. */
  actor: string;
  /** The client address of the request (null: the CLI, the server itself). */
  address: string | null;
  /** The request's X-Request-Id (null outside a request). */
  requestId: string | null;
  action: AuditAction;
  resource: AuditResource;
  /** The record's id (a token or issuer id, a stream name, ...). */
  resourceId: string;
  /** Field → {from, to}; secret values replaced by MASK / CHANGED. */
  changes: Record<string, AuditChange>;
  /** HMAC-SHA256(key, previous entry's mac || canonicalJson(this entry without mac)), hex. */
  mac: string;
}

/** An entry as the management service describes it, before the chain numbers and seals it. */
export type AuditFields = Omit<AuditEntry, 'seq' | 'mac'>;

/** The last link of a chain (its head), or the last pruned one (its anchor). */
export interface AuditHead {
  seq: number;
  mac: string;
}

/**
 * Where a chain starts once retention removed its oldest entries: the last removed entry, whole, and
 * the MAC of the entry before it. Verify recomputes the anchor's own MAC, so whoever writes the store
 * cannot move a chain's start without the key, and checks that retention could have removed it.
 */
export interface AuditAnchor extends AuditHead {
  /** The removed entry's text, as it was stored. */
  text: string;
  /** The MAC of the entry before it ('' before the first). */
  previousMac: string;
}

/**
 * Seals the entry of one change: given the record before and after it (null: none, a create or a
 * delete) and the account's head as the store holds it in the same atomic step, answers the entry
 * numbered head.seq + 1 and chained to head.mac. Synchronous and pure (the key is closed over):
 * a backend may call it again on a newer head and record.
 */
export type AuditSealer<T> = (before: T | null, after: T | null, head: AuditHead | null) => AuditEntry;

/** What a secret value is shown as, before or after. */
export const MASK = '***';
/** What a secret value that was replaced by another is shown as after. */
export const CHANGED = 'changed';

/** JSON with every object's keys sorted and undefined members left out: one text per value. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  const parts: string[] = [];
  for (const k of Object.keys(v).sort()) {
    const x = (v as Record<string, unknown>)[k];
    if (x !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(x)}`);
  }
  return `{${parts.join(',')}}`;
}

/** The MAC of an entry chained to the one before it ('' before the first). */
export function chainMac(key: string | Buffer, previousMac: string, entry: Omit<AuditEntry, 'mac'>): string {
  return createHmac('sha256', key).update(previousMac, 'utf8').update(canonicalJson(entry), 'utf8').digest('hex');
}

/** The entry after `head`: numbered and sealed. */
export function sealEntry(key: string | Buffer, head: AuditHead | null, fields: AuditFields): AuditEntry {
  const entry: Omit<AuditEntry, 'mac'> = Object.assign({ seq: (head?.seq ?? 0) + 1 }, fields);
  return Object.assign(entry, { mac: chainMac(key, head?.mac ?? '', entry) });
}

/** The actor of a request made with an API secret: its hash's first 8 hex digits, never the secret. */
export const apiSecretActor = (secretHash: string): string => `api-secret:${secretHash.slice(0, 8)}`;

/** What the diff leaves out and what it masks, per kind of record. */
export interface DiffRules {
  /** Fields whose values are never stored: shown as MASK, or CHANGED for a new value. */
  secret: readonly string[];
  /** Fields not shown (bookkeeping: revisions, timestamps the entry has anyway). */
  ignore: readonly string[];
}

/**
 * The fields a change touched, each {from, to} (no `from` on a create, no `to` on a delete), secret
 * fields masked: a secret set shows MASK, one replaced shows MASK → CHANGED, one removed MASK → null.
 */
export function auditDiff(before: object | null, after: object | null, rules: DiffRules): Record<string, AuditChange> {
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  const names = [...new Set([...Object.keys(b), ...Object.keys(a)])].filter((k) => !rules.ignore.includes(k)).sort();
  const out: Record<string, AuditChange> = {};
  for (const k of names) {
    const from = b[k] ?? null;
    const to = a[k] ?? null;
    if (canonicalJson(from) === canonicalJson(to)) continue;
    const secret = rules.secret.includes(k);
    const change: AuditChange = {};
    if (before !== null) change.from = secret ? (from === null ? null : MASK) : from;
    if (after !== null) change.to = secret ? (to === null ? null : before === null || from === null ? MASK : CHANGED) : to;
    out[k] = change;
  }
  return out;
}

/** What is wrong with a chain's first broken link. */
export type AuditProblem = 'missing' | 'edited' | 'out_of_order' | 'unsealed';

export interface AuditBreak {
  /** The seq of the link that is broken (the first one the walk could not vouch for). */
  seq: number;
  problem: AuditProblem;
  detail: string;
}

export type AuditVerdict =
  | {
      ok: true;
      entries: number;
      first: number | null;
      last: number | null;
      /** With a logged head: `matched` (the chain holds that link), `pruned` (retention removed it; the anchor is past it). */
      logged?: 'matched' | 'pruned';
    }
  | { ok: false; entries: number; broken: AuditBreak };

const HEX_MAC = /^[0-9a-f]{64}$/;

/**
 * What is wrong with an anchor, if anything: it must be a genuine entry of this account (its MAC
 * recomputed on the MAC before it) made before retention's bound. Otherwise the chain's start was
 * moved by whoever wrote the store, and the entries before it are missing, not pruned.
 */
function anchorBreak(key: string | Buffer, accountId: string, anchor: AuditAnchor, removableBefore: number | null): AuditBreak | undefined {
  const { seq } = anchor;
  let e: Partial<AuditEntry> | undefined;
  try {
    e = JSON.parse(anchor.text) as Partial<AuditEntry>;
  } catch {
    e = undefined;
  }
  if (e === null || typeof e !== 'object' || e.seq !== seq || e.mac !== anchor.mac || e.accountId !== accountId) {
    return { seq, problem: 'edited', detail: `the anchor (entry ${seq}, the last one retention removed) is not that entry: the chain's start was moved` };
  }
  const { mac, ...rest } = e as AuditEntry;
  if (chainMac(key, anchor.previousMac, rest) !== mac) {
    return { seq, problem: 'edited', detail: `the anchor (entry ${seq}, the last one retention removed) does not match its MAC: the chain's start was moved` };
  }
  const at = Date.parse(String(e.at));
  if (removableBefore === null) {
    return { seq, problem: 'missing', detail: `entries up to ${seq} were removed, and retention is off (audit.retentionDays is 0)` };
  }
  if (!(at < removableBefore)) {
    return {
      seq,
      problem: 'missing',
      detail: `entries up to ${seq} were removed, but retention removes only entries made before ${new Date(removableBefore).toISOString()} and entry ${seq} was made at ${String(e.at)}`,
    };
  }
  return undefined;
}

/**
 * Walks an account's stored entries in the order the store keeps them (by seq), from its anchor
 * (the last pruned link, itself checked, else none), recomputing every MAC. Fed in chunks (`push`), then `finish`
 * compares the end with the stored head and, when given, a head logged earlier: the first broken
 * link is named with its seq and what is wrong — `missing` (deleted, or the tail cut off),
 * `edited` (its MAC does not match: changed, forged, or moved from elsewhere), `out_of_order`
 * (stored at another place than its seq), `unsealed` (no MAC).
 */
export class ChainWalk {
  private previousMac: string;
  private expected: number;
  private entries = 0;
  private first: number | null = null;
  private last: number | null = null;
  private broken: AuditBreak | undefined;
  /** A seq found where another was expected: whether the expected one comes later decides the problem. */
  private gap: { expected: number; found: number } | undefined;
  private gapSeenLater = false;

  private loggedFound: 'matched' | 'pruned' | undefined;

  /**
   * `anchor`: where retention left the chain's start; `removableBefore`: the time (epoch ms) before
   * which retention may have removed entries (null: retention is off, so nothing may be missing at
   * the start); `logged`: a head logged earlier, whose link the chain must hold (unless pruned past it).
   */
  constructor(
    private readonly key: string | Buffer,
    private readonly accountId: string,
    anchor: AuditAnchor | null,
    removableBefore: number | null,
    private readonly logged?: AuditHead,
  ) {
    this.previousMac = anchor?.mac ?? '';
    this.expected = (anchor?.seq ?? 0) + 1;
    if (anchor) this.broken = anchorBreak(key, accountId, anchor, removableBefore);
    if (this.broken !== undefined) return;
    if (logged && anchor && logged.seq < anchor.seq) this.loggedFound = 'pruned';
    if (logged && anchor && logged.seq === anchor.seq) this.checkLogged(anchor.seq, anchor.mac);
  }

  /** The seq of the last entry vouched for so far (the anchor's, or 0, before any). */
  get end(): number {
    return this.expected - 1;
  }

  private checkLogged(seq: number, mac: string): void {
    if (!this.logged || seq !== this.logged.seq) return;
    if (mac === this.logged.mac) this.loggedFound = 'matched';
    else this.broken = { seq, problem: 'edited', detail: `entry ${seq} does not have the MAC the logged head names: the chain was rebuilt since` };
  }

  /** One stored entry's text, in storage order. */
  push(raw: string): void {
    this.entries++;
    let e: Partial<AuditEntry> | undefined;
    try {
      const parsed = JSON.parse(raw) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) e = parsed as Partial<AuditEntry>;
    } catch {
      e = undefined;
    }
    const seq = typeof e?.seq === 'number' && Number.isSafeInteger(e.seq) ? e.seq : undefined;
    if (this.broken !== undefined) return;
    if (this.gap !== undefined) {
      if (seq === this.gap.expected) this.gapSeenLater = true;
      return;
    }
    if (e === undefined || seq === undefined) {
      this.broken = { seq: this.expected, problem: 'edited', detail: `the entry stored as number ${this.expected} is not an entry (its text does not parse)` };
      return;
    }
    if (seq !== this.expected) {
      if (seq < this.expected) {
        this.broken = { seq, problem: 'out_of_order', detail: `entry ${seq} is stored again after entry ${this.expected - 1}` };
      } else {
        this.gap = { expected: this.expected, found: seq };
      }
      return;
    }
    if (typeof e.mac !== 'string' || !HEX_MAC.test(e.mac)) {
      this.broken = { seq, problem: 'unsealed', detail: `entry ${seq} carries no MAC` };
      return;
    }
    const { mac, ...rest } = e as AuditEntry;
    if (e.accountId !== this.accountId || chainMac(this.key, this.previousMac, rest) !== mac) {
      this.broken = { seq, problem: 'edited', detail: `entry ${seq} does not match its MAC: changed, forged, or sealed with another key` };
      return;
    }
    this.checkLogged(seq, mac);
    if (this.broken !== undefined) return;
    this.previousMac = mac;
    this.first ??= seq;
    this.last = seq;
    this.expected = seq + 1;
  }

  /** The verdict, once every entry was pushed. `head`: the store's head (the chain must end there). */
  finish(head: AuditHead | null): AuditVerdict {
    const entries = this.entries;
    if (this.broken === undefined && this.gap !== undefined) {
      const { expected, found } = this.gap;
      this.broken = this.gapSeenLater
        ? { seq: expected, problem: 'out_of_order', detail: `entry ${expected} is stored after entry ${found}` }
        : { seq: expected, problem: 'missing', detail: `entry ${expected} is missing (the next stored is ${found})` };
    }
    if (this.broken !== undefined) return { ok: false, entries, broken: this.broken };
    const end = this.expected - 1;
    // a tail cut off shows against a head: the logged one first (the stored one may be cut too)
    for (const [h, what] of [
      [this.logged, 'the logged head'],
      [head, 'the stored head'],
    ] as const) {
      if (!h) continue;
      if (h.seq > end) return { ok: false, entries, broken: { seq: end + 1, problem: 'missing', detail: `entry ${end + 1} is missing: ${what} names entry ${h.seq}, the chain ends at ${end}` } };
    }
    if (head && head.seq === end && head.mac !== this.previousMac) {
      return { ok: false, entries, broken: { seq: end, problem: 'edited', detail: `entry ${end} does not have the MAC the stored head names` } };
    }
    if (head && head.seq < end) {
      return { ok: false, entries, broken: { seq: head.seq + 1, problem: 'edited', detail: `the stored head names entry ${head.seq}, and entries follow it` } };
    }
    const out: AuditVerdict = { ok: true, entries, first: this.first, last: this.last };
    if (this.loggedFound !== undefined) out.logged = this.loggedFound;
    return out;
  }
}
