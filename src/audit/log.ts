// The audit log of management changes (docs/api.md#audit-log): the sealers the management services
// hand their store writes (the HMAC key closed over: it never reaches the store), the entries of
// changes the store does not hold (session cuts, stream stops), the reads behind /api/audit, the
// verification, and the background work: each moved head logged every audit.headLogSeconds, and
// retention (audit.retentionDays, audit.keepAfterAccountDeleteDays) swept hourly.
import { setImmediate } from 'node:timers/promises';
import {
  auditDiff,
  ChainWalk,
  MASK,
  sealEntry,
  type AuditAction,
  type AuditChange,
  type AuditEntry,
  type AuditHead,
  type AuditResource,
  type AuditSealer,
  type AuditVerdict,
  type DiffRules,
} from '../domain/audit.js';
import type { Account, AuditEnds, AuditQuery, Recording, Store, Webhook } from '../store/store.js';
import { AUDIT_CLOCK_ALLOWANCE_MS } from '../store/audit.js';
import type { TokenRecord } from '../domain/tokens.js';
import type { IssuerRecord } from '../domain/issuers.js';
import type { SecuredStream } from '../domain/secured-streams.js';
import type { Logger } from '../observability/logger.js';
import type { Config } from '../config/schema.js';
import type { Actor } from './actor.js';
import { StoreUnavailable } from '../errors.js';

/** How one kind of record shows in an entry: its id, the diff of a change, and (when not create/update/delete by presence) the action. */
export interface Describer<T> {
  id(record: T): string;
  changes(before: T | null, after: T | null): Record<string, AuditChange>;
  action?(before: T | null, after: T | null): AuditAction;
}

const differ =
  <T extends object>(rules: DiffRules, shown: (r: T) => object = (r) => r) =>
  (before: T | null, after: T | null) =>
    auditDiff(before === null ? null : shown(before), after === null ? null : shown(after), rules);

/** An account's settings; its secret's hash only as MASK (the create sets one). */
export const ACCOUNT: Describer<Account> = {
  id: (a) => a.id,
  changes: differ<Account>({ secret: ['secretHash'], ignore: [] }),
};

/** An account's API secret: created, replaced or deleted; its hash never shown. */
export const API_SECRET: Describer<Account> = {
  id: (a) => a.id,
  changes: differ<Account>({ secret: ['secretHash'], ignore: [] }, (a) => ({ secretHash: a.secretHash })),
  action: (b, a) => (b?.secretHash === undefined ? 'create' : a?.secretHash === undefined ? 'delete' : 'update'),
};

/**
 * A URL as an entry shows it: its user name, password and query values replaced by MASK; what was
 * replaced is answered apart (null: nothing), to be diffed as a secret.
 */
export function shownUrl(url: string): { url: string; secret: string | null } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url, secret: null };
  }
  const hidden: string[] = [];
  if (u.username !== '' || u.password !== '') {
    hidden.push(`${u.username}:${u.password}`);
    u.username = MASK;
    u.password = '';
  }
  if (u.search !== '') {
    hidden.push(u.search);
    const names = [...u.searchParams.keys()];
    u.search = names.map((n) => `${encodeURIComponent(n)}=${MASK}`).join('&');
  }
  return { url: u.toString(), secret: hidden.length > 0 ? hidden.join(' ') : null };
}

/**
 * A publish or subscribe token; its value, its restream targets' stream keys and URL credentials
 * never shown (a change of them shows as `changed`), nor the holds of cut sessions (client
 * addresses; the cut is an entry of its own).
 */
export const TOKEN: Describer<TokenRecord> = {
  id: (t) => String(t.id),
  changes: differ<TokenRecord>({ secret: ['token', 'restream.secrets'], ignore: ['id', 'accountId', 'rev', 'updatedOn', 'holds'] }, (t) => {
    if (t.restream === undefined) return t;
    const secrets: string[] = [];
    const restream = t.restream.map((r) => {
      secrets.push(r.key);
      const shown: Record<string, unknown> = { url: r.url, key: MASK, label: r.label };
      if (r.url !== undefined) {
        const u = shownUrl(r.url);
        shown.url = u.url;
        if (u.secret !== null) secrets.push(u.secret);
      }
      return shown;
    });
    return Object.assign({}, t, { restream, 'restream.secrets': JSON.stringify(secrets) });
  }),
};

