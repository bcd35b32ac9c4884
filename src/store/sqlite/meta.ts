// Deployment metadata on SQLite: the meta table.
import type { MetaStore } from '../meta.js';
import type { SqliteConnection } from './connection.js';

export class SqliteMeta implements MetaStore {
  constructor(private readonly c: SqliteConnection) {}

  async getMeta(key: string): Promise<string | null> {
    const r = this.c.stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return r?.value ?? null;
  }

  async setMeta(key: string, value: string, onlyIfAbsent = false): Promise<boolean> {
    const sql = onlyIfAbsent
      ? 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING'
      : 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value';
    return this.c.tx(() => this.c.stmt(sql).run(key, value).changes === 1);
  }
}
