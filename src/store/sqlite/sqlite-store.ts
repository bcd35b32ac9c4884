// The embedded store: one SQLite file, its aggregates (a file each beside this one) over one
// connection (connection.ts), put together as one Store (store/compose.ts).
import type { Store, StoreLifecycle } from '../store.js';
import { composeAggregates } from '../compose.js';
import type { Checkpointer } from './checkpointer.js';
import { SqliteConnection, type SqliteStoreOptions } from './connection.js';
import { SqliteAccounts } from './accounts.js';
import { SqliteTokens } from './tokens.js';
import { SqliteBinds } from './binds.js';
import { SqliteIssuers } from './issuers.js';
import { SqliteWebhooks } from './webhooks.js';
import { SqliteRecordings } from './recordings.js';
import { SqliteUsage } from './usage.js';
import { SqliteMeta } from './meta.js';
import { SqliteLiveStreams } from './live-streams.js';
import { SqliteSessions } from './sessions.js';
import { SqliteMarks } from './marks.js';
import { SqliteAudit } from './audit.js';
import { SqliteSharing } from './sharing.js';

export type { SqliteStoreOptions } from './connection.js';

/** The embedded store's own members besides Store's (SqliteStore is their union with Store). */
class SqliteBackend implements StoreLifecycle {
  readonly kind = 'sqlite' as const;
  readonly inProcess = true;
  private readonly c: SqliteConnection;
  /** The database file, or ':memory:'. */
  readonly file: string;

  constructor(opts: SqliteStoreOptions) {
    const c = new SqliteConnection(opts);
    this.c = c;
    this.file = opts.file;
    composeAggregates(this, [
      new SqliteAccounts(c),
      new SqliteTokens(c),
      new SqliteBinds(c),
      new SqliteIssuers(c),
      new SqliteWebhooks(c),
      new SqliteRecordings(c),
      new SqliteUsage(c),
      new SqliteMeta(c),
      new SqliteLiveStreams(c),
      new SqliteSessions(c),
      new SqliteMarks(c),
      new SqliteAudit(c),
      new SqliteSharing(c),
    ]);
  }

  /** WAL checkpoints off the event loop, for a file (not ':memory:'). */
  get checkpointer(): Checkpointer | undefined {
    return this.c.checkpointer;
  }

  /** Runs `fn` in one transaction (bulk loads: benchmarks, imports). The store's own writes nest. */
  batch<T>(fn: () => T): T {
    return this.c.batch(fn);
  }

  ping(): Promise<void> {
    return this.c.ping();
  }

  close(): Promise<void> {
    return this.c.close();
  }
}

/**
 * The embedded store: Store, whose methods the constructor puts on the object from the aggregates
 * (composeAggregates), with the SQLite members above. `new SqliteStore(opts)` makes one.
 */
export type SqliteStore = Store & SqliteBackend & { accountVersionKnown(accountId: string): number | undefined };
export const SqliteStore = SqliteBackend as unknown as new (opts: SqliteStoreOptions) => SqliteStore;
