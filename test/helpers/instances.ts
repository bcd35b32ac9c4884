// Streamgate instances for race tests, each served on a real port: one on the embedded store, or
// several sharing one Redis (one key prefix), as a load-balanced deployment runs them.
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { sqliteFactory } from './stores.js';
import { startRedis, type TestRedis } from './redis.js';
import { testApp, type TestApp } from './app.js';
import { listen, type Listening } from './listen.js';

export interface Instance {
  t: TestApp;
  base: string;
}

export interface Deployment {
  name: string;
  instances: Instance[];
  close(): Promise<void>;
}

// Revocation and atomicity are under test, not latency: a generous store deadline on a busy box.
const OVERRIDES = { enforcement: { storeTimeoutMs: 3000 } };

export async function sqliteDeployment(overrides: Record<string, unknown> = {}): Promise<Deployment> {
  const f = sqliteFactory();
  await f.setup();
  const t = await testApp(await f.make(), { ...OVERRIDES, ...overrides });
  const l = await listen(t.app);
  return {
    name: 'sqlite',
    instances: [{ t, base: l.base }],
    close: async () => {
      await l.close();
      await f.teardown();
    },
  };
}

export async function redisDeployment(count: number, overrides: Record<string, unknown> = {}): Promise<Deployment> {
  const redis: TestRedis = await startRedis();
  const prefix = redis.prefix();
  const clients: Redis[] = [];
  const servers: Listening[] = [];
  const instances: Instance[] = [];
  for (let i = 0; i < count; i++) {
    const c = new Redis(redis.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 3000 });
    c.on('error', () => {});
    await c.connect();
    clients.push(c);
    const t = await testApp(new RedisStore(c), { ...OVERRIDES, ...overrides });
    const l = await listen(t.app);
    servers.push(l);
    instances.push({ t, base: l.base });
  }
  return {
    name: count === 1 ? 'redis' : `redis, ${count} instances`,
    instances,
    close: async () => {
      for (const s of servers) await s.close();
      for (const c of clients) c.disconnect();
      await redis.stop();
    },
  };
}
