// Redis data written by an earlier build: token records as string keys of their own with long
// field names, list index members with 16 decimal digits, and token value hints keyed by 60 hex
// digits as text. All are read after the upgrade (the records moved into their buckets as they
// are, the members and hints rewritten), and the next write stores the CBOR record.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { decode as cborDecode } from 'cbor-x';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { newTokenRecord, tokenHash } from '../../src/domain/tokens.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');

describe('token layout upgrade: redis', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.stop());

  it('long-named records and 60-digit hints of an earlier build are found after upgrade(); a write stores the CBOR record', async () => {
    const client = new Redis(server.url, { keyPrefix: server.prefix(), enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    const s = new RedisStore(client, {});
    await s.createAccount({ id: 'ACCT', name: 'a', secureViewer: false, secretHash: 'h'.repeat(64), createdOn: new Date(NOW).toISOString() });
    const value = 'c'.repeat(64);
    const t = await s.createToken(newTokenRecord('subscribe', 'ACCT', { label: 'old', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'tr' } }, value, NOW));
    // as the earlier build stored them
    const hash = tokenHash(value);
    await client.hdel(`{a:ACCT}:tr:${Math.floor((t.id - 1) / 64)}`, String((t.id - 1) % 64));
    await client.set(`{a:ACCT}:t:${t.id}`, `1:${JSON.stringify({ kind: 'subscribe', label: 'old', token: value, addedOn: t.addedOn, streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'tr' } })}`);
    // list index members with 16 decimal digits
    const legacyId = String(t.id).padStart(16, '0');
    const newId = t.id.toString(36).padStart(11, '0');
    await client.zrem('{a:ACCT}:tokens:subscribe:byName', `old\u0000${newId}`);
    await client.zadd('{a:ACCT}:tokens:subscribe:byName', 0, `old\u0000${legacyId}`);
    await client.zrem('{a:ACCT}:tokens:subscribe:byAdded', newId);
    await client.zadd('{a:ACCT}:tokens:subscribe:byAdded', NOW, legacyId);
    // a bound-address key of the same token is left as it is
    await client.zadd(`{a:ACCT}:t:${t.id}:bound`, 1, '192.0.2.1');
    await client.hdel(`tv:${hash.slice(0, 4)}`, Buffer.from(hash.slice(4, 28), 'hex'));
    await client.hset(`tv:${hash.slice(0, 4)}`, hash.slice(4), `ACCT:${t.id}`);
    assert.equal(await s.findTokenByHash(hash), null, 'the long hint is not read as it is');
    await s.upgrade();
    assert.deepEqual(await s.findTokenByHash(hash), t);
    assert.equal(await client.exists(`{a:ACCT}:t:${t.id}`), 0, 'the record key of the earlier build is gone');
    assert.deepEqual(await client.zrange(`{a:ACCT}:t:${t.id}:bound`, 0, -1), ['192.0.2.1']);
    assert.equal(await s.getMeta('token-buckets'), '1');
    assert.deepEqual(await client.zrange('{a:ACCT}:tokens:subscribe:byName', 0, -1), [`old\u0000${newId}`]);
    assert.deepEqual(await client.zrange('{a:ACCT}:tokens:subscribe:byAdded', 0, -1, 'WITHSCORES'), [newId, String(NOW)]);
    for (const sortBy of ['Name', 'AddedOn'] as const) {
      assert.deepEqual((await s.listTokens('ACCT', 'subscribe', { sortBy, descending: false, page: 1, itemsOnPage: 10 })).map((x) => x.id), [t.id]);
    }
    assert.deepEqual(await client.hkeysBuffer(`tv:${hash.slice(0, 4)}`), [Buffer.from(hash.slice(4, 28), 'hex')]);
    assert.equal(await s.getMeta('token-value-hints'), '2');
    // the next write stores the record in the short layout
    const updated = await s.updateToken('ACCT', 'subscribe', t.id, (cur) => ({ next: Object.assign({}, cur, { label: 'new' }), clearBound: false }));
    assert.equal(updated?.label, 'new');
    const raw = (await client.hgetBuffer(`{a:ACCT}:tr:${Math.floor((t.id - 1) / 64)}`, String((t.id - 1) % 64))) ?? Buffer.alloc(0);
    assert.equal(raw.subarray(0, 2).toString(), '2:');
    // (the change kept updatedOn at addedOn, so it is left out)
    assert.deepEqual(cborDecode(raw.subarray(2)), [0, 'new', Buffer.from(value, 'hex'), NOW, ['cam1'], { r: 'tr' }]);
    assert.deepEqual(await s.getToken('ACCT', 'subscribe', t.id), updated);
    await s.close();
  });
});
