// The embedded store's connection: one SQLite file (WAL) through better-sqlite3. Calls are
// synchronous inside, so every read-modify-write of the aggregates runs as one transaction with
// nothing interleaved.
import Database from 'better-sqlite3';
import path from 'node:path';
import { StoreUnavailable } from '../../errors.js';
import { Checkpointer, WAL_LIMIT_BYTES } from './checkpointer.js';
import { ensurePrivateDir, ensurePrivateFile } from '../data-dir.js';
import { SCHEMA, migrate } from './schema.js';

/** How often another connection's commits are looked for: what they change is seen within this (and well within 1 s). */
const VERSION_POLL_MS = 250;
/** Account versions remembered at most (all are dropped when full). */
export const VERSIONS_KEPT = 100_000;

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

/**
 * The connection every aggregate of the embedded store shares (sqlite-store.ts composes them): the
 * database handle, prepared statements, the one transaction wrapper, the account versions kept in
 * memory, and the background checkpoints.
 */
export class SqliteConnection {
  readonly db: Database.Database;
  readonly now: () => number;
  private closed = false;
  /**
   * One transaction wrapper for every write, made once: better-sqlite3's db.transaction(fn) builds
   * four wrapped functions and their properties per call, which a write per admission paid
   * (docs/decision-path.md#object-copies-and-checkpoints).
   */
  private readonly inImmediate: (fn: () => unknown) => unknown;
  private readonly inDefault: (fn: () => unknown) => unknown;
  /** Write transactions committed by this connection (the checkpointer reads it). */
  writes = 0;
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
    migrate(this.db);
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

  // Account versions are answered from memory: every decision reads one, and the SELECT is a
  // noticeable share of a decision (docs/decision-path.md#why-the-born-floor-matters). This connection's own writes drop the account's entry in the same code
  // that moves the version (bumpVersion, inside the write's transaction; a rolled-back write only
  // makes the next read go to the file again). Another connection's commits (the CLI, a second
  // instance on the same file) are seen through `PRAGMA data_version`, which changes when any
  // other connection commits: polled every VERSION_POLL_MS, and a change drops every entry.
  readonly versions = new Map<string, number>();
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

  private readonly statements = new Map<string, Database.Statement>();
  get versionStmt(): Database.Statement {
    this._versionStmt ??= this.db.prepare('SELECT ver FROM account_versions WHERE account_id = ?').pluck();
    return this._versionStmt;
  }
  private _versionStmt?: Database.Statement;

  /** Prepared once per SQL text: preparing is far dearer than running (seen in a CPU profile). */
  stmt(sql: string): Database.Statement {
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
  tx<T>(fn: () => T): T {
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

  /** Every write of an account's tokens or settings moves its version (inside the write's transaction). */
  bumpVersion(accountId: string): void {
    this.versions.delete(accountId); // read again from the file after this write (or its rollback)
    this.stmt('INSERT INTO account_versions (account_id, ver) VALUES (?, 1) ON CONFLICT(account_id) DO UPDATE SET ver = ver + 1')
      .run(accountId);
  }

  /** Whether the account has viewer-rule tokens: only then does a stream's publishing token matter to a decision. */
  hasViewerRules(accountId: string): boolean {
    return this.stmt('SELECT 1 FROM tokens WHERE account_id = ? AND securing > 0 LIMIT 1').get(accountId) !== undefined;
  }
}
