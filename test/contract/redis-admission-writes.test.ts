// What an admission writes besides its own records on one Redis server: the connection's pointer and
// the sessions gauge's count (inside the admission script there, one command per admission), and the
// gauge's list of count names only once a minute per name (not on every admission). Watched with
// MONITOR, so every command the store sends or its scripts run is counted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/sessions.js';
import { until } from '../helpers/until.js';

describe('redis: an admission’s side writes', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
  });

  it('pointer and gauge count on every admission; the gauge’s count name once a minute', async () => {
    const prefix = server.prefix();
    const client = new Redis(server.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
    await client.connect();
    let clock = Date.parse('2026-05-01T10:00:00Z');
    const store = new RedisStore(client, { now: () => clock });
    const watcher = new Redis(server.url);
    const monitor = await watcher.monitor();
    const seen: string[][] = [];
    const fromScripts: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (!args.some((a) => a.startsWith(prefix))) return;
      seen.push(args);
      if (source === 'lua') fromScripts.push(args);
    });
    try {
      const count = (cmd: string, key: string) => seen.filter((a) => a[0].toLowerCase() === cmd && a[1] === prefix + key).length;
      const admit = (sessionId: string) =>
        store.admitSession(sessionRecord({ sessionId, id: `id-${sessionId}`, lastSeenOn: new Date(clock).toISOString() }, clock), 3600, {});

      for (const id of ['c1', 'c2', 'c3']) assert.deepEqual(await admit(id), { admitted: true, replaced: [] });
      await until(() => count('zadd', 'ssc:mediamtx:subscribe') === 3, 2000, 'three gauge counts');
      for (const id of ['c1', 'c2', 'c3']) assert.equal(count('set', `sess:mediamtx:${id}`), 1, `pointer of ${id}`);
      // the first runs as EVAL (ioredis's fallback when the server does not hold the script yet)
      assert.equal(seen.filter((a) => ['evalsha', 'eval'].includes(a[0].toLowerCase())).length, 3, 'one script command per admission');
      const byScript = (cmd: string, key: string) => fromScripts.filter((a) => a[0].toLowerCase() === cmd && a[1] === prefix + key).length;
      for (const id of ['c1', 'c2', 'c3']) assert.equal(byScript('set', `sess:mediamtx:${id}`), 1, `pointer of ${id} written by the admission script`);
      assert.equal(byScript('zadd', 'ssc:mediamtx:subscribe'), 3, 'gauge entries written by the admission script');
      assert.equal(count('sadd', 'ssc'), 1, 'the count name once');
      assert.deepEqual(await store.sessionCounts(), [{ caller: 'mediamtx', action: 'subscribe', count: 3 }]);
      assert.equal((await store.getSession('mediamtx', 'c2'))?.id, 'id-c2');

      clock += 59_000;
      await admit('c4');
      await until(() => count('zadd', 'ssc:mediamtx:subscribe') === 4, 2000, 'a fourth gauge count');
      assert.equal(count('sadd', 'ssc'), 1, 'not again within the minute');

      // a minute on: the name again, so a Redis that lost the set (flushed, replaced) hears it
      await client.del('ssc');
      clock += 1_000;
      await admit('c5');
      await until(() => count('sadd', 'ssc') === 2, 2000, 'the count name again after a minute');
      assert.deepEqual(await store.sessionCounts(), [{ caller: 'mediamtx', action: 'subscribe', count: 5 }]);

      // a counted use moves the token's use count, not the account version: nothing is published
      const counted = sessionRecord({ sessionId: 'c6', id: 'id-c6', tokenId: 7, lastSeenOn: new Date(clock).toISOString() }, clock);
      assert.deepEqual(await store.admitSession(counted, 3600, { maxUses: 10 }), { admitted: true, replaced: [] });
      await until(() => count('zadd', 'ssc:mediamtx:subscribe') === 6, 2000, 'the counted admission');
      assert.equal(count('incr', '{a:acc}:t:7:uses'), 1, 'the use counted (commands run by the script included)');
      assert.deepEqual(seen.filter((a) => a[0].toLowerCase() === 'publish'), [], 'no version message');
      assert.equal(await client.get('{a:acc}:ver'), null, 'the account version untouched');
    } finally {
      monitor.disconnect();
      watcher.disconnect();
      await store.close();
    }
  });
});
