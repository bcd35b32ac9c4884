// The viewerConnection timing (test/unit/viewer-connection.suite.ts) on Redis: one instance, and two
// instances sharing one key prefix as a load-balanced deployment runs them.
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { Store } from '../../src/store/store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { viewerConnectionSuite } from '../unit/viewer-connection.suite.js';

let server: TestRedis | undefined;
const open: Store[] = [];
viewerConnectionSuite(
  {
    name: 'redis',
    setup: async () => {
      server = await startRedis();
    },
    open: async (count, now) => {
      if (!server) throw new Error('setup() was not called');
      const prefix = server.prefix();
      const stores: Store[] = [];
      for (let i = 0; i < count; i++) {
        const client = new Redis(server.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
        await client.connect();
        stores.push(new RedisStore(client, { now }));
      }
      open.push(...stores);
      return stores;
    },
    teardown: async () => {
      await Promise.all(open.map((s) => s.close()));
      await server?.stop();
    },
  },
  { instances: 2 },
);
