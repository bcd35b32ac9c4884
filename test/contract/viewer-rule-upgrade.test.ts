// Data written by an earlier build indexed only active publish tokens as setting viewer rules. A
// disabled securing token in such data must secure its streams after the upgrade, on both stores.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { newTokenRecord } from '../../src/domain/tokens.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const securing = (accountId: string, isActive: boolean) => {
  const t = newTokenRecord('publish', accountId, { label: 'p', streams: [{ streamName: 'live1' }], subscribeRequiresAuth: true, allowedCountries: ['FR'] }, 'v'.repeat(64), NOW);
  return Object.assign(t, { isActive });
};

describe('viewer-rule index upgrade: sqlite', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sg-upgrade-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a file of user_version 1 gets the flags of disabled publish tokens back on open', async () => {
    const file = path.join(dir, 'old.db');
    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    const t = await s.createToken(securing('ACCT', false));
    await s.close();
    // as the earlier build stored it: a disabled token set no viewer-rule flag
    const raw = new Database(file);
    raw.prepare('UPDATE tokens SET securing = 0 WHERE id = ?').run(t.id);
    raw.pragma('user_version = 1');
    raw.close();
    const reopened = new SqliteStore({ file, synchronous: 'NORMAL' });
    assert.deepEqual((await reopened.securingTokens('ACCT')).map((x) => x.id), [t.id]);
    assert.deepEqual((await reopened.viewerRuleTokens('ACCT')).map((x) => x.id), [t.id]);
    await reopened.close();
  });
});

describe('viewer-rule index upgrade: redis', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.stop());

  it('upgrade() puts disabled publish tokens with viewer rules into the index, once', async () => {
    const client = new Redis(server.url, { keyPrefix: server.prefix(), enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    const s = new RedisStore(client, {});
    await s.createAccount({ id: 'ACCT', name: 'a', secureViewer: false, secretHash: 'h'.repeat(64), createdOn: new Date(NOW).toISOString() });
    const t = await s.createToken(securing('ACCT', false));
    // as the earlier build left it: not in the viewer-rule set, no upgrade mark
    await client.srem('{a:ACCT}:securing', String(t.id));
    assert.deepEqual(await s.securingTokens('ACCT'), []);
    await s.upgrade();
    assert.deepEqual((await s.securingTokens('ACCT')).map((x) => x.id), [t.id]);
    assert.equal(await s.getMeta('viewer-rule-index'), '2');
    // done once: a later start does not scan again
    await client.srem('{a:ACCT}:securing', String(t.id));
    await s.upgrade();
    assert.deepEqual(await s.securingTokens('ACCT'), []);
    await s.close();
  });
});
