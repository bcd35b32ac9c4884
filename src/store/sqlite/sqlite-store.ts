// The embedded store: one SQLite file (WAL) through better-sqlite3. Calls are synchronous inside,
// so every read-modify-write below runs as one transaction with nothing interleaved.
import Database from 'better-sqlite3';
import path from 'node:path';
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { tokenHash } from '../../domain/tokens.js';
import { viewerRuleFlags } from '../../domain/viewer-rules.js';
import { bySecuredName, keptRules, securedAfterDelete, type KeptRules, type SecuredStream } from '../../domain/secured-streams.js';
import type {
  Account,
  AccountGeoCascade,
  AccountPatch,
  BindResult,
  Delivery,
  ListQuery,
  LiveStream,
  NewRecording,
  Recording,
  Session,
  SessionEndReason,
  SessionFilter,
  SessionLimits,
  AdmitResult,
  Store,
  TokenChange,
  UsageDay,
  UsageHour,
  UsageRecord,
  UsageSelector,
  UsageSum,
  UsageTotal,
  Webhook,
} from '../store.js';
import { nameSortKey } from '../sort.js';
import { AccountExists, StoreUnavailable } from '../../errors.js';
import { DELIVERIES_KEPT, ENDED_SESSION_KEEP_S, admissionStep, bindDecision, completedRecording, tokenUnchanged, type CompletedRecording } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import { Checkpointer, WAL_LIMIT_BYTES } from './checkpointer.js';
import { ensurePrivateDir, ensurePrivateFile } from '../data-dir.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_on TEXT NOT NULL,
  secure_viewer INTEGER NOT NULL DEFAULT 0,
  secret_hash TEXT UNIQUE,
  seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  sort_name TEXT NOT NULL,
  added_ms INTEGER NOT NULL,
  rev INTEGER NOT NULL,
  securing INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tokens_securing ON tokens (account_id, securing);