/** A webhook; its signing secret and its URL's credentials and query values never shown. */
export const WEBHOOK: Describer<Webhook> = {
  id: (w) => String(w.id),
  changes: differ<Webhook>({ secret: ['secret', 'url.secrets'], ignore: ['id', 'accountId', 'rev', 'updatedOn'] }, (w) => {
    const u = shownUrl(w.url);
    return u.secret === null ? w : Object.assign({}, w, { url: u.url, 'url.secrets': u.secret });
  }),
};

/** A credential issuer; its secret, private key and an EdgeAuth salt never shown. */
export const ISSUER: Describer<IssuerRecord> = {
  id: (i) => String(i.id),
  changes: differ<IssuerRecord>({ secret: ['secret', 'signingKey', 'settings.salt'], ignore: ['id', 'accountId', 'rev', 'updatedOn'] }, (i) => {
    const salt = i.settings !== null && 'salt' in i.settings ? i.settings.salt : undefined;
    if (salt === undefined) return i;
    const { salt: _salt, ...settings } = i.settings as { salt: unknown };
    return Object.assign({}, i, { settings, 'settings.salt': salt });
  }),
};

/** A recording forgotten. */
export const RECORDING: Describer<Recording> = {
  id: (r) => String(r.id),
  changes: differ<Recording>({ secret: [], ignore: ['id', 'accountId'] }),
};

/** The secured-stream entries of one name, removed. */
export const securedStreams = (streamName: string): Describer<SecuredStream[]> => ({
  id: () => streamName,
  changes: (before) => ({ entries: { from: before ?? [] } }),
});

const DAY_MS = 86_400_000;
/** How often retention runs (and every head that moved, wherever it moved, is logged). */
export const AUDIT_SWEEP_MS = 3_600_000;
/** Stored entries read per round trip by verify and export (the event loop is yielded between pages). */
const PAGE = 500;
/** Walks of a chain retention cut short while verify read it, before the last one is answered as found. */
const VERIFY_ATTEMPTS = 3;
/** Times verify reads on to a head that moved while it read, before it answers on the last one read. */
const MAX_READ_ON = 20;

const sameLink = (a: AuditHead | null, b: AuditHead | null): boolean => (a === null ? b === null : b !== null && a.seq === b.seq && a.mac === b.mac);

export type AuditOptions = Pick<Config['audit'], 'retentionDays' | 'keepAfterAccountDeleteDays' | 'headLogSeconds'> & {
  /** audit.enabled (default true): off, a process without a key never refuses a write. */
  enabled?: boolean;
};

/**
 * A management write refused: the store keeps audit chains (another instance or the CLI has the
 * key) and this process has none to seal the write's entry with, so the change would go unrecorded.
 */
export class AuditKeyMissing extends StoreUnavailable {
  constructor() {
    super(
      new Error('audit key missing'),
      'The audit log is on for this store and this instance has no audit key, so the change was not made: set STREAMGATE_AUDIT_KEY (the key the other instances use), or audit.enabled: false (docs/operations.md#audit-log)',
    );
    this.name = 'AuditKeyMissing';
  }
}

/** What /api/audit/verify answers. */
export type AuditReport = AuditVerdict & { head: AuditHead | null; anchor: AuditHead | null };

export class AuditLog {
  /** Accounts whose chain this instance moved since their heads were last logged. */
  private readonly dirty = new Set<string>();
  /** The seq of each account's head as last logged by this instance. */
  private readonly logged = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  /** Without a key: whether the store was found to keep chains (then every write is refused). */
  private chainsFound = false;

  constructor(
    private readonly store: Store,
    /** The HMAC key; null: the log is off (nothing sealed, the routes answer 404). */
    private readonly key: string | null,
    private readonly opts: AuditOptions,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.key !== null;
  }

