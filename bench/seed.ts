// Seeds tokens straight into a store (not through the API): N subscribe/publish tokens of one
// account, 1% of the publish tokens with subscribeRequiresAuth so the secured-stream index is real.
import { Redis } from 'ioredis';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../src/store/redis/redis-store.js';
import { newTokenRecord, type NewTokenRecord } from '../src/domain/tokens.js';
import { newSecret } from '../src/domain/secrets.js';

function record(accountId: string, i: number): NewTokenRecord {
  const kind = i % 2 === 0 ? 'subscribe' : 'publish';
  return newTokenRecord(
    kind,
    accountId,
    {
      label: `seed-${i}`,
      streams: [{ streamName: `seed-stream-${i}` }, { streamName: `seed-${i % 1000}-[0-9]+`, isRegex: true }],
      allowedOrigins: i % 3 === 0 ? ['*.example.com'] : [],
      subscribeRequiresAuth: kind === 'publish' && i % 200 === 1 ? true : undefined,
      tracking: kind === 'subscribe' && i % 5 === 0 ? { trackingId: `t-${i % 100}` } : undefined,
    },
    newSecret(),
    Date.now(),
  );
}

export async function seedSqlite(file: string, accountId: string, n: number): Promise<void> {
  const store = new SqliteStore({ file, synchronous: 'NORMAL' });
  const chunk = 50_000;
  for (let i = 0; i < n; i += chunk) {
    store.batch(() => {
      for (let j = i; j < Math.min(n, i + chunk); j++) void store.createToken(record(accountId, j));
    });
  }
  await store.close();
}

export async function seedRedis(url: string, keyPrefix: string, accountId: string, n: number): Promise<void> {
  const client = new Redis(url, { keyPrefix, enableAutoPipelining: true });
  const store = new RedisStore(client);
  const inFlight = 2000;
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        const i = next++;
        await store.createToken(record(accountId, i));
      }
    }),
  );
  await store.close();
}
