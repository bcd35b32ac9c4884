// A worker of seedRedisInWorkers (seed.ts): its share of the seeded tokens, written through a
// client and a store of its own.
import { workerData } from 'node:worker_threads';
import { Cluster, Redis } from 'ioredis';
import { RedisStore } from '../src/store/redis/redis-store.js';
import { type SeedShare, seedShare } from './seed.js';

const share = workerData as SeedShare;
const { target, keyPrefix } = share;
const client =
  'url' in target
    ? new Redis(target.url, { keyPrefix, enableAutoPipelining: true })
    : new Cluster(
        target.clusterNodes.map((hp) => ({ host: hp.slice(0, hp.lastIndexOf(':')), port: Number(hp.slice(hp.lastIndexOf(':') + 1)) })),
        { keyPrefix, enableAutoPipelining: true },
      );
const store = new RedisStore(client);
try {
  await seedShare(store, share.accountId, share.n, share.k, share.step, share.inFlight);
} finally {
  await store.close();
}
