// Token-sharing signals on SQLite (src/store/sharing.ts): a row per (account, credential, address),
// the use as JSON beside its time; rows past every window pruned by the writes.
import { SHARING_MAX_ADDRESSES, type SharingStore, type SharingUse } from '../sharing.js';
import type { SqliteConnection } from './connection.js';

/** Rows of other credentials past their window removed by each write, at most. */
const PRUNED_PER_WRITE = 100;
/** The longest window a policy may set (docs/api.md#token-sharing): what the writes prune past. */
export const SHARING_MAX_WINDOW_MS = 7 * 86_400_000;

export class SqliteSharing implements SharingStore {
  constructor(private readonly c: SqliteConnection) {}

  async recordSharing(accountId: string, credential: string, uses: readonly SharingUse[], windowMs: number): Promise<SharingUse[]> {
    const now = this.c.now();
    return this.c.tx(() => {
      this.c.stmt('DELETE FROM sharing_uses WHERE rowid IN (SELECT rowid FROM sharing_uses WHERE at_ms < ? LIMIT ?)').run(now - SHARING_MAX_WINDOW_MS, PRUNED_PER_WRITE);
      const put = this.c.stmt(
        'INSERT INTO sharing_uses (account_id, credential, ip, at_ms, data) VALUES (?, ?, ?, ?, ?) ON CONFLICT(account_id, credential, ip) DO UPDATE SET at_ms = excluded.at_ms, data = excluded.data WHERE excluded.at_ms > sharing_uses.at_ms',
      );
      for (const u of uses) put.run(accountId, credential, u.ip, u.at, JSON.stringify(u));
      this.c.stmt('DELETE FROM sharing_uses WHERE account_id = ? AND credential = ? AND at_ms < ?').run(accountId, credential, now - windowMs);
      this.c
        .stmt(
          'DELETE FROM sharing_uses WHERE account_id = ? AND credential = ? AND ip NOT IN (SELECT ip FROM sharing_uses WHERE account_id = ? AND credential = ? ORDER BY at_ms DESC, ip LIMIT ?)',
        )
        .run(accountId, credential, accountId, credential, SHARING_MAX_ADDRESSES);
      return this.read(accountId, credential, now - windowMs);
    });
  }

  async sharingUses(accountId: string, credential: string, windowMs: number): Promise<SharingUse[]> {
    return this.read(accountId, credential, this.c.now() - windowMs);
  }

  private read(accountId: string, credential: string, since: number): SharingUse[] {
    const rows = this.c
      .stmt('SELECT data FROM sharing_uses WHERE account_id = ? AND credential = ? AND at_ms >= ? ORDER BY at_ms DESC, ip LIMIT ?')
      .pluck()
      .all(accountId, credential, since, SHARING_MAX_ADDRESSES) as string[];
    return rows.map((r) => JSON.parse(r) as SharingUse);
  }
}
