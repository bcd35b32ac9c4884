// Hourly usage is bounded (docs/operations.md#hourly-usage-retention), and usage kept by an earlier
// build answers the account and tracking/streams reads: on SQLite the usage writes delete expired
// hourly rows (injected clock), on Redis the hourly keys expire at their keepUntilMs by the server's
// clock, and upgrade() builds the account totals and tracking-id sets for older data.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { UsageRecord } from '../../src/store/store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';
import { clusterClient } from '../helpers/stores.js';

const T = Date.parse('2026-03-01T12:00:00Z');
const report = (streamName: string, extra: Partial<UsageRecord> = {}): UsageRecord => ({
  accountId: 'A',
  trackingId: 'a',
  tokenId: 1,
  streamName,
  day: '2026-03-01',
  bytesOut: 1,
  bytesIn: 0,
  ...extra,
});

/** Closes what a test opened, after its suite, whether it passed or not. */
const closers: Array<() => unknown> = [];
const closeAll = async () => {
  for (const c of closers.splice(0)) await c();
};

describe('hourly usage retention: sqlite', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sg-usage-hourly-'));
  });
  after(async () => {
    await closeAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the usage writes delete hourly rows past their keepUntilMs, 500 per write, once a minute; reads leave them out at once', async () => {
    const file = path.join(dir, 'prune.db');
    let clock = T;
    const s = new SqliteStore({ file, synchronous: 'NORMAL', now: () => clock });
    const raw = new Database(file, { readonly: true });
    closers.push(() => raw.close(), () => s.close());
    const hourlyRows = () => (raw.prepare('SELECT COUNT(*) AS n FROM usage_hourly').get() as { n: number }).n;
    for (let i = 0; i < 1200; i++) await s.addUsage(report(`s${i}`, { hourly: { hour: '2026-03-01T10', keepUntilMs: T + 1000 } }));
    await s.addUsage(report('kept', { bytesOut: 7, hourly: { hour: '2026-03-01T11', keepUntilMs: T + 10 * 86400000 } }));
    assert.equal(hourlyRows(), 1201);
    assert.deepEqual(await s.usageAccount('A', 'hour', '2026-03-01T00', '2026-03-02T00'), [
      { period: '2026-03-01T10', bytesOut: 1200, bytesIn: 0 },
      { period: '2026-03-01T11', bytesOut: 7, bytesIn: 0 },
    ]);

    clock = T + 2000; // expired, the next prune not due yet
    assert.deepEqual(await s.usageAccount('A', 'hour', '2026-03-01T00', '2026-03-02T00'), [{ period: '2026-03-01T11', bytesOut: 7, bytesIn: 0 }]);
    assert.deepEqual(await s.usageHourly('A', { streamNames: ['s0', 'kept'] }, '2026-03-01T00', '2026-03-02T00'), [{ hour: '2026-03-01T11', streamName: 'kept', bytesOut: 7, bytesIn: 0 }]);
    await s.addUsage(report('daily-only'));
    assert.equal(hourlyRows(), 1201, 'the writes look once a minute');

    clock = T + 61000;
    const left: number[] = [];
    for (let i = 0; i < 4; i++) {
      await s.addUsage(report('daily-only'));
      left.push(hourlyRows());
    }
    assert.deepEqual(left, [701, 201, 1, 1], 'a full batch lets the next write go on; a short one waits a minute');
    assert.deepEqual(await s.usageHourly('A', { trackingIds: ['a'] }, '2026-03-01T00', '2026-03-02T00'), [
      { hour: '2026-03-01T11', trackingId: 'a', streamName: 'kept', bytesOut: 7, bytesIn: 0 },
    ]);
    // the days keep everything
    assert.deepEqual(await s.usageAccount('A', 'day', '2026-03-01', '2026-03-02'), [{ period: '2026-03-01', bytesOut: 1200 + 7 + 5, bytesIn: 0 }]);
  });

  it('a file written before the hourly table and the account index answers account and tracking/streams reads on open', async () => {
    const file = path.join(dir, 'old.db');
    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    await s.addUsage(report('cam1', { bytesOut: 5, bytesIn: 1 }));
    await s.addUsage(report('cam1', { trackingId: undefined, tokenId: 4, bytesOut: 70 }));
    await s.close();
    // as the earlier build left it
    const old = new Database(file);
    old.exec('DROP TABLE usage_hourly; DROP INDEX usage_by_day;');
    old.close();
    const reopened = new SqliteStore({ file, synchronous: 'NORMAL' });
    closers.push(() => reopened.close());
    assert.deepEqual(await reopened.usageAccount('A', 'day', '2026-03-01', '2026-03-02'), [{ period: '2026-03-01', bytesOut: 75, bytesIn: 1 }]);
    assert.deepEqual(
      (await reopened.usageDaily('A', { streamTracking: ['cam1'] }, '2026-03-01', '2026-03-02')).sort((x, y) => (x.trackingId! < y.trackingId! ? -1 : 1)),
      [
        { day: '2026-03-01', trackingId: '', streamName: 'cam1', bytesOut: 70, bytesIn: 0 },
        { day: '2026-03-01', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 1 },
      ],
    );
    await reopened.addUsage(report('cam1', { hourly: { hour: '2026-03-01T09', keepUntilMs: Date.now() + 86400000 } }));
    assert.deepEqual(await reopened.usageAccount('A', 'hour', '2026-03-01T00', '2026-03-02T00'), [{ period: '2026-03-01T09', bytesOut: 1, bytesIn: 0 }]);
  });
});

