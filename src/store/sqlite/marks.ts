// Marks on SQLite: the marks table, expired rows pruned by the writes.
import type { MarkStore } from '../marks.js';
import type { SqliteConnection } from './connection.js';

/** Expired marks removed by each mark write, at most (they are never read once expired). */
const MARKS_PRUNED_PER_WRITE = 100;

export class SqliteMarks implements MarkStore {
  constructor(private readonly c: SqliteConnection) {}

  async swapMark(accountId: string, name: string, value: string, ttlMs: number, when: 'always' | 'absent' | 'present' = 'always'): Promise<string | null> {
    const now = this.c.now();
    return this.c.tx(() => {
      this.c.stmt('DELETE FROM marks WHERE rowid IN (SELECT rowid FROM marks WHERE expires_ms <= ? LIMIT ?)').run(now, MARKS_PRUNED_PER_WRITE);
      const held = (this.c.stmt('SELECT value FROM marks WHERE account_id = ? AND name = ? AND expires_ms > ?').pluck().get(accountId, name, now) as string | undefined) ?? null;
      if ((when === 'absent' && held !== null) || (when === 'present' && held === null)) return held;
      this.c.stmt('INSERT INTO marks (account_id, name, value, expires_ms) VALUES (?, ?, ?, ?) ON CONFLICT(account_id, name) DO UPDATE SET value = excluded.value, expires_ms = excluded.expires_ms').run(
        accountId,
        name,
        value,
        now + ttlMs,
      );
      return held;
    });
  }

  async takeMark(accountId: string, name: string, value: string): Promise<boolean> {
    const now = this.c.now();
    return this.c.tx(() => this.c.stmt('DELETE FROM marks WHERE account_id = ? AND name = ? AND value = ? AND expires_ms > ?').run(accountId, name, value, now).changes === 1);
  }
}
