// The decision history's sink suite (test/unit/history-sink.suite.ts) on a Redis Cluster of three
// primaries: each account's stream and address buckets live in its own slot, written by one
// pipeline per account.
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';
import { clusterClient } from '../helpers/stores.js';
import type { RedisClient } from '../../src/store/redis/connect.js';
import { RedisHistory } from '../../src/history/redis-history.js';
import { historySinkSuite } from '../unit/history-sink.suite.js';
import { randomBytes } from 'node:crypto';

let cluster: TestCluster | undefined;
const clients: RedisClient[] = [];

historySinkSuite({
  name: 'redis cluster',
  async setup() {
    cluster = await startCluster();
  },
  async make(r) {
    const c = await clusterClient(cluster!.nodes, `h${randomBytes(4).toString('hex')}:`);
    clients.push(c);
    return new RedisHistory(c, r);
  },
  async teardown() {
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  },
});