describe('hourly usage retention and the usage index upgrade: redis', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await closeAll();
    await server.stop();
  });

  const open = async (now?: () => number) => {
    const prefix = server.prefix();
    const client = new Redis(server.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    const plain = new Redis(server.url, { enableOfflineQueue: false, lazyConnect: true });
    await plain.connect();
    const s = new RedisStore(client, { now });
    closers.push(() => plain.disconnect(), () => s.close());
    return { s, client, plain, prefix };
  };

  it('the hourly keys expire when their keepUntilMs ends (EXPIREAT); the daily ones are kept 400 days', async () => {
    const { s, plain, prefix } = await open();
    const keepUntilMs = Date.now() + 5 * 86400000 + 123;
    await s.addUsage(report('cam1', { hourly: { hour: '2026-03-01T10', keepUntilMs } }));
    const at = Math.ceil(keepUntilMs / 1000);
    assert.equal(await plain.call('EXPIRETIME', `${prefix}{a:A}:u:t:a:2026-03-01T10`), at);
    assert.equal(await plain.call('EXPIRETIME', `${prefix}{a:A}:u:s:2026-03-01T10`), at);
    const dailyTtl = await plain.ttl(`${prefix}{a:A}:u:t:a:2026-03-01`);
    assert.ok(dailyTtl > 399 * 86400 && dailyTtl <= 400 * 86400, String(dailyTtl));
    assert.ok((await plain.ttl(`${prefix}{a:A}:u:st:2026-03-01:cam1`)) > 399 * 86400);
  });

  it("an hour whose keepUntilMs has passed by the server's clock is gone at once, though the store's clock is behind", async () => {
    const { s } = await open(() => Date.now() - 10 * 86400000);
    await s.addUsage(report('cam1', { bytesOut: 9, hourly: { hour: '2026-03-01T10', keepUntilMs: Date.now() - 5 * 86400000 } }));
    assert.deepEqual(await s.usageHourly('A', { streamNames: ['cam1'] }, '2026-03-01T00', '2026-03-02T00'), []);
    assert.deepEqual(await s.usageAccount('A', 'hour', '2026-03-01T00', '2026-03-02T00'), []);
    assert.deepEqual(await s.usageAccount('A', 'day', '2026-03-01', '2026-03-02'), [{ period: '2026-03-01', bytesOut: 9, bytesIn: 0 }]);
  });

  it('upgrade() gives usage of an earlier build its account totals and tracking-id sets, exactly, once', async () => {
    const { s, client, plain, prefix } = await open();
    await s.addUsage(report('cam1', { bytesOut: 5, bytesIn: 1 }));
    await s.addUsage(report('cam1', { trackingId: 'b', bytesOut: 6 }));
    await s.addUsage(report('cam2', { bytesOut: 7 }));
    await s.addUsage(report('cam1', { trackingId: undefined, tokenId: 4, bytesOut: 70 }));
    await s.addUsage(report('cam1', { day: '2026-03-02', trackingId: 'c', bytesOut: 8 }));
    await s.addUsage(report('cam1', { accountId: 'B', bytesOut: 900 }));
    // as the earlier build left it: no total fields, no tracking-id sets, no upgrade mark
    for (const [account, day] of [['A', '2026-03-01'], ['A', '2026-03-02'], ['B', '2026-03-01']]) await client.hdel(`{a:${account}}:u:s:${day}`, '\u0000o', '\u0000i');
    const sets = await plain.keys(`${prefix}*:u:st:*`);
    assert.equal(sets.length, 4);
    await plain.del(...sets);
    assert.deepEqual(await s.usageAccount('A', 'day', '2026-03-01', '2026-03-03'), []);

    await s.upgrade();
    assert.equal(await s.getMeta('usage-index'), '1');
    assert.deepEqual(
      (await s.usageAccount('A', 'day', '2026-03-01', '2026-03-03')).sort((x, y) => (x.period < y.period ? -1 : 1)),
      [
        { period: '2026-03-01', bytesOut: 5 + 6 + 7 + 70, bytesIn: 1 },
        { period: '2026-03-02', bytesOut: 8, bytesIn: 0 },
      ],
    );
    assert.deepEqual(await s.usageAccount('B', 'day', '2026-03-01', '2026-03-03'), [{ period: '2026-03-01', bytesOut: 900, bytesIn: 0 }]);
    const byTracking = (rows: Array<{ day: string; trackingId?: string }>) => rows.sort((x, y) => (`${x.day}${x.trackingId}` < `${y.day}${y.trackingId}` ? -1 : 1));
    assert.deepEqual(byTracking(await s.usageDaily('A', { streamTracking: ['cam1', 'cam2'] }, '2026-03-01', '2026-03-03')), [
      { day: '2026-03-01', trackingId: '', streamName: 'cam1', bytesOut: 70, bytesIn: 0 },
      { day: '2026-03-01', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 1 },
      { day: '2026-03-01', trackingId: 'a', streamName: 'cam2', bytesOut: 7, bytesIn: 0 },
      { day: '2026-03-01', trackingId: 'b', streamName: 'cam1', bytesOut: 6, bytesIn: 0 },
      { day: '2026-03-02', trackingId: 'c', streamName: 'cam1', bytesOut: 8, bytesIn: 0 },
    ]);
    const setTtl = await plain.pttl(`${prefix}{a:A}:u:st:2026-03-01:cam1`);
    assert.ok(setTtl > 399 * 86400000, `a set is kept as long as its bucket: ${setTtl}`);
    // writes after the upgrade add to the recomputed totals; a second upgrade() changes nothing
    await s.addUsage(report('cam1', { bytesOut: 1000 }));
    await s.upgrade();
    assert.deepEqual(await s.usageAccount('A', 'day', '2026-03-01', '2026-03-02'), [{ period: '2026-03-01', bytesOut: 1088, bytesIn: 1 }]);
    await client.hdel('{a:A}:u:s:2026-03-02', '\u0000o', '\u0000i');
    await s.upgrade();
    assert.deepEqual(await s.usageAccount('A', 'day', '2026-03-02', '2026-03-03'), [], 'done once: a later start does not scan again');
  });
});

