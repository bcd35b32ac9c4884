// Store factories for the contract suite and the HTTP suites: one per backend.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Store } from '../../src/store/store.js';
import type { StoreFactory as ContractFactory } from 'streamgate/store-contract';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type TestRedis } from './redis.js';
import { startCluster, type TestCluster } from './redis-cluster.js';
import { createRedisClient, connectRedis, type RedisClient } from '../../src/store/redis/connect.js';
import { randomBytes } from 'node:crypto';
import { SESSION_RECORDS_META, type SessionRecordForm } from '../../src/store/redis/session-record.js';

/** A connected client of a test Cluster (`startCluster`), its keys under `keyPrefix`. */
export async function clusterClient(nodes: TestCluster['nodes'], keyPrefix: string): Promise<RedisClient> {
  const cfg = {
    url: '',
    clusterNodes: nodes,
    sentinels: [],
    sentinelName: '',
    password: '',
    keyPrefix,
    commandTimeoutMs: 3000,
    connectTimeoutMs: 5000,
    waitReplicas: 0,
    waitTimeoutMs: 1000,
    versionLagMs: 0,
  };
  const client = createRedisClient(cfg);
  client.on('error', () => {});
  await connectRedis(client, cfg);
  return client;
}

/** The store contract's factory (`streamgate/store-contract`), of whole stores. */
export type StoreFactory = ContractFactory<Store>;

export function sqliteFactory(): StoreFactory {
  let dir = '';
  let n = 0;
  const open: Store[] = [];
  return {
    name: 'sqlite',
    async setup() {
      dir = mkdtempSync(path.join(tmpdir(), 'sg-sqlite-'));
    },
    async make(opts = {}) {
      const s = new SqliteStore({ file: path.join(dir, `s${++n}.db`), synchronous: 'NORMAL', now: opts.now });
      open.push(s);
      return s;
    },
    async teardown() {
      await Promise.all(open.map((s) => s.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The version watch's lag of the default config (redis.versionLagMs). */
export const VERSION_LAG_MS = 250;

/**
 * A fresh Redis store per make(), its session records in the form of a store this build started
 * on (rows), or, with `sessionRecords: 'json'`, of one an earlier build used (objects).
 */
export function redisFactory(opts: { sessionRecords?: SessionRecordForm } = {}): StoreFactory {
  const form = opts.sessionRecords ?? 'compact';
  let server: TestRedis | undefined;
  const open: Store[] = [];
  return {
    name: form === 'compact' ? 'redis' : 'redis, session records as objects',
    async setup() {
      server = await startRedis();
    },
    async make(opts = {}) {
      if (!server) throw new Error('redisFactory.setup() was not called');
      const client = new Redis(server.url, { keyPrefix: server.prefix(), enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
      await client.connect();
      // As the server runs it by default: versions watched (config/default.yaml redis.versionLagMs).
      const s = new RedisStore(client, { now: opts.now, versionLagMs: VERSION_LAG_MS });
      open.push(s);
      await s.setMeta(SESSION_RECORDS_META, form);
      return s;
    },
    async teardown() {
      await Promise.all(open.map((s) => s.close()));
      await server?.stop();
    },
  };
}

export function redisClusterFactory(): StoreFactory {
  let cluster: TestCluster | undefined;
  const open: Store[] = [];
  return {
    name: 'redis-cluster',
    async setup() {
      cluster = await startCluster();
    },
    async make(opts = {}) {
      if (!cluster) throw new Error('redisClusterFactory.setup() was not called');
      const client = await clusterClient(cluster.nodes, `t${randomBytes(4).toString('hex')}:`);
      const s = new RedisStore(client, { now: opts.now });
      open.push(s);
      // as a store this build started on (upgrade.ts settleSessionRecords)
      await s.setMeta(SESSION_RECORDS_META, 'compact');
      return s;
    },
    async teardown() {
      await Promise.all(open.map((s) => s.close()));
      await cluster?.stop();
    },
  };
}
