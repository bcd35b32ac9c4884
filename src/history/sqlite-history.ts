// The decision history in a SQLite file of its own (docs/api.md#decision-history), beside the
// embedded store's: a busy history never grows the serving file, and losing it loses no token.
import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import type { DecisionEntry, DecisionPage, DecisionQuery } from './entry.js';
import type { HistorySink, Retention } from './sink.js';

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
  const dot = c.indexOf('.');
  const at = Number(c.slice(0, dot));
  return dot > 0 && Number.isSafeInteger(at) ? { at, id: c.slice(dot + 1) } : undefined;
}

export class SqliteHistory implements HistorySink {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly appendAll: (batch: readonly DecisionEntry[]) => void;
  /** Accounts written since the last prune: only they can be over maxPerAccount. */
  private readonly touched = new Set<string>();

  /** `file`: a path (made 0600 when new) or ':memory:'. */
  constructor(
    file: string,
    private readonly r: Retention,
  ) {
    if (file !== ':memory:') closeSync(openSync(file, 'a', 0o600));
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.insert = this.db.prepare(
      'INSERT OR IGNORE INTO decisions (account, at, id, allowed, reason, token_id, stream, ip, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.appendAll = this.db.transaction((batch: readonly DecisionEntry[]) => {
      for (const e of batch) {
        this.touched.add(e.accountId);
        const { clientIp, ...rest } = e;
        this.insert.run(e.accountId, e.at, e.decisionId, e.allowed ? 1 : 0, e.reason, e.tokenId ?? null, e.streamName, clientIp ?? null, JSON.stringify(rest));
      }
    });
  }

  async append(batch: readonly DecisionEntry[]): Promise<void> {
    this.appendAll(batch);
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

  async prune(now: number): Promise<void> {
    const r = this.r;
    this.db.prepare('DELETE FROM decisions WHERE at < ?').run(now - r.maxAgeSeconds * 1000);
    this.db.prepare('UPDATE decisions SET ip = NULL WHERE at <= ? AND ip IS NOT NULL').run(now - r.addressSeconds * 1000);
    // each a walk of one index (no table scan on the event loop): the age, the addressed rows by
    // age, and for the accounts written since, the entry maxPerAccount back
    const cut = this.db.prepare('SELECT at, id FROM decisions WHERE account = ? ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?');
    const drop = this.db.prepare('DELETE FROM decisions WHERE account = ? AND (at < ? OR (at = ? AND id <= ?))');
    const accounts = [...this.touched];
    this.touched.clear();
    for (const account of accounts) {
      const edge = cut.get(account, r.maxPerAccount) as { at: number; id: string } | undefined;
      if (edge !== undefined) drop.run(account, edge.at, edge.at, edge.id);
    }
  }

  async accounts(): Promise<string[]> {
    // the distinct first column of an index: one step per account
    return (this.db.prepare('SELECT DISTINCT account FROM decisions').pluck().all() as string[]).slice();
  }

  async deleteAccount(accountId: string): Promise<void> {
    this.db.prepare('DELETE FROM decisions WHERE account = ?').run(accountId);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
