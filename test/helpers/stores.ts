// Store factories for the contract suite and the HTTP suites: one per backend.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { Store } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type TestRedis } from './redis.js';

export interface StoreFactory {
  name: string;
  /** Called once before the suite (start servers). */
  setup(): Promise<void>;
  /** A fresh, empty store. `now` is the store's clock. */
  make(opts?: { now?: () => number }): Promise<Store>;
  teardown(): Promise<void>;
}

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

export function redisFactory(): StoreFactory {
  let server: TestRedis | undefined;
  const open: Store[] = [];
  return {
    name: 'redis',
    async setup() {
      server = await startRedis();
    },
    async make(opts = {}) {
      if (!server) throw new Error('redisFactory.setup() was not called');
      const client = new Redis(server.url, { keyPrefix: server.prefix(), enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
      await client.connect();
      const s = new RedisStore(client, { now: opts.now });
      open.push(s);
      return s;
    },
    async teardown() {
      await Promise.all(open.map((s) => s.close()));
      await server?.stop();
    },
  };
}