describe('the usage index upgrade: redis cluster', () => {
  let cluster: TestCluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await closeAll();
    await cluster.stop();
  });

  it("upgrade() scans every master and indexes each account's old usage in its own slot", async () => {
    const client = await clusterClient(cluster.nodes, 'up:');
    const s = new RedisStore(client, {});
    closers.push(() => s.close());
    // accounts spread over the slots of the three masters
    const accounts = Array.from({ length: 12 }, (_, i) => `ACC${i}`);
    for (const [i, accountId] of accounts.entries()) {
      await s.addUsage(report('cam1', { accountId, bytesOut: 10 + i }));
      await s.addUsage(report('cam1', { accountId, trackingId: undefined, tokenId: 3, bytesOut: 1000 }));
      // as the earlier build left it
      await client.hdel(`{a:${accountId}}:u:s:2026-03-01`, '\u0000o', '\u0000i');
      await client.del(`{a:${accountId}}:u:st:2026-03-01:cam1`);
    }
    await s.upgrade();
    for (const [i, accountId] of accounts.entries()) {
      assert.deepEqual(await s.usageAccount(accountId, 'day', '2026-03-01', '2026-03-02'), [{ period: '2026-03-01', bytesOut: 1010 + i, bytesIn: 0 }], accountId);
      assert.deepEqual(
        (await s.usageDaily(accountId, { streamTracking: ['cam1'] }, '2026-03-01', '2026-03-02')).map((r) => [r.trackingId, r.bytesOut]).sort(),
        [
          ['', 1000],
          ['a', 10 + i],
        ],
        accountId,
      );
    }
  });
});
