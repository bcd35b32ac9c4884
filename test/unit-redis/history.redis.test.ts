// The decision history's sink suite (test/unit/history-sink.suite.ts) on Redis, and what only Redis
// does: client addresses in hash buckets that expire once their addresses are addressSeconds old,
// and erased with the account's stream.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisHistory, addressBucketMs } from '../../src/history/redis-history.js';
import type { HistorySink } from '../../src/history/sink.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { dumpRedisKeys } from '../helpers/history-dump.js';
import { entry, historySinkSuite, RETENTION } from '../unit/history-sink.suite.js';

let server: TestRedis | undefined;
const clients: Redis[] = [];
const connect = async (prefix: string) => {
  const c = new Redis(server!.url, { keyPrefix: prefix, lazyConnect: true });
  await c.connect();
  clients.push(c);
  return c;
};
/** Each sink's key prefix (dump reads its keys). */
const prefixes = new WeakMap<HistorySink, string>();

historySinkSuite({
  name: 'redis',
  async setup() {
    server = await startRedis();
  },
  async make(r) {
    const prefix = server!.prefix();
    const s = new RedisHistory(await connect(prefix), r);
    prefixes.set(s, prefix);
    return s;
  },
  async teardown() {
    for (const c of clients) c.disconnect();
    await server?.stop();
  },
  async dump(s, at) {
    return dumpRedisKeys([await connect('')], prefixes.get(s)!, at);
  },
});

it('redis: addresses expire with their bucket, and go with the account', async () => {
  const redis = await startRedis();
  const prefix = redis.prefix();
  const c = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  await c.connect();
  try {
    const s = new RedisHistory(c, RETENTION);
    const now = Date.now();
    const e = entry('X1', now, { clientIp: '198.51.100.4' });
    await s.append([e]);
    assert.equal((await s.query('X1', { limit: 1 })).items[0].clientIp, '198.51.100.4');
    const width = addressBucketMs(RETENTION.addressSeconds);
    const key = `{a:X1}:hda:${Math.floor(now / width)}`;
    const pttl = await c.pttl(key);
    const expiresAt = (Math.floor(now / width) + 1) * width + RETENTION.addressSeconds * 1000;
    assert.ok(pttl > 0 && Math.abs(Date.now() + pttl - expiresAt) < 2000, `pttl ${pttl}`);
    // the stored entry holds no address
    const [[, fields]] = (await c.xrange('{a:X1}:hd', '-', '+')) as Array<[string, string[]]>;
    assert.equal(JSON.parse(fields[1]).clientIp, undefined);
    await s.deleteAccount('X1', Date.now());
    assert.equal(await c.exists(key), 0);
    assert.equal(await c.exists('{a:X1}:hd'), 0);
  } finally {
    c.disconnect();
    await redis.stop();
  }
});

it('redis: an erasure on one instance holds back what another instance had queued before it', async () => {
  const redis = await startRedis();
  const prefix = redis.prefix();
  const a = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  const b = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  await a.connect();
  await b.connect();
  try {
    const here = new RedisHistory(a, RETENTION);
    const there = new RedisHistory(b, RETENTION);
    const now = Date.now();
    // made on the other instance before the erasure, written after it
    const queued = entry('X2', now - 500);
    await here.deleteAccount('X2', now);
    await there.append([queued, entry('X3', now - 500)]);
    assert.deepEqual((await here.query('X2', { limit: 5 })).items, []);
    assert.equal((await here.query('X3', { limit: 5 })).items.length, 1, 'other accounts are written');
    // what is made after the erasure is kept
    const later = entry('X2', now + 10);
    await there.append([later]);
    assert.deepEqual((await here.query('X2', { limit: 5 })).items.map((e) => e.decisionId), [later.decisionId]);
  } finally {
    a.disconnect();
    b.disconnect();
    await redis.stop();
  }
});