CREATE INDEX IF NOT EXISTS tokens_by_name ON tokens (account_id, kind, sort_name, id);
CREATE INDEX IF NOT EXISTS tokens_by_added ON tokens (account_id, kind, added_ms, id);
CREATE TABLE IF NOT EXISTS bound_addresses (
  token_id INTEGER NOT NULL,
  address TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (token_id, address)
);
CREATE TABLE IF NOT EXISTS account_versions (
  account_id TEXT PRIMARY KEY,
  ver INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  rev INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_by_account ON webhooks (account_id, id);
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_by_webhook ON deliveries (webhook_id, seq);
CREATE TABLE IF NOT EXISTS recordings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  path TEXT NOT NULL,
  status TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recordings_by_stream ON recordings (account_id, stream_name, id);
CREATE TABLE IF NOT EXISTS usage (
  account_id TEXT NOT NULL,
  tracking_id TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  stream_name TEXT NOT NULL,
  day TEXT NOT NULL,
  bytes_out INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL,
  PRIMARY KEY (account_id, tracking_id, day, stream_name, token_id)
);
CREATE INDEX IF NOT EXISTS usage_by_stream ON usage (account_id, stream_name, day);
CREATE INDEX IF NOT EXISTS usage_by_day ON usage (account_id, day);
-- Usage per UTC hour (YYYY-MM-DDTHH), tracking_id '' for the usage without one; a row is read and
-- kept until keep_until (epoch ms), then deleted by the usage writes (pruneHourlyUsage).
CREATE TABLE IF NOT EXISTS usage_hourly (
  account_id TEXT NOT NULL,
  tracking_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  hour TEXT NOT NULL,
  bytes_out INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL,
  keep_until INTEGER NOT NULL,
  PRIMARY KEY (account_id, tracking_id, hour, stream_name)
);
CREATE INDEX IF NOT EXISTS usage_hourly_by_stream ON usage_hourly (account_id, stream_name, hour);
CREATE INDEX IF NOT EXISTS usage_hourly_by_hour ON usage_hourly (account_id, hour);
CREATE INDEX IF NOT EXISTS usage_hourly_expiry ON usage_hourly (keep_until);
CREATE TABLE IF NOT EXISTS usage_reports (
  account_id TEXT NOT NULL,
  report_id TEXT NOT NULL,
  PRIMARY KEY (account_id, report_id)
);
DROP TABLE IF EXISTS sessions;
-- The session registry: live rows (ended = 0) expire at expires_ms = lastSeen + ttl; ended rows are
-- kept until expires_ms = endedOn + keep (late reports, re-asks).
CREATE TABLE IF NOT EXISTS registry_sessions (
  id TEXT PRIMARY KEY,
  caller TEXT NOT NULL,
  caller_sid TEXT NOT NULL,
  account_id TEXT NOT NULL,
  token_id INTEGER,
  stream_name TEXT NOT NULL,
  action TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  ended INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS registry_sessions_caller ON registry_sessions (caller, caller_sid);
CREATE INDEX IF NOT EXISTS registry_sessions_token ON registry_sessions (account_id, token_id, ended);
CREATE INDEX IF NOT EXISTS registry_sessions_stream ON registry_sessions (account_id, stream_name, ended);
CREATE INDEX IF NOT EXISTS registry_sessions_started ON registry_sessions (account_id, ended, started_ms);
CREATE INDEX IF NOT EXISTS registry_sessions_expiry ON registry_sessions (expires_ms);
CREATE TABLE IF NOT EXISTS token_uses (
  account_id TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  uses INTEGER NOT NULL,
  PRIMARY KEY (account_id, token_id)
);
CREATE TABLE IF NOT EXISTS expiry_cuts (
  account_id TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, token_id)
);
CREATE TABLE IF NOT EXISTS secured_streams (
  account_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  is_regex INTEGER NOT NULL,
  token_id INTEGER NOT NULL,
  added_on TEXT NOT NULL,
  rules TEXT NOT NULL,
  PRIMARY KEY (account_id, stream_name, is_regex, token_id)
);
CREATE TABLE IF NOT EXISTS live_streams (
  account_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  feed_id TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (account_id, stream_name)
);
CREATE TABLE IF NOT EXISTS marks (
  account_id TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, name)
);
CREATE INDEX IF NOT EXISTS marks_expiry ON marks (expires_ms);
`;

/** Expired marks removed by each mark write, at most (they are never read once expired). */
const MARKS_PRUNED_PER_WRITE = 100;

interface SecuredRow {
  stream_name: string;
  is_regex: number;
  token_id: number;
  added_on: string;
  rules: string;
}

const securedOf = (r: SecuredRow): SecuredStream =>
  Object.assign({ streamName: r.stream_name, isRegex: r.is_regex === 1, tokenId: r.token_id, addedOn: r.added_on }, JSON.parse(r.rules) as KeptRules);

interface TokenRow {
  id: number;
  rev: number;
  data: string;
}

const fromRow = (r: TokenRow): TokenRecord => copyWith(JSON.parse(r.data) as TokenRecord, { id: r.id, rev: r.rev });
/** The JSON column holds everything but the columns of its own. */
const toData = (t: NewTokenRecord | TokenRecord): string => {
  const { id: _id, rev: _rev, ...rest } = t as TokenRecord;
  return JSON.stringify(rest);
};

interface AccountRow {
  id: string;
  name: string;
  created_on: string;
  secure_viewer: number;
  secret_hash: string | null;
  /** Comma-separated country codes ('' = none); columns added by migrate(). */
  allowed_countries: string;
  denied_countries: string;
  /** '' = never set; columns added by migrate() (user_version 3). */
  default_cluster: string;
  /** JSON {isEnabled, clusters}, '' = never set. */
  geo_cascade: string;
  /** 1 (the default) or 0. */
  ip_rules_on_rtmp: number;
}
const accountFromRow = (r: AccountRow): Account => {
  const a: Account = { id: r.id, name: r.name, createdOn: r.created_on, secureViewer: r.secure_viewer === 1 };
  if (r.secret_hash) a.secretHash = r.secret_hash;
  if (r.allowed_countries) a.allowedCountries = r.allowed_countries.split(',');
  if (r.denied_countries) a.deniedCountries = r.denied_countries.split(',');
  if (r.default_cluster) a.defaultCluster = r.default_cluster;
  if (r.geo_cascade) a.geoCascade = JSON.parse(r.geo_cascade) as AccountGeoCascade;
  if (r.ip_rules_on_rtmp === 0) a.ipRulesOnRtmp = false;
  return a;
};

/** How often another connection's commits are looked for: what they change is seen within this (and well within 1 s). */
const VERSION_POLL_MS = 250;
/** Account versions remembered at most (all are dropped when full). */
const VERSIONS_KEPT = 100_000;
/** Expired hourly usage rows deleted by one usage write at most, and how often writes look for them (ms). */
const HOURLY_PRUNE_BATCH = 500;
const HOURLY_PRUNE_EVERY_MS = 60_000;

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' */
  file: string;
  synchronous?: 'FULL' | 'NORMAL';
  now?: () => number;
  /** How often to look for commits by other connections to the file (default 250 ms). */
  versionPollMs?: number;
  /** The background checkpoint's period (default 1 s; src/store/sqlite/checkpointer.ts). */
  checkpointPeriodMs?: number;
  /** The log length at which the background thread starts it over (default 16 MiB; src/store/sqlite/checkpointer.ts). */
  walRestartBytes?: number;
  /** Told when background checkpoints stop after a failure (the serving connection checkpoints again). */
  onCheckpointFailure?: (message: string) => void;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly inProcess = true;
  private readonly db: Database.Database;
  private readonly now: () => number;
  private closed = false;
  /**
   * One transaction wrapper for every write, made once: better-sqlite3's db.transaction(fn) builds
   * four wrapped functions and their properties per call (~2 KB), which a write per admission paid.
   */
  private readonly inImmediate: (fn: () => unknown) => unknown;
  private readonly inDefault: (fn: () => unknown) => unknown;
  /** Write transactions committed by this connection (the checkpointer reads it). */
  private writes = 0;
  /** WAL checkpoints off the event loop, for a file (not ':memory:'). */
  readonly checkpointer?: Checkpointer;

  constructor(opts: SqliteStoreOptions) {
    if (opts.file !== ':memory:') {
      // a directory Streamgate makes is 0700, the file 0600 (its -wal and -shm take its mode): src/store/data-dir.ts
      ensurePrivateDir(path.dirname(path.resolve(opts.file)));
      ensurePrivateFile(path.resolve(opts.file));
    }
    this.db = new Database(opts.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
    this.db.pragma('busy_timeout = 5000');
    // what the log file keeps when the log starts over; the checkpointer starts it over well before (docs/operations.md#sqlite-checkpoints)
    this.db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    this.db.exec(SCHEMA);
    this.migrate();
    const run = this.db.transaction((fn: () => unknown) => fn());
    this.inImmediate = run.immediate;
    this.inDefault = run;
    this.now = opts.now ?? Date.now;
    this.seenDataVersion = this.dataVersion();
    this.poll = setInterval(() => this.checkForeignWrites(), opts.versionPollMs ?? VERSION_POLL_MS);
    this.poll.unref();
    if (opts.file !== ':memory:') {
      this.checkpointer = new Checkpointer(
        {
          file: path.resolve(opts.file),
          writes: () => this.writes,
          setAutocheckpoint: (pages) => void this.db.pragma(`wal_autocheckpoint = ${pages}`),
          onFailure: (message) => opts.onCheckpointFailure?.(message),
        },
        { periodMs: opts.checkpointPeriodMs, restartAtBytes: opts.walRestartBytes },
      );
    }
  }

  // Account versions are answered from memory: every decision reads one, and the SELECT costs
  // several microseconds. This connection's own writes drop the account's entry in the same code
  // that moves the version (bumpVersion, inside the write's transaction; a rolled-back write only
  // makes the next read go to the file again). Another connection's commits (the CLI, a second
  // instance on the same file) are seen through `PRAGMA data_version`, which changes when any
  // other connection commits: polled every VERSION_POLL_MS, and a change drops every entry.
  private readonly versions = new Map<string, number>();
  private seenDataVersion: number;
  private readonly poll: NodeJS.Timeout;

  private dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  /** Drops the remembered versions when another connection has committed since the last look. */
  private checkForeignWrites(): void {
    if (this.closed) return;
    let v: number;
    try {
      v = this.dataVersion();
    } catch {
      this.versions.clear(); // the file cannot be read now: remember nothing
      return;
    }
    if (v !== this.seenDataVersion) {
      this.seenDataVersion = v;
      this.versions.clear();
    }
  }

  /**
   * Brings a file written by an earlier build up to this schema. `user_version` 1: accounts carry
   * viewer country defaults, and `tokens.securing` holds viewer-rule flags (1 secures viewing, 2
   * restricts viewer countries; see domain/viewer-rules.ts) instead of a 0/1 flag.
   */
  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version >= 3) return;
    this.db.transaction(() => {
      const columns = new Set((this.db.prepare('PRAGMA table_info(accounts)').all() as Array<{ name: string }>).map((c) => c.name));
      const add = (column: string, type: string) => {
        if (!columns.has(column)) this.db.exec(`ALTER TABLE accounts ADD COLUMN ${column} ${type}`);
      };
      if (version < 1) {
        add('allowed_countries', "TEXT NOT NULL DEFAULT ''");
        add('denied_countries', "TEXT NOT NULL DEFAULT ''");
      }
      if (version < 2) {
        // `user_version` 2: the flags no longer depend on isActive (a disabled publish token keeps
        // securing its streams and restricting their viewers' countries; domain/viewer-rules.ts).
        this.db.exec(`UPDATE tokens SET securing =
            (CASE WHEN json_extract(data, '$.subscribeRequiresAuth') THEN 1 ELSE 0 END)
          | (CASE WHEN json_array_length(data, '$.allowedCountries') > 0 OR json_array_length(data, '$.deniedCountries') > 0 THEN 2 ELSE 0 END)
          WHERE kind = 'publish'`);
      }
      // `user_version` 3: accounts carry their default cluster, geo cascade setting and whether
      // address rules apply on RTMP (docs/api.md#clusters, docs/api.md#rtmp); existing accounts
      // get none set and address rules on, as before.
      add('default_cluster', "TEXT NOT NULL DEFAULT ''");
      add('geo_cascade', "TEXT NOT NULL DEFAULT ''");
      add('ip_rules_on_rtmp', 'INTEGER NOT NULL DEFAULT 1');
      this.db.pragma('user_version = 3');
    })();
  }

  private readonly statements = new Map<string, Database.Statement>();
  private get versionStmt(): Database.Statement {
    this._versionStmt ??= this.db.prepare('SELECT ver FROM account_versions WHERE account_id = ?').pluck();
    return this._versionStmt;
  }
  private _versionStmt?: Database.Statement;

  /** Prepared once per SQL text: preparing is far dearer than running (seen in a CPU profile). */
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  /**
   * Every write runs here: one immediate transaction (nested ones become savepoints). A file still
   * locked by another writer after busy_timeout is the store not answering: StoreUnavailable.
   */
  private tx<T>(fn: () => T): T {
    try {
      const out = this.inImmediate(fn) as T;
      this.writes++;
      return out;
    } catch (e) {
      throw (e as { code?: unknown })?.code === 'SQLITE_BUSY' ? new StoreUnavailable(e) : e;
    }
  }

  /** Runs `fn` in one transaction (bulk loads: benchmarks, imports). The store's own writes nest. */
  batch<T>(fn: () => T): T {
    return this.inDefault(fn) as T;
  }

  async ping(): Promise<void> {
    this.stmt('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poll);
    this.versions.clear();
    await this.checkpointer?.close();
    this.db.close();
  }

  // ---- accounts ----

  async createAccount(a: Account): Promise<Account> {
    try {
      this.tx(() => this.insertAccount(a));
    } catch (e) {
      if ((e as { code?: unknown })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new AccountExists(a.id);
      throw e;
    }
    return { ...a };
  }

  private insertAccount(a: Account): void {
    this.stmt(
      `INSERT INTO accounts (id, name, created_on, secure_viewer, secret_hash, allowed_countries, denied_countries, default_cluster, geo_cascade, ip_rules_on_rtmp, seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM accounts))`,
    )
      .run(
        a.id,
        a.name,
        a.createdOn,
        a.secureViewer ? 1 : 0,
        a.secretHash ?? null,
        (a.allowedCountries ?? []).join(','),
        (a.deniedCountries ?? []).join(','),
        a.defaultCluster ?? '',
        a.geoCascade ? JSON.stringify(a.geoCascade) : '',
        a.ipRulesOnRtmp === false ? 0 : 1,
      );
    this.bumpVersion(a.id); // a cached "no such account" must not outlive its creation
  }

  async createFirstAccount(a: Account): Promise<boolean> {
    return this.tx(() => {
      const n = this.stmt('SELECT COUNT(*) AS n FROM accounts').get() as { n: number };
      if (n.n > 0) return false;
      this.insertAccount(a);
      return true;
    });
  }

  async getAccount(id: string): Promise<Account | null> {
    const r = this.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return r ? accountFromRow(r) : null;
  }

  async listAccounts(): Promise<Account[]> {
    return (this.stmt('SELECT * FROM accounts ORDER BY seq').all() as AccountRow[]).map(accountFromRow);
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | null> {
    return this.tx(() => {
      const r = this.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
      if (!r) return null;
      const next: AccountRow = copyWith(r, {
        secure_viewer: patch.secureViewer === undefined ? r.secure_viewer : patch.secureViewer ? 1 : 0,
        name: patch.name ?? r.name,
        allowed_countries: patch.allowedCountries?.join(',') ?? r.allowed_countries,
        denied_countries: patch.deniedCountries?.join(',') ?? r.denied_countries,
        default_cluster: patch.defaultCluster ?? r.default_cluster,
        geo_cascade: patch.geoCascade ? JSON.stringify(patch.geoCascade) : r.geo_cascade,
        ip_rules_on_rtmp: patch.ipRulesOnRtmp === undefined ? r.ip_rules_on_rtmp : patch.ipRulesOnRtmp ? 1 : 0,
      });
      this.stmt(
        'UPDATE accounts SET secure_viewer = ?, name = ?, allowed_countries = ?, denied_countries = ?, default_cluster = ?, geo_cascade = ?, ip_rules_on_rtmp = ? WHERE id = ?',
      ).run(
        next.secure_viewer,
        next.name,
        next.allowed_countries,
        next.denied_countries,
        next.default_cluster,
        next.geo_cascade,
        next.ip_rules_on_rtmp,
        id,
      );
      this.bumpVersion(id);
      return accountFromRow(next);
    });
  }

  async setAccountSecret(id: string, secretHash: string | null, expected?: string): Promise<boolean> {
    if (expected !== undefined) {
      return this.tx(() => this.stmt('UPDATE accounts SET secret_hash = ? WHERE id = ? AND secret_hash = ?').run(secretHash, id, expected).changes === 1);
    }
    return this.tx(() => this.stmt('UPDATE accounts SET secret_hash = ? WHERE id = ?').run(secretHash, id).changes === 1);
  }

  async findAccountBySecretHash(secretHash: string): Promise<Account | null> {
    const r = this.stmt('SELECT * FROM accounts WHERE secret_hash = ?').get(secretHash) as AccountRow | undefined;
    return r ? accountFromRow(r) : null;
  }

  // ---- tokens ----

  /** Every write of an account's tokens or settings moves its version (inside the write's transaction). */
  private bumpVersion(accountId: string): void {
    this.versions.delete(accountId); // read again from the file after this write (or its rollback)
    this.stmt('INSERT INTO account_versions (account_id, ver) VALUES (?, 1) ON CONFLICT(account_id) DO UPDATE SET ver = ver + 1')
      .run(accountId);
  }

  async createToken(t: NewTokenRecord): Promise<TokenRecord> {
    return this.tx(() => {
      const info = this.stmt(
        `INSERT INTO tokens (account_id, kind, token_hash, sort_name, added_ms, rev, securing, data)
         VALUES (?, ?, ?, ?, ?, 1, ?, ?)`,
      )
        .run(t.accountId, t.kind, tokenHash(t.token), nameSortKey(t.label), Date.parse(t.addedOn), viewerRuleFlags(t), toData(t));
      this.bumpVersion(t.accountId);
      return copyWith(t, { id: Number(info.lastInsertRowid), rev: 1 });
    });
  }

  private readToken(accountId: string, kind: TokenKind, id: number): TokenRecord | null {
    const r = this.stmt('SELECT id, rev, data FROM tokens WHERE id = ? AND account_id = ? AND kind = ?')
      .get(id, accountId, kind) as TokenRow | undefined;
    return r ? fromRow(r) : null;
  }

  async getToken(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord | null> {
    return this.readToken(accountId, kind, id);
  }

  async listTokens(accountId: string, kind: TokenKind, q: ListQuery): Promise<TokenRecord[]> {
    const dir = q.descending ? 'DESC' : 'ASC';
    const order = q.sortBy === 'Name' ? `sort_name ${dir}, id ${dir}` : `added_ms ${dir}, id ${dir}`;
    const rows = this.stmt(`SELECT id, rev, data FROM tokens WHERE account_id = ? AND kind = ? ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(accountId, kind, q.itemsOnPage, (q.page - 1) * q.itemsOnPage) as TokenRow[];
    return rows.map(fromRow);
  }

  async updateToken(accountId: string, kind: TokenKind, id: number, change: TokenChange): Promise<TokenRecord | null> {
    return this.tx(() => {
      const current = this.readToken(accountId, kind, id);
      if (!current) return null;
      const { next, clearBound } = change(current);
      const rev = current.rev + 1;
      this.stmt('UPDATE tokens SET token_hash = ?, sort_name = ?, rev = ?, securing = ?, data = ? WHERE id = ?')
        .run(tokenHash(next.token), nameSortKey(next.label), rev, viewerRuleFlags(next), toData(next), id);
      this.bumpVersion(accountId);
      if (clearBound) this.stmt('DELETE FROM bound_addresses WHERE token_id = ?').run(id);
      return copyWith(next, { id, rev });
    });
  }

  async deleteToken(accountId: string, kind: TokenKind, id: number): Promise<boolean> {
    return this.tx(() => {
      const current = this.readToken(accountId, kind, id);
      if (!current) return false;
      this.stmt('DELETE FROM tokens WHERE id = ?').run(id);
      this.stmt('DELETE FROM bound_addresses WHERE token_id = ?').run(id);
      const keep = this.stmt('INSERT OR IGNORE INTO secured_streams (account_id, stream_name, is_regex, token_id, added_on, rules) VALUES (?, ?, ?, ?, ?, ?)');
      for (const s of securedAfterDelete(current, new Date(this.now()).toISOString())) {
        keep.run(accountId, s.streamName, s.isRegex ? 1 : 0, s.tokenId, s.addedOn, JSON.stringify(keptRules(s)));
      }
      this.bumpVersion(accountId);
      return true;
    });
  }

  async securedStreams(accountId: string): Promise<SecuredStream[]> {
    const rows = this.stmt('SELECT stream_name, is_regex, token_id, added_on, rules FROM secured_streams WHERE account_id = ?').all(accountId) as SecuredRow[];
    return rows.map(securedOf).sort(bySecuredName);
  }

  async removeSecuredStream(accountId: string, streamName: string): Promise<SecuredStream[]> {
    return this.tx(() => {
      const rows = this.stmt('SELECT stream_name, is_regex, token_id, added_on, rules FROM secured_streams WHERE account_id = ? AND stream_name = ?')
        .all(accountId, streamName) as SecuredRow[];
      if (rows.length === 0) return [];
      this.stmt('DELETE FROM secured_streams WHERE account_id = ? AND stream_name = ?').run(accountId, streamName);
      this.bumpVersion(accountId);
      return rows.map(securedOf).sort(bySecuredName);
    });
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | null> {
    const r = this.stmt('SELECT id, rev, data FROM tokens WHERE token_hash = ?').get(hash) as TokenRow | undefined;
    return r ? fromRow(r) : null;
  }

  async findTokenById(id: number): Promise<TokenRecord | null> {
    const r = this.stmt('SELECT id, rev, data FROM tokens WHERE id = ?').get(id) as TokenRow | undefined;
    return r ? fromRow(r) : null;
  }

  async securingTokens(accountId: string): Promise<TokenRecord[]> {
    // `securing` holds viewer-rule flags (migrate()): bit 1 is "secures viewing"
    const rows = this.stmt('SELECT id, rev, data FROM tokens WHERE account_id = ? AND securing IN (1, 3) ORDER BY id')
      .all(accountId) as TokenRow[];
    return rows.map(fromRow);
  }

  async viewerRuleTokens(accountId: string): Promise<TokenRecord[]> {
    const rows = this.stmt('SELECT id, rev, data FROM tokens WHERE account_id = ? AND securing > 0 ORDER BY id').all(accountId) as TokenRow[];
    return rows.map(fromRow);
  }

  /** Whether the account has viewer-rule tokens: only then does a stream's publishing token matter to a decision. */
  private hasViewerRules(accountId: string): boolean {
    return this.stmt('SELECT 1 FROM tokens WHERE account_id = ? AND securing > 0 LIMIT 1').get(accountId) !== undefined;
  }

  accountVersionKnown(accountId: string): number | undefined {
    return this.versions.get(accountId);
  }

  async accountVersion(accountId: string): Promise<number> {
    // on every decision: from memory, else one plucked column (about 40% cheaper than a row object)
    const known = this.versions.get(accountId);
    if (known !== undefined) return known;
    const ver = (this.versionStmt.get(accountId) as number | undefined) ?? 0;
    if (this.versions.size >= VERSIONS_KEPT) this.versions.clear();
    this.versions.set(accountId, ver);
    return ver;
  }

  // ---- webhooks ----

  private readWebhook(accountId: string, id: number): Webhook | null {
    const r = this.stmt('SELECT id, rev, data FROM webhooks WHERE id = ? AND account_id = ?').get(id, accountId) as TokenRow | undefined;
    return r ? copyWith(JSON.parse(r.data) as Webhook, { id: r.id, rev: r.rev }) : null;
  }

  async createWebhook(w: Omit<Webhook, 'id' | 'rev'>): Promise<Webhook> {
    const info = this.tx(() => this.stmt('INSERT INTO webhooks (account_id, rev, data) VALUES (?, 1, ?)').run(w.accountId, JSON.stringify(w)));
    return copyWith(w, { id: Number(info.lastInsertRowid), rev: 1 });
  }

  async getWebhook(accountId: string, id: number): Promise<Webhook | null> {
    return this.readWebhook(accountId, id);
  }

  async updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook): Promise<Webhook | null> {
    return this.tx(() => {
      const cur = this.readWebhook(accountId, id);
      if (!cur) return null;
      const { id: _i, rev: _r, ...next } = change(cur);
      const rev = cur.rev + 1;
      this.stmt('UPDATE webhooks SET rev = ?, data = ? WHERE id = ?').run(rev, JSON.stringify(next), id);
      return copyWith(next, { id, rev });
    });
  }

  async deleteWebhook(accountId: string, id: number): Promise<boolean> {
    return this.tx(() => {
      const n = this.stmt('DELETE FROM webhooks WHERE id = ? AND account_id = ?').run(id, accountId).changes;
      if (n === 1) this.stmt('DELETE FROM deliveries WHERE webhook_id = ?').run(id);
      return n === 1;
    });
  }

  async listWebhooks(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Webhook[]> {
    const rows = (
      q.descending
        ? this.stmt('SELECT id, rev, data FROM webhooks WHERE account_id = ? AND id <= ? ORDER BY id DESC LIMIT ?')
            .all(accountId, q.startingId ?? Number.MAX_SAFE_INTEGER, q.itemCount)
        : this.stmt('SELECT id, rev, data FROM webhooks WHERE account_id = ? AND id >= ? ORDER BY id ASC LIMIT ?')
            .all(accountId, q.startingId ?? 0, q.itemCount)
    ) as TokenRow[];
    return rows.map((r) => copyWith(JSON.parse(r.data) as Webhook, { id: r.id, rev: r.rev }));
  }

  async addDelivery(accountId: string, webhookId: number, d: Delivery): Promise<void> {
    this.tx(() => {
      if (!this.readWebhook(accountId, webhookId)) return;
      this.stmt('INSERT INTO deliveries (webhook_id, data) VALUES (?, ?)').run(webhookId, JSON.stringify(d));
      this.stmt('DELETE FROM deliveries WHERE webhook_id = ? AND seq NOT IN (SELECT seq FROM deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?)').run(
        webhookId,
        webhookId,
        DELIVERIES_KEPT,
      );
    });
  }

  async listDeliveries(accountId: string, webhookId: number): Promise<Delivery[]> {
    if (!this.readWebhook(accountId, webhookId)) return [];
    const rows = this.stmt('SELECT data FROM deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?').all(webhookId, DELIVERIES_KEPT) as Array<{ data: string }>;
    return rows.map((r) => JSON.parse(r.data) as Delivery);
  }

  // ---- recordings ----

  private insertRecording(r: Omit<Recording, 'id'>): Recording {
    const info = this.stmt('INSERT INTO recordings (account_id, stream_name, path, status, data) VALUES (?, ?, ?, ?, ?)')
      .run(r.accountId, r.streamName, r.path ?? '', r.status, JSON.stringify(r));
    return copyWith(r, { id: Number(info.lastInsertRowid) });
  }

  async startRecording(r: NewRecording): Promise<Recording> {
    return this.tx(() => this.insertRecording(copyWith(r, { status: 'recording' })));
  }

  async completeRecording(r: CompletedRecording): Promise<Recording> {
    return this.tx(() => {
      const open = this.stmt(
        "SELECT id, data FROM recordings WHERE account_id = ? AND stream_name = ? AND path = ? AND status = 'recording' ORDER BY id DESC LIMIT 1",
      ).get(r.accountId, r.streamName, r.path ?? '') as { id: number; data: string } | undefined;
      const next = completedRecording(open ? copyWith(JSON.parse(open.data) as Recording, { id: open.id }) : null, r);
      if (next.id === undefined) return this.insertRecording(next);
      this.stmt("UPDATE recordings SET status = 'completed', data = ? WHERE id = ?").run(JSON.stringify(next), next.id);
      return next as Recording;
    });
  }

  async listRecordings(accountId: string, streamName?: string): Promise<Recording[]> {
    const rows = (
      streamName === undefined
        ? this.stmt('SELECT id, data FROM recordings WHERE account_id = ? ORDER BY id DESC').all(accountId)
        : this.stmt('SELECT id, data FROM recordings WHERE account_id = ? AND stream_name = ? ORDER BY id DESC').all(accountId, streamName)
    ) as Array<{ id: number; data: string }>;
    return rows.map((r) => copyWith(JSON.parse(r.data) as Recording, { id: r.id }));
  }

  async deleteRecording(accountId: string, id: number): Promise<Recording | null> {
    return this.tx(() => {
      const r = this.stmt('SELECT id, data FROM recordings WHERE id = ? AND account_id = ?').get(id, accountId) as { id: number; data: string } | undefined;
      if (!r) return null;
      this.stmt('DELETE FROM recordings WHERE id = ?').run(id);
      return copyWith(JSON.parse(r.data) as Recording, { id: r.id });
    });
  }

  // ---- usage ----

  async addUsage(u: UsageRecord, reportId?: string): Promise<boolean> {
    return this.tx(() => {
      if (reportId !== undefined) {
        const fresh = this.stmt('INSERT OR IGNORE INTO usage_reports (account_id, report_id) VALUES (?, ?)').run(u.accountId, reportId).changes;
        if (fresh === 0) return false;
      }
      this.stmt(
        `INSERT INTO usage (account_id, tracking_id, token_id, stream_name, day, bytes_out, bytes_in) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, tracking_id, day, stream_name, token_id)
         DO UPDATE SET bytes_out = bytes_out + excluded.bytes_out, bytes_in = bytes_in + excluded.bytes_in`,
      )
        .run(u.accountId, u.trackingId ?? '', u.tokenId ?? 0, u.streamName, u.day, u.bytesOut, u.bytesIn);
      const now = this.now();
      if (u.hourly && u.hourly.keepUntilMs > now) {
        this.stmt(
          `INSERT INTO usage_hourly (account_id, tracking_id, stream_name, hour, bytes_out, bytes_in, keep_until) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (account_id, tracking_id, hour, stream_name)
           DO UPDATE SET bytes_out = bytes_out + excluded.bytes_out, bytes_in = bytes_in + excluded.bytes_in, keep_until = excluded.keep_until`,
        ).run(u.accountId, u.trackingId ?? '', u.streamName, u.hourly.hour, u.bytesOut, u.bytesIn, u.hourly.keepUntilMs);
      }
      this.pruneHourlyUsage(now);
      return true;
    });
  }

  /** When the usage writes next delete hourly rows past their keep_until (epoch ms). */
  private hourlyPruneAt = 0;

  /**
   * Deletes up to HOURLY_PRUNE_BATCH hourly rows whose keep_until has passed, at most once per
   * HOURLY_PRUNE_EVERY_MS unless a full batch shows more are waiting: each usage write pays a
   * bounded share, and the table holds only the retention's hours (docs/operations.md#hourly-usage-retention).
   */
  private pruneHourlyUsage(now: number): void {
    if (now < this.hourlyPruneAt) return;
    const deleted = this.stmt('DELETE FROM usage_hourly WHERE rowid IN (SELECT rowid FROM usage_hourly WHERE keep_until <= ? LIMIT ?)').run(now, HOURLY_PRUNE_BATCH).changes;
    this.hourlyPruneAt = deleted < HOURLY_PRUNE_BATCH ? now + HOURLY_PRUNE_EVERY_MS : now;
  }

  async usageByTracking(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<UsageTotal[]> {
    const ids = trackingIds.filter((t) => t !== '');
    if (ids.length === 0) return [];
    const rows = this.stmt(
      `SELECT tracking_id AS trackingId, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
       FROM usage WHERE account_id = ? AND tracking_id IN (${ids.map(() => '?').join(',')}) AND day >= ? AND day < ?
       GROUP BY tracking_id, stream_name ORDER BY tracking_id, stream_name`,
    )
      .all(accountId, ...ids, startDay, stopDay) as UsageTotal[];
    return rows;
  }

  async usageDaily(accountId: string, selector: UsageSelector, startDay: string, stopDay: string): Promise<UsageDay[]> {
    return this.usageRows('usage', 'day', accountId, selector, startDay, stopDay) as UsageDay[];
  }

  async usageHourly(accountId: string, selector: UsageSelector, startHour: string, stopHour: string): Promise<UsageHour[]> {
    return this.usageRows('usage_hourly', 'hour', accountId, selector, startHour, stopHour) as UsageHour[];
  }

  /** usageDaily / usageHourly: the same reads of the day table and of the hour table (whose expired rows are left out). */
  private usageRows(table: 'usage' | 'usage_hourly', period: 'day' | 'hour', accountId: string, selector: UsageSelector, start: string, stop: string): unknown[] {
    const byTracking = 'trackingIds' in selector;
    // '' is the untracked bucket's tracking id, and no stream's name
    const names = [...new Set(byTracking ? selector.trackingIds : 'streamNames' in selector ? selector.streamNames : selector.streamTracking)].filter((n) => n !== '');
    if (names.length === 0) return [];
    const marks = names.map(() => '?').join(',');
    const hourly = table === 'usage_hourly';
    const live = hourly ? ' AND keep_until > ?' : '';
    const args = [accountId, ...names, start, stop, ...(hourly ? [this.now()] : [])];
    const byStream = hourly ? 'usage_hourly_by_stream' : 'usage_by_stream';
    const sql = byTracking
      ? `SELECT tracking_id AS trackingId, ${period}, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
         FROM ${table} WHERE account_id = ? AND tracking_id IN (${marks}) AND ${period} >= ? AND ${period} < ?${live}
         GROUP BY tracking_id, ${period}, stream_name`
      : 'streamNames' in selector
        ? `SELECT ${period}, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM ${table} INDEXED BY ${byStream} WHERE account_id = ? AND stream_name IN (${marks}) AND ${period} >= ? AND ${period} < ?${live}
           GROUP BY stream_name, ${period}`
        : `SELECT tracking_id AS trackingId, ${period}, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM ${table} INDEXED BY ${byStream} WHERE account_id = ? AND stream_name IN (${marks}) AND ${period} >= ? AND ${period} < ?${live}
           GROUP BY stream_name, ${period}, tracking_id
           HAVING tracking_id <> '' OR SUM(bytes_out) <> 0 OR SUM(bytes_in) <> 0`;
    return this.stmt(sql).all(...args);
  }

  async usageAccount(accountId: string, unit: 'day' | 'hour', start: string, stop: string): Promise<UsageSum[]> {
    const sql =
      unit === 'day'
        ? `SELECT day AS period, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM usage INDEXED BY usage_by_day WHERE account_id = ? AND day >= ? AND day < ? GROUP BY day`
        : `SELECT hour AS period, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM usage_hourly INDEXED BY usage_hourly_by_hour WHERE account_id = ? AND hour >= ? AND hour < ? AND keep_until > ? GROUP BY hour`;
    return this.stmt(sql).all(accountId, start, stop, ...(unit === 'hour' ? [this.now()] : [])) as UsageSum[];
  }

  // ---- metadata ----

  async getMeta(key: string): Promise<string | null> {
    const r = this.stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value ?? null;
  }

  async setMeta(key: string, value: string, onlyIfAbsent = false): Promise<boolean> {
    const sql = onlyIfAbsent
      ? 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING'
      : 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value';
    return this.tx(() => this.stmt(sql).run(key, value).changes === 1);
  }

  // ---- bind on usage ----

  async boundAddresses(_accountId: string, tokenId: number): Promise<string[]> {
    return (
      this.stmt('SELECT address FROM bound_addresses WHERE token_id = ? ORDER BY seq').all(tokenId) as Array<{
        address: string;
      }>
    ).map((r) => r.address);
  }

  async bindAddress(token: TokenRecord, address: string): Promise<BindResult> {
    const tokenId = token.id;
    const limit = token.bindIpsOnUsage ?? 0;
    return this.tx((): BindResult => {
      const cur = this.stmt('SELECT rev FROM tokens WHERE id = ?').get(tokenId) as { rev: number } | undefined;
      if (!cur || cur.rev !== token.rev) return 'stale';
      let n = -1; // counted only when the address is not bound yet (as bindDecision asks)
      const count = () => {
        if (n < 0) n = (this.stmt('SELECT COUNT(*) AS n FROM bound_addresses WHERE token_id = ?').get(tokenId) as { n: number }).n;
        return n;
      };
      const bound = {
        has: (a: string) => this.stmt('SELECT 1 FROM bound_addresses WHERE token_id = ? AND address = ?').get(tokenId, a) !== undefined,
        get size() {
          return count();
        },
      };
      const step = bindDecision(bound, address, limit);
      if (step !== 'bound') return step;
      this.stmt('INSERT INTO bound_addresses (token_id, address, seq) VALUES (?, ?, ?)').run(tokenId, address, bound.size + 1);
      return 'bound';
    });
  }

  // ---- live streams ----

  async startLiveStream(s: LiveStream, ttlSeconds: number): Promise<void> {
    this.tx(() => {
      const now = this.now();
      this.stmt('DELETE FROM live_streams WHERE expires_ms <= ?').run(now);
      const was = this.stmt('SELECT token_id FROM live_streams WHERE account_id = ? AND stream_name = ?').pluck().get(s.accountId, s.streamName) as
        | number
        | undefined;
      this.stmt(
        `INSERT OR REPLACE INTO live_streams (account_id, stream_name, token_id, feed_id, expires_ms, data)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
        .run(s.accountId, s.streamName, s.tokenId, s.feedId, now + ttlSeconds * 1000, JSON.stringify(s));
      // viewers' country lists follow the publishing token (see Store.startLiveStream)
      if (was !== s.tokenId && this.hasViewerRules(s.accountId)) this.bumpVersion(s.accountId);
    });
  }

  async endLiveStream(accountId: string, streamName: string, feedId?: string): Promise<LiveStream | null> {
    return this.tx(() => {
      const r = this.stmt('SELECT data, feed_id FROM live_streams WHERE account_id = ? AND stream_name = ?')
        .get(accountId, streamName) as { data: string; feed_id: string } | undefined;
      if (!r || (feedId !== undefined && r.feed_id !== feedId)) return null;
      this.stmt('DELETE FROM live_streams WHERE account_id = ? AND stream_name = ?').run(accountId, streamName);
      if (this.hasViewerRules(accountId)) this.bumpVersion(accountId);
      return JSON.parse(r.data) as LiveStream;
    });
  }

  async startSession(s: Session, ttlSeconds: number): Promise<void> {
    await this.admitSession(s, ttlSeconds, {});
  }

  async admitSession(s: Session, ttlSeconds: number, limits: SessionLimits): Promise<AdmitResult> {
    return this.tx(() => {
      if (limits.tokenRev !== undefined) {
        const rev = this.stmt('SELECT rev FROM tokens WHERE id = ? AND account_id = ?').pluck().get(s.tokenId ?? 0, s.accountId) as number | undefined;
        if (!tokenUnchanged(limits, rev ?? null)) return { admitted: false, reason: 'token_changed' };
      }
      const now = this.now();
      this.stmt('DELETE FROM registry_sessions WHERE expires_ms <= ?').run(now);
      const uses = (this.stmt('SELECT uses FROM token_uses WHERE account_id = ? AND token_id = ?').pluck().get(s.accountId, s.tokenId ?? 0) as number | undefined) ?? 0;
      // the same connection's earlier record is not counted: an admission replaces it, a refusal keeps it
      const live =
        s.tokenId === undefined
          ? 0
          : (this.stmt('SELECT COUNT(*) FROM registry_sessions WHERE account_id = ? AND token_id = ? AND ended = 0 AND NOT (caller = ? AND caller_sid = ?)')
              .pluck()
              .get(s.accountId, s.tokenId, s.caller, s.sessionId) as number);
      const publishers =
        s.action === 'publish'
          ? (this.stmt("SELECT data FROM registry_sessions WHERE account_id = ? AND stream_name = ? AND ended = 0 AND action = 'publish' AND NOT (caller = ? AND caller_sid = ?)")
              .pluck()
              .all(s.accountId, s.streamName, s.caller, s.sessionId) as string[]).map((d) => JSON.parse(d) as Session)
          : [];
      const step = admissionStep({ uses, liveOfToken: live, publishers: publishers.map((p) => p.tokenId) }, s, limits);
      if (!step.admit) return { admitted: false, reason: step.reason };
      // the same connection registered again: its earlier record goes (as in the Redis script)
      this.stmt('DELETE FROM registry_sessions WHERE caller = ? AND caller_sid = ?').run(s.caller, s.sessionId);
      const replaced: Session[] = [];
      if (step.replace) {
        for (const p of publishers) {
          const ended = this.endSessionNow(p.caller, p.sessionId, { reason: 'replaced', at: s.lastSeenOn, keepSeconds: ENDED_SESSION_KEEP_S });
          if (ended) replaced.push(ended);
        }
      }
      this.stmt(
        `INSERT INTO registry_sessions (id, caller, caller_sid, account_id, token_id, stream_name, action, started_ms, expires_ms, ended, data)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
      ).run(s.id, s.caller, s.sessionId, s.accountId, s.tokenId ?? null, s.streamName, s.action, Date.parse(s.startedOn), Date.parse(s.lastSeenOn) + ttlSeconds * 1000, JSON.stringify(s));
      if (s.tokenId !== undefined) {
        this.stmt('INSERT INTO token_uses (account_id, token_id, uses) VALUES (?, ?, 1) ON CONFLICT (account_id, token_id) DO UPDATE SET uses = uses + 1').run(s.accountId, s.tokenId);
      }
      return { admitted: true, replaced };
    });
  }

  async getSession(caller: string, sessionId: string): Promise<Session | null> {
    const d = this.stmt('SELECT data FROM registry_sessions WHERE caller = ? AND caller_sid = ? AND expires_ms > ?').pluck().get(caller, sessionId, this.now()) as string | undefined;
    return d ? (JSON.parse(d) as Session) : null;
  }

  async getSessionById(accountId: string, id: string): Promise<Session | null> {
    const d = this.stmt('SELECT data FROM registry_sessions WHERE id = ? AND account_id = ? AND expires_ms > ?').pluck().get(id, accountId, this.now()) as string | undefined;
    return d ? (JSON.parse(d) as Session) : null;
  }

  async touchSession(caller: string, sessionId: string, ttlSeconds: number, at: string): Promise<Session | null> {
    return this.tx(() => {
      const r = this.stmt('SELECT data, ended FROM registry_sessions WHERE caller = ? AND caller_sid = ? AND expires_ms > ?').get(caller, sessionId, this.now()) as
        | { data: string; ended: number }
        | undefined;
      if (!r) return null;
      const s = JSON.parse(r.data) as Session;
      if (r.ended) return s;
      const next: Session = copyWith(s, { lastSeenOn: at });
      this.stmt('UPDATE registry_sessions SET expires_ms = ?, data = ? WHERE caller = ? AND caller_sid = ?').run(Date.parse(at) + ttlSeconds * 1000, JSON.stringify(next), caller, sessionId);
      return next;
    });
  }

  async endSession(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }): Promise<Session | null> {
    return this.tx(() => this.endSessionNow(caller, sessionId, end));
  }

  /** endSession inside a transaction the caller holds. */
  private endSessionNow(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }): Session | null {
    const d = this.stmt('SELECT data FROM registry_sessions WHERE caller = ? AND caller_sid = ? AND ended = 0 AND expires_ms > ?').pluck().get(caller, sessionId, this.now()) as
      | string
      | undefined;
    if (!d) return null;
    const ended: Session = copyWith(JSON.parse(d) as Session, { endedReason: end.reason, endedOn: end.at });
    this.stmt('UPDATE registry_sessions SET ended = 1, expires_ms = ?, data = ? WHERE caller = ? AND caller_sid = ?').run(
      Date.parse(end.at) + end.keepSeconds * 1000,
      JSON.stringify(ended),
      caller,
      sessionId,
    );
    return ended;
  }

  async listSessions(accountId: string, f: SessionFilter, page: { offset: number; limit: number }): Promise<{ total: number; items: Session[] }> {
    const where = ['account_id = ?', 'ended = 0', 'expires_ms > ?'];
    const args: Array<string | number> = [accountId, this.now()];
    const add = (cond: string, value: string | number | undefined): void => {
      if (value === undefined) return;
      where.push(cond);
      args.push(value);
    };
    add('stream_name = ?', f.streamName);
    add('token_id = ?', f.tokenId);
    add('action = ?', f.action);
    const cond = where.join(' AND ');
    const total = this.db.prepare(`SELECT COUNT(*) FROM registry_sessions WHERE ${cond}`).pluck().get(...args) as number;
    const rows = this.db.prepare(`SELECT data FROM registry_sessions WHERE ${cond} ORDER BY started_ms, id LIMIT ? OFFSET ?`).pluck().all(...args, page.limit, page.offset) as string[];
    return { total, items: rows.map((d) => JSON.parse(d) as Session) };
  }

  async sessionCounts(): Promise<Array<{ caller: string; action: 'publish' | 'subscribe'; count: number }>> {
    return this.stmt('SELECT caller, action, COUNT(*) AS count FROM registry_sessions WHERE ended = 0 AND expires_ms > ? GROUP BY caller, action ORDER BY caller, action').all(
      this.now(),
    ) as Array<{ caller: string; action: 'publish' | 'subscribe'; count: number }>;
  }

  async scheduleExpiry(accountId: string, tokenId: number, atMs: number): Promise<void> {
    this.stmt('INSERT OR REPLACE INTO expiry_cuts (account_id, token_id, at_ms) VALUES (?, ?, ?)').run(accountId, tokenId, atMs);
  }

  async takeDueExpiries(nowMs: number, limit: number): Promise<Array<{ accountId: string; tokenId: number }>> {
    return this.tx(() => {
      const rows = this.stmt('SELECT account_id AS accountId, token_id AS tokenId FROM expiry_cuts WHERE at_ms <= ? ORDER BY at_ms LIMIT ?').all(nowMs, limit) as Array<{
        accountId: string;
        tokenId: number;
      }>;
      for (const r of rows) this.stmt('DELETE FROM expiry_cuts WHERE account_id = ? AND token_id = ?').run(r.accountId, r.tokenId);
      return rows;
    });
  }

  async getLiveStream(accountId: string, streamName: string): Promise<LiveStream | null> {
    const r = this.stmt('SELECT data FROM live_streams WHERE account_id = ? AND stream_name = ? AND expires_ms > ?')
      .get(accountId, streamName, this.now()) as { data: string } | undefined;
    return r ? (JSON.parse(r.data) as LiveStream) : null;
  }

  async activePublishTokenIds(accountId: string, streamName?: string): Promise<number[]> {
    const now = this.now();
    const rows = (
      streamName === undefined
        ? this.stmt('SELECT DISTINCT token_id FROM live_streams WHERE account_id = ? AND expires_ms > ? ORDER BY token_id').all(accountId, now)
        : this.stmt('SELECT DISTINCT token_id FROM live_streams WHERE account_id = ? AND stream_name = ? AND expires_ms > ? ORDER BY token_id')
            .all(accountId, streamName, now)
    ) as Array<{ token_id: number }>;
    return rows.map((r) => r.token_id);
  }

  // ---- marks ----

  async swapMark(accountId: string, name: string, value: string, ttlMs: number, when: 'always' | 'absent' | 'present' = 'always'): Promise<string | null> {
    const now = this.now();
    return this.tx(() => {
      this.stmt('DELETE FROM marks WHERE rowid IN (SELECT rowid FROM marks WHERE expires_ms <= ? LIMIT ?)').run(now, MARKS_PRUNED_PER_WRITE);
      const held = (this.stmt('SELECT value FROM marks WHERE account_id = ? AND name = ? AND expires_ms > ?').pluck().get(accountId, name, now) as string | undefined) ?? null;
      if ((when === 'absent' && held !== null) || (when === 'present' && held === null)) return held;
      this.stmt('INSERT INTO marks (account_id, name, value, expires_ms) VALUES (?, ?, ?, ?) ON CONFLICT(account_id, name) DO UPDATE SET value = excluded.value, expires_ms = excluded.expires_ms').run(
        accountId,
        name,
        value,
        now + ttlMs,
      );
      return held;
    });
  }

  async takeMark(accountId: string, name: string, value: string): Promise<boolean> {
    const now = this.now();
    return this.tx(() => this.stmt('DELETE FROM marks WHERE account_id = ? AND name = ? AND value = ? AND expires_ms > ?').run(accountId, name, value, now).changes === 1);
  }
}