  /**
   * Without a key (and audit.enabled): looks whether the store keeps chains, and from then on
   * refuses every write (AuditKeyMissing) rather than make changes the chains do not record.
   * Answers whether writes are refused. Run at start, then on the head-log timer until found.
   * `announce`: say so in the log once (the server; the CLI says it only when it refuses a write).
   */
  async checkKey(announce = true): Promise<boolean> {
    if (this.key !== null || this.opts.enabled === false) return false;
    if (!this.chainsFound && (await this.store.hasAuditChains())) {
      this.chainsFound = true;
      if (announce) this.logger.error({}, 'audit: the store keeps audit chains and this instance has no audit key; management writes are refused until STREAMGATE_AUDIT_KEY is set');
    }
    return this.chainsFound;
  }

  /**
   * The sealer of one change by `by` of the account's record of `resource`, for the store write
   * that makes it; undefined when the log is off (the write records nothing).
   */
  sealer<T>(by: Actor, accountId: string, resource: AuditResource, d: Describer<T>): AuditSealer<T> | undefined {
    const key = this.key;
    if (key === null) {
      if (this.chainsFound) throw new AuditKeyMissing();
      return undefined;
    }
    return (before, after, head) => {
      this.dirty.add(accountId);
      const record = (after ?? before) as T;
      return sealEntry(key, head, {
        accountId,
        at: new Date(this.now()).toISOString(),
        actor: by.actor,
        address: by.address,
        requestId: by.requestId,
        action: d.action?.(before, after) ?? (before === null ? 'create' : after === null ? 'delete' : 'update'),
        resource,
        resourceId: d.id(record),
        changes: d.changes(before, after),
      });
    };
  }

  /** Records a change the store does not hold (a session cut, streams stopped) as an entry of its own. */
  async note(by: Actor, accountId: string, resource: AuditResource, resourceId: string, action: AuditAction, changes: Record<string, AuditChange>): Promise<void> {
    const seal = this.sealer<null>(by, accountId, resource, { id: () => resourceId, changes: () => changes, action: () => action });
    if (seal !== undefined) await this.store.appendAudit(accountId, seal);
  }

  /** A page of the account's entries, newest first, and the cursor of the next (null: the last page). */
  async list(accountId: string, q: AuditQuery): Promise<{ entries: AuditEntry[]; next: number | null }> {
    const entries = await this.store.listAudit(accountId, q);
    return { entries, next: entries.length === q.limit ? entries[entries.length - 1].seq : null };
  }

  /** Every entry matching the query, oldest first, handed to `line` one JSON text at a time. */
  async export(accountId: string, q: Omit<AuditQuery, 'limit' | 'ascending' | 'cursor'>, line: (text: string) => Promise<void> | void): Promise<number> {
    let cursor: number | undefined;
    let n = 0;
    for (;;) {
      const page = await this.store.listAudit(accountId, Object.assign({}, q, { limit: PAGE, ascending: true, cursor }));
      for (const e of page) await line(JSON.stringify(e));
      n += page.length;
      if (page.length < PAGE) return n;
      cursor = page[page.length - 1].seq;
      await setImmediate();
    }
  }

