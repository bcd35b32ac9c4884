// The Redis store (standalone, Sentinel or Cluster) for many instances sharing state: its
// aggregates (a file each beside this one) over one connection (connection.ts), put together as one
// Store (store/compose.ts). Atomic multi-key changes are the Lua scripts in ./lua
// (docs/architecture.md#redis-scripts); lookups by secret or token value go through hint keys that
// are always verified against the authoritative record.
import type { Store, StoreLifecycle } from '../store.js';
import { composeAggregates } from '../compose.js';
import { typeStoreFailures } from '../failures.js';
import type { RedisClient } from './connect.js';
import { isRedisUnavailable } from './failures.js';
import { RedisConnection, type RedisStoreOptions } from './connection.js';
import { upgradeStore } from './upgrade.js';
import { RedisAccounts } from './accounts.js';
import { RedisTokens } from './tokens.js';
import { RedisBinds } from './binds.js';
import { RedisIssuers } from './issuers.js';
import { RedisWebhooks } from './webhooks.js';
import { RedisRecordings } from './recordings.js';
import { RedisUsage } from './usage.js';
import { RedisMeta } from './meta.js';
import { RedisLiveStreams } from './live-streams.js';
import { RedisSessions } from './sessions.js';
import { RedisMarks } from './marks.js';
import { RedisAudit } from './audit.js';
import { RedisSharing } from './sharing.js';

export type { RedisStoreOptions } from './connection.js';
export { SCRIPTS, type ScriptSpec } from './scripts.js';
export { decodeToken, encodeToken } from './token-record.js';

/** The store methods whose scripts can move an account version (account, token, issuer and live-stream writes). */
const VERSION_WRITES = [
  'createAccount',
  'createFirstAccount',
  'updateAccount',
  'setAccountSecret',
  'createToken',
  'updateToken',
  'deleteToken',
  'removeSecuredStream',
  'createIssuer',
  'updateIssuer',
  'deleteIssuer',
  'startLiveStream',
  'endLiveStream',
] as const satisfies ReadonlyArray<keyof Store>;

/** The Redis store's own members besides Store's (RedisStore is their union with Store). */
class RedisBackend implements StoreLifecycle {
  readonly kind = 'redis' as const;
  readonly inProcess = false;
  private readonly c: RedisConnection;

  constructor(redis: RedisClient, opts: RedisStoreOptions = {}) {
    const c = new RedisConnection(redis, opts);
    this.c = c;
    composeAggregates(this, [
      new RedisAccounts(c),
      new RedisTokens(c),
      new RedisBinds(c),
      new RedisIssuers(c),
      new RedisWebhooks(c),
      new RedisRecordings(c),
      new RedisUsage(c),
      new RedisMeta(c),
      new RedisLiveStreams(c),
      new RedisSessions(c),
      new RedisMarks(c),
      new RedisAudit(c),
      new RedisSharing(c),
    ]);
    typeStoreFailures(this as unknown as Store, isRedisUnavailable);
    // Every write that can move an account version forgets the shared version reads, when it
    // starts and when it is acknowledged, and the watched versions when it is acknowledged: a
    // decision that starts after such a write of this instance never joins a read sent before it,
    // nor waits for the write's message to arrive.
    const self = this as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const name of VERSION_WRITES) {
      const m = self[name];
      self[name] = (...args: unknown[]) => {
        c.versionReads.clear();
        return m.apply(this, args).finally(() => {
          c.versionReads.clear();
          c.watch?.forget();
        });
      };
    }
  }

  ping(): Promise<void> {
    return this.c.ping();
  }

  /** The connection, for what keeps its data on the same Redis apart from the store (the decision history). */
  get client(): RedisClient {
    return this.c.redis;
  }

  close(): Promise<void> {
    return this.c.close();
  }

  /**
   * Data of earlier builds lacks indexes this build reads (upgrade.ts): built once per store,
   * idempotent beside instances starting together.
   */
  upgrade(): Promise<void> {
    return upgradeStore(this.c);
  }
}

/**
 * The Redis store: Store, whose methods the constructor puts on the object from the aggregates
 * (composeAggregates), with the members above. `new RedisStore(client, opts)` makes one.
 */
export type RedisStore = Store & RedisBackend & { accountVersionKnown(accountId: string): number | undefined };
export const RedisStore = RedisBackend as unknown as new (redis: RedisClient, opts?: RedisStoreOptions) => RedisStore;
