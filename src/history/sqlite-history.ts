// The decision history in a SQLite file of its own (docs/api.md#decision-history), beside the
// embedded store's: a busy history never grows the serving file, and losing it loses no token.
import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { Checkpointer } from '../store/sqlite/checkpointer.js';
import { setImmediate } from 'node:timers/promises';
import { HistoryCursorInvalid, type DecisionEntry, type DecisionPage, type DecisionQuery } from './entry.js';
import { ERASURE_HELD_MS, type HistorySink, type Retention } from './sink.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS decisions (
  account TEXT NOT NULL,
  at INTEGER NOT NULL,
  id TEXT NOT NULL,
  allowed INTEGER NOT NULL,
  reason TEXT NOT NULL,
  token_id INTEGER,
  stream TEXT NOT NULL,
  ip TEXT,
  body TEXT NOT NULL,
  PRIMARY KEY (account, id)
);
CREATE INDEX IF NOT EXISTS decisions_at ON decisions (account, at, id);
CREATE INDEX IF NOT EXISTS decisions_token ON decisions (account, token_id, at);
CREATE INDEX IF NOT EXISTS decisions_stream ON decisions (account, stream, at);
CREATE INDEX IF NOT EXISTS decisions_ip ON decisions (account, ip, at);
CREATE INDEX IF NOT EXISTS decisions_reason ON decisions (account, reason, at);
CREATE INDEX IF NOT EXISTS decisions_age ON decisions (at);
CREATE INDEX IF NOT EXISTS decisions_addressed ON decisions (at) WHERE ip IS NOT NULL;
CREATE TABLE IF NOT EXISTS erasures (
  account TEXT PRIMARY KEY,
  at INTEGER NOT NULL
);
`;

interface Row {
  at: number;
  id: string;
  ip: string | null;
  body: string;
}

/** A cursor: the last entry of the page before, `<at>.<id>`. */
const cursorOf = (e: { at: number; decisionId: string }): string => `${e.at}.${e.decisionId}`;

function parseCursor(c: string): { at: number; id: string } | undefined {
  const m = /^(\d{1,16})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(c);
  return m === null ? undefined : { at: Number(m[1]), id: m[2] };
}

/** Rows a prune statement touches at once: retention yields to the event loop between chunks. */
export const PRUNE_CHUNK = 5000;

export class SqliteHistory implements HistorySink {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly appendAll: (batch: readonly DecisionEntry[]) => void;
  /** Accounts written since the last prune: only they can be over maxPerAccount. */
  private readonly touched = new Set<string>();
  /** Batches written (the checkpointer reads it). */
  private writes = 0;
  /** WAL checkpoints on a thread of their own from the first write (a file, not ':memory:'). */
  private readonly checkpointer: Checkpointer | undefined;
  /** Statements retention and erasures have run, a chunk of rows each (the tests read it). */
  chunksRun = 0;

  /** `file`: a path (made 0600 when new) or ':memory:'; `chunk`: rows per prune statement. */
  constructor(
    file: string,
    private readonly r: Retention,
    private readonly chunk = PRUNE_CHUNK,
  ) {
    if (file !== ':memory:') closeSync(openSync(file, 'a', 0o600));
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.checkpointer =
      file === ':memory:'
        ? undefined
        : new Checkpointer(
            {
              file: path.resolve(file),
              writes: () => this.writes,
              setAutocheckpoint: (pages) => void this.db.pragma(`wal_autocheckpoint = ${pages}`),
              // the serving connection checkpoints for itself again, as SQLite does by default
              onFailure: () => undefined,
            },
            { busyWrites: 1 },
          );
    this.insert = this.db.prepare(
      'INSERT OR IGNORE INTO decisions (account, at, id, allowed, reason, token_id, stream, ip, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const erasedAt = this.db.prepare('SELECT at FROM erasures WHERE account = ?').pluck();
    this.appendAll = this.db.transaction((batch: readonly DecisionEntry[]) => {
      // an account erased since these entries were made (a queue written after the erasure) keeps none of them
      const erased = new Map<string, number | undefined>();
      for (const e of batch) {
        if (!erased.has(e.accountId)) erased.set(e.accountId, erasedAt.get(e.accountId) as number | undefined);
        const at = erased.get(e.accountId);
        if (at !== undefined && e.at <= at) continue;
        this.touched.add(e.accountId);
        const { clientIp, ...rest } = e;
        this.insert.run(e.accountId, e.at, e.decisionId, e.allowed ? 1 : 0, e.reason, e.tokenId ?? null, e.streamName, clientIp ?? null, JSON.stringify(rest));
      }
    });
  }

  async append(batch: readonly DecisionEntry[]): Promise<void> {
    this.appendAll(batch);
    this.writes++;
  }

  async query(accountId: string, q: DecisionQuery): Promise<DecisionPage> {
    const where = ['account = ?'];
    const args: unknown[] = [accountId];
    const add = (clause: string, value: unknown) => {
      if (value === undefined) return;
      where.push(clause);
      args.push(value);
    };
    add('id = ?', q.decisionId);
    add('token_id = ?', q.tokenId);
    add('stream = ?', q.streamName);
    add('ip = ?', q.clientIp);
    add('reason = ?', q.reason);
    add('allowed = ?', q.allowed === undefined ? undefined : q.allowed ? 1 : 0);
    add('at >= ?', q.from);
    add('at < ?', q.to);
    const c = q.cursor === undefined ? undefined : parseCursor(q.cursor);
    if (q.cursor !== undefined && c === undefined) throw new HistoryCursorInvalid();
    if (c !== undefined) {
      where.push('(at < ? OR (at = ? AND id < ?))');
      args.push(c.at, c.at, c.id);
    }
    const rows = this.db
      .prepare(`SELECT at, id, ip, body FROM decisions WHERE ${where.join(' AND ')} ORDER BY at DESC, id DESC LIMIT ?`)
      .all(...args, q.limit + 1) as Row[];
    const items = rows.slice(0, q.limit).map((r) => {
      const e = JSON.parse(r.body) as DecisionEntry;
      if (r.ip !== null) e.clientIp = r.ip;
      return e;
    });
    return rows.length > q.limit ? { items, next: cursorOf(items[items.length - 1]) } : { items };
  }

  /**
   * Retention, a chunk of rows at a time with the event loop yielded between chunks (each a walk
   * of one index, never a table scan): entries past their age, addresses past theirs, and for the
   * accounts written since, the entries more than maxPerAccount back (found by walking the
   * account's newest entries a chunk at a time).
   */
  async prune(now: number): Promise<void> {
    const r = this.r;
    const n = this.chunk;
    this.db.prepare('DELETE FROM erasures WHERE at < ?').run(now - ERASURE_HELD_MS);
    await this.chunked(this.db.prepare('DELETE FROM decisions WHERE rowid IN (SELECT rowid FROM decisions WHERE at < ? LIMIT ?)'), now - r.maxAgeSeconds * 1000);
    await this.chunked(
      this.db.prepare('UPDATE decisions SET ip = NULL WHERE rowid IN (SELECT rowid FROM decisions WHERE at <= ? AND ip IS NOT NULL LIMIT ?)'),
      now - r.addressSeconds * 1000,
    );
    const first = this.db.prepare('SELECT at, id FROM decisions WHERE account = ? ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?');
    const next = this.db.prepare('SELECT at, id FROM decisions WHERE account = ? AND (at < ? OR (at = ? AND id < ?)) ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?');
    const drop = this.db.prepare('DELETE FROM decisions WHERE rowid IN (SELECT rowid FROM decisions WHERE account = ? AND (at < ? OR (at = ? AND id < ?)) LIMIT ?)');
    const accounts = [...this.touched];
    this.touched.clear();
    for (const account of accounts) {
      // the maxPerAccount-th newest entry: kept, and everything older goes
      let edge: { at: number; id: string } | undefined;
      let walked = 0;
      while (walked < r.maxPerAccount) {
        const step = Math.min(n, r.maxPerAccount - walked);
        const row = (edge === undefined ? first.get(account, step - 1) : next.get(account, edge.at, edge.at, edge.id, step - 1)) as { at: number; id: string } | undefined;
        if (row === undefined) break;
        edge = row;
        walked += step;
        await setImmediate();
      }
      if (edge === undefined || walked < r.maxPerAccount) continue;
      const e = edge;
      while (this.run(drop, account, e.at, e.at, e.id, n) === n) await setImmediate();
      await setImmediate();
    }
  }

  /** Runs `stmt` (its first parameter `bound`, its last the chunk size) until it changes fewer rows than a chunk, yielding between runs. */
  private async chunked(stmt: Database.Statement, bound: number | string): Promise<void> {
    while (this.run(stmt, bound, this.chunk) === this.chunk) await setImmediate();
    await setImmediate();
  }

  /** One chunk of retention or an erasure: the rows `stmt` changed. */
  private run(stmt: Database.Statement, ...args: unknown[]): number {
    this.chunksRun++;
    return stmt.run(...args).changes;
  }

  async accounts(): Promise<string[]> {
    // the distinct first column of an index: one step per account
    return (this.db.prepare('SELECT DISTINCT account FROM decisions').pluck().all() as string[]).slice();
  }

  async deleteAccount(accountId: string, now: number): Promise<void> {
    // first: entries made until now and still queued are not written after it (append)
    this.db.prepare('INSERT INTO erasures (account, at) VALUES (?, ?) ON CONFLICT (account) DO UPDATE SET at = max(at, excluded.at)').run(accountId, now);
    await this.chunked(this.db.prepare('DELETE FROM decisions WHERE rowid IN (SELECT rowid FROM decisions WHERE account = ? LIMIT ?)'), accountId);
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
  }
}
