// The decision history a deployment keeps (docs/api.md#decision-history), beside its store: a
// Redis store keeps it on the same Redis (every instance reads it), the embedded store in a SQLite
// file of its own next to the store's.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Store } from '../store/store.js';
import type { RedisClient } from '../store/redis/connect.js';
import { DecisionHistory, retentionOf } from './recorder.js';
import { RedisHistory } from './redis-history.js';
import { SqliteHistory } from './sqlite-history.js';
import type { HistorySink } from './sink.js';

/** The history's SQLite file: history.sqliteFile (relative to dataDir), else `<store file>-history.db` beside the store's. */
export function historyFile(config: Config, storeFile: string | undefined): string {
  if (config.history.sqliteFile !== '') return path.resolve(config.dataDir, config.history.sqliteFile);
  if (storeFile === undefined || storeFile === ':memory:') return ':memory:';
  return `${storeFile.replace(/\.db$/, '')}-history.db`;
}

/** The history on `store`'s backend; undefined when history.enabled is false. A backend of another kind keeps it in this process's memory. */
export function openHistory(config: Config, store: Store, logger: Logger, now: () => number): DecisionHistory | undefined {
  if (!config.history.enabled) return undefined;
  const retention = retentionOf(config.history);
  const held = store as Store & { client?: RedisClient; file?: string };
  const sink: HistorySink =
    store.kind === 'redis' && held.client !== undefined ? new RedisHistory(held.client, retention) : new SqliteHistory(historyFile(config, held.file), retention);
  return new DecisionHistory(config.history, sink, async (id) => (await store.getAccount(id)) !== null, logger, now);
}
