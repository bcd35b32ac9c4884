// The decision history's sink suite (test/unit/history-sink.suite.ts) on a Redis Cluster of three
// primaries: each account's stream and address buckets live in its own slot, written by one
// pipeline per account.
import { Redis } from 'ioredis';
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';
import { clusterClient } from '../helpers/stores.js';
import type { RedisClient } from '../../src/store/redis/connect.js';
import { RedisHistory } from '../../src/history/redis-history.js';
import type { HistorySink } from '../../src/history/sink.js';
import { historySinkSuite } from '../unit/history-sink.suite.js';
import { dumpRedisKeys } from '../helpers/history-dump.js';
import { randomBytes } from 'node:crypto';

let cluster: TestCluster | undefined;
const clients: Array<RedisClient | Redis> = [];
/** Each sink's key prefix (dump reads its keys). */
const prefixes = new WeakMap<HistorySink, string>();

historySinkSuite({
  name: 'redis cluster',
  async setup() {
    cluster = await startCluster();
  },
  async make(r) {
    const prefix = `h${randomBytes(4).toString('hex')}:`;
    const c = await clusterClient(cluster!.nodes, prefix);
    clients.push(c);
    const s = new RedisHistory(c, r);
    prefixes.set(s, prefix);
    return s;
  },
  async teardown() {
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  },
  async dump(s, at) {
    // each primary's keys, read on it
    const servers = cluster!.nodes.map((n) => new Redis(`redis://${n}`));
    clients.push(...servers);
    return dumpRedisKeys(servers, prefixes.get(s)!, at);
  },
});
