// Verifying a Redis audit chain reads its sorted set a page at a time: an entry written into the
// store with the same seq as the last entry of a page is still read, and verify names it
// (docs/api.md#audit-log).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { AuditLog } from '../../src/audit/log.js';
import { keys } from '../../src/store/redis/keys.js';
import { startRedis } from '../helpers/redis.js';

const KEY = 'pages-audit-key-0123456789abcdefghijklmn';
const OPTS = { retentionDays: 0, keepAfterAccountDeleteDays: 0, headLogSeconds: 300 };

it('redis: an entry slipped in beside the last entry of a page is read, and named', async () => {
  const redis = await startRedis();
  const prefix = redis.prefix();
  const client = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  await client.connect();
  const raw = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  await raw.connect();
  const store = new RedisStore(client);
  try {
    const log = new AuditLog(store, KEY, OPTS, pino({ level: 'silent' }));
    const by = { actor: 'admin', address: null, requestId: null };
    for (let i = 1; i <= 502; i++) await log.note(by, 'PG0001', 'session', `s${i}`, 'cut', { reason: { to: `r${i}` } });
    assert.equal((await log.verify('PG0001')).ok, true);
    // a copy of entry 500 (the last of the first page of 500) with other content, under the same seq
    const [text] = await raw.zrangebyscore(keys.auditLog('PG0001'), 500, 500);
    // sorted after the real one (a zset orders equal scores by their bytes): the page ends with the real entry
    const twin = text.replace('"s500"', '"s500~"');
    assert.notEqual(twin, text);
    await raw.zadd(keys.auditLog('PG0001'), 500, twin);
    const v = await log.verify('PG0001');
    assert.equal(v.ok, false);
    assert.equal((v as { broken?: { seq: number } }).broken?.seq, 500, JSON.stringify(v));
  } finally {
    await store.close();
    raw.disconnect();
    await redis.stop();
  }
});
