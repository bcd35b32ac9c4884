// Audit chains on SQLite (src/store/audit.ts; tables in schema.ts, user_version 8). A sealed write of
// another aggregate calls appendSealed inside its own immediate transaction: the head is read,
// the entry sealed and both written before the change commits, so no other writer of the file comes
// in between and a sealer that throws rolls the change back.
import type { AuditEntry, AuditHead, AuditSealer } from '../../domain/audit.js';
import type { AuditEnds, AuditQuery, AuditStore, StoredAudit } from '../audit.js';
import type { SqliteConnection } from './connection.js';

/** Inside the caller's transaction: seals (before, after) on the account's head and stores the entry and the new head. */
export function appendSealed<T>(c: SqliteConnection, accountId: string, seal: AuditSealer<T> | undefined, before: T | null, after: T | null): AuditEntry | undefined {
  if (seal === undefined) return undefined;
  const row = c.stmt('SELECT seq, mac FROM audit_heads WHERE account_id = ?').get(accountId) as AuditHead | undefined;
  const e = seal(before, after, row ? { seq: row.seq, mac: row.mac } : null);
  if (e.accountId !== accountId || e.seq !== (row?.seq ?? 0) + 1) throw new Error(`audit: an entry sealed for ${e.accountId} #${e.seq} where ${accountId} #${(row?.seq ?? 0) + 1} was due`);
  c.stmt('INSERT INTO audit_entries (account_id, seq, at_ms, resource, actor, data) VALUES (?, ?, ?, ?, ?, ?)').run(
    accountId,
    e.seq,
    Date.parse(e.at),
    e.resource,
    e.actor,
    JSON.stringify(e),
  );
  c.stmt('INSERT INTO audit_heads (account_id, seq, mac) VALUES (?, ?, ?) ON CONFLICT(account_id) DO UPDATE SET seq = excluded.seq, mac = excluded.mac').run(
    accountId,
    e.seq,
    e.mac,
  );
  return e;
}

/** An entry text's MAC ('' when it does not parse: such an anchor names the break at verify). */
function macOf(text: string): string {
  try {
    return String((JSON.parse(text) as AuditEntry).mac ?? '');
  } catch {
    return '';
  }
}

const parsed = (rows: Array<{ data: string }>): AuditEntry[] =>
  rows.flatMap((r) => {
    try {
      return [JSON.parse(r.data) as AuditEntry];
    } catch {
      return [];
    }
  });

export class SqliteAudit implements AuditStore {
  constructor(private readonly c: SqliteConnection) {}

  async appendAudit(accountId: string, seal: AuditSealer<null>): Promise<AuditEntry> {
    return this.c.tx(() => appendSealed(this.c, accountId, seal, null, null)!);
  }

  async listAudit(accountId: string, q: AuditQuery): Promise<AuditEntry[]> {
    const where = ['account_id = ?'];
    const args: unknown[] = [accountId];
    if (q.cursor !== undefined) {
      where.push(q.ascending ? 'seq > ?' : 'seq < ?');
      args.push(q.cursor);
    }
    if (q.resource !== undefined) {
      where.push('resource = ?');
      args.push(q.resource);
    }
    if (q.actor !== undefined) {
      where.push('actor = ?');
      args.push(q.actor);
    }
    if (q.from !== undefined) {
      where.push('at_ms >= ?');
      args.push(q.from);
    }
    if (q.to !== undefined) {
      where.push('at_ms < ?');
      args.push(q.to);
    }
    const sql = `SELECT data FROM audit_entries WHERE ${where.join(' AND ')} ORDER BY seq ${q.ascending ? 'ASC' : 'DESC'} LIMIT ?`;
    return parsed(this.c.stmt(sql).all(...args, q.limit) as Array<{ data: string }>);
  }

  async auditEntries(accountId: string, after: number, limit: number): Promise<StoredAudit[]> {
    return (this.c.stmt('SELECT seq AS pos, data AS text FROM audit_entries WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(accountId, after, limit) as StoredAudit[]).map(
      (r) => ({ pos: r.pos, text: r.text }),
    );
  }

  async auditEnds(accountId: string): Promise<AuditEnds> {
    const r = this.c.stmt('SELECT seq, mac, anchor_seq, anchor_mac, anchor_text, anchor_prev FROM audit_heads WHERE account_id = ?').get(accountId) as
      | { seq: number; mac: string; anchor_seq: number; anchor_mac: string; anchor_text: string; anchor_prev: string }
      | undefined;
    if (!r) return { head: null, anchor: null };
    return {
      head: { seq: r.seq, mac: r.mac },
      anchor: r.anchor_seq > 0 ? { seq: r.anchor_seq, mac: r.anchor_mac, text: r.anchor_text, previousMac: r.anchor_prev } : null,
    };
  }

  async pruneAudit(accountId: string, before: number): Promise<number> {
    return this.c.tx(() => {
      // a prefix of the chain: up to the first entry made at or after `before`
      const keep = this.c.stmt('SELECT MIN(seq) FROM audit_entries WHERE account_id = ? AND at_ms >= ?').pluck().get(accountId, before) as number | null;
      const upTo = keep === null ? Number.MAX_SAFE_INTEGER : keep - 1;
      const last = this.c.stmt('SELECT seq, data FROM audit_entries WHERE account_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1').get(accountId, upTo) as
        | { seq: number; data: string }
        | undefined;
      if (!last) return 0;
      // the MAC before the new anchor: the entry before it, else the anchor it follows
      const prior = this.c.stmt('SELECT data FROM audit_entries WHERE account_id = ? AND seq = ?').pluck().get(accountId, last.seq - 1) as string | undefined;
      const held = this.c.stmt('SELECT anchor_seq AS seq, anchor_mac AS mac FROM audit_heads WHERE account_id = ?').get(accountId) as AuditHead | undefined;
      const previousMac = prior !== undefined ? macOf(prior) : held?.seq === last.seq - 1 ? held.mac : '';
      const n = this.c.stmt('DELETE FROM audit_entries WHERE account_id = ? AND seq <= ?').run(accountId, last.seq).changes;
      this.c
        .stmt('UPDATE audit_heads SET anchor_seq = ?, anchor_mac = ?, anchor_text = ?, anchor_prev = ? WHERE account_id = ? AND anchor_seq < ?')
        .run(last.seq, macOf(last.data), last.data, previousMac, accountId, last.seq);
      return n;
    });
  }

  async deleteAccountAudit(accountId: string): Promise<void> {
    this.c.tx(() => {
      this.c.stmt('DELETE FROM audit_entries WHERE account_id = ?').run(accountId);
      this.c.stmt('DELETE FROM audit_heads WHERE account_id = ?').run(accountId);
    });
  }

  async hasAuditChains(): Promise<boolean> {
    return this.c.stmt('SELECT 1 FROM audit_heads LIMIT 1').get() !== undefined;
  }

  async auditAccounts(): Promise<Array<{ accountId: string; lastAt: number | null; exists: boolean }>> {
    const rows = this.c
      .stmt(
        `SELECT h.account_id AS accountId,
                (SELECT at_ms FROM audit_entries e WHERE e.account_id = h.account_id ORDER BY seq DESC LIMIT 1) AS lastAt,
                EXISTS (SELECT 1 FROM accounts a WHERE a.id = h.account_id) AS present
         FROM audit_heads h ORDER BY h.account_id`,
      )
      .all() as Array<{ accountId: string; lastAt: number | null; present: number }>;
    return rows.map((r) => ({ accountId: r.accountId, lastAt: r.lastAt, exists: r.present === 1 }));
  }
}