  /**
   * The account's chain walked from its anchor: ok, or its first broken link; `logged`: a head logged
   * earlier to hold it to. Changes made while it reads are not breaks: entries appended meanwhile are
   * read on to the head that follows them, and a walk that retention cut short is walked again.
   */
  async verify(accountId: string, logged?: AuditHead): Promise<AuditReport> {
    if (this.key === null) throw new Error('the audit log is off');
    // retention removes entries made before its bound at each hourly sweep; the allowance covers
    // instances whose clocks run ahead of this one's
    const removableBefore = this.opts.retentionDays > 0 ? this.now() - this.opts.retentionDays * DAY_MS + AUDIT_CLOCK_ALLOWANCE_MS : null;
    for (let attempt = 1; ; attempt++) {
      const ends: AuditEnds = await this.store.auditEnds(accountId);
      const walk = new ChainWalk(this.key, accountId, ends.anchor, removableBefore, logged);
      // from the start, anchor or not: an entry slipped in below the anchor is found out of place
      let after = 0;
      let head = ends.head;
      for (let round = 0; ; round++) {
        for (;;) {
          const page = await this.store.auditEntries(accountId, after, PAGE);
          for (const s of page) walk.push(s.text);
          if (page.length > 0) after = page[page.length - 1].pos;
          if (page.length < PAGE) break;
          await setImmediate();
        }
        const now = await this.store.auditEnds(accountId);
        if (!sameLink(now.anchor, ends.anchor) && attempt < VERIFY_ATTEMPTS) break;
        if (sameLink(now.head, head) || round >= MAX_READ_ON) {
          return Object.assign(walk.finish(head), { head, anchor: ends.anchor && { seq: ends.anchor.seq, mac: ends.anchor.mac } });
        }
        // appended while it read: read on from where it stopped, to the new head
        head = now.head;
      }
    }
  }

  /** Starts the head log and the hourly retention sweep (timers that do not keep the process alive). */
  start(): void {
    if (this.timers.length > 0) return;
    if (this.key === null) {
      if (this.opts.enabled === false) return;
      // without a key: looks now, then on the head-log timer, until the store is found to keep chains
      const look = () =>
        void this.checkKey()
          .then((found) => {
            if (found) void this.stop();
          })
          .catch((e: unknown) => this.logger.warn({ err: (e as Error).message }, 'audit: could not look for chains'));
      const t = setInterval(look, this.opts.headLogSeconds * 1000);
      t.unref();
      this.timers = [t];
      look();
      return;
    }
    const heads = setInterval(() => void this.logHeads([...this.dirty]), this.opts.headLogSeconds * 1000);
    const sweep = setInterval(() => void this.sweep(), AUDIT_SWEEP_MS);
    heads.unref();
    sweep.unref();
    this.timers = [heads, sweep];
  }

  /** Stops them; the heads this instance moved since the last log are logged once more. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.dirty.size > 0) await this.logHeads([...this.dirty]);
  }

  /** Logs the head of each account given whose chain moved since this instance last logged it (never the key). */
  async logHeads(accountIds: string[]): Promise<void> {
    for (const accountId of accountIds) {
      this.dirty.delete(accountId);
      try {
        const { head } = await this.store.auditEnds(accountId);
        if (head === null || this.logged.get(accountId) === head.seq) continue;
        this.logged.set(accountId, head.seq);
        this.logger.info({ accountId, seq: head.seq, mac: head.mac }, 'audit head');
      } catch (e) {
        this.dirty.add(accountId);
        this.logger.warn({ accountId, err: (e as Error).message }, 'audit head: not read');
      }
    }
  }

  /**
   * Retention: the chains of accounts that no longer exist go once their newest entry is older than
   * audit.keepAfterAccountDeleteDays; the others lose their entries older than audit.retentionDays
   * (an anchor keeps the rest verifiable). Then every head that moved (here, on another instance or
   * by the CLI) is logged.
   */
  async sweep(): Promise<void> {
    if (this.key === null) return;
    const now = this.now();
    try {
      const chains = await this.store.auditAccounts();
      for (const c of chains) {
        if (!c.exists) {
          const keep = this.opts.keepAfterAccountDeleteDays * DAY_MS;
          if (keep === 0 || c.lastAt === null || c.lastAt < now - keep) {
            await this.store.deleteAccountAudit(c.accountId);
            this.logged.delete(c.accountId);
            this.logger.info({ accountId: c.accountId }, 'audit: the chain of a deleted account removed');
          }
          continue;
        }
        if (this.opts.retentionDays > 0) await this.store.pruneAudit(c.accountId, now - this.opts.retentionDays * DAY_MS);
      }
      await this.logHeads(chains.filter((c) => c.exists).map((c) => c.accountId));
    } catch (e) {
      this.logger.warn({ err: (e as Error).message }, 'audit: retention not run');
    }
  }
}
