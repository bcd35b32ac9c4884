// A sealed change of an account on Redis races another sealed change of the same account made
// between its reads: its entry still records what it changed, diffed from the record it replaced,
// not from an older one (docs/architecture.md#the-audit-chain).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { ACCOUNT, API_SECRET, AuditLog } from '../../src/audit/log.js';
import { keys } from '../../src/store/redis/keys.js';
import { startRedis } from '../helpers/redis.js';

const KEY = 'race-audit-key-0123456789abcdefghijklmnop';
const OPTS = { retentionDays: 0, keepAfterAccountDeleteDays: 0, headLogSeconds: 300 };
const BY = { actor: 'admin', address: null, requestId: null };

it('redis: an account change raced by another between its reads records the change it made', async () => {
  const redis = await startRedis();
  const prefix = redis.prefix();
  const client = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  await client.connect();
  const other = new Redis(redis.url, { keyPrefix: prefix, lazyConnect: true });
  await other.connect();
  const store = new RedisStore(client);
  const rival = new RedisStore(other);
  try {
    const log = new AuditLog(store, KEY, OPTS, pino({ level: 'silent' }));
    const id = 'RACE01';
    await store.createAccount({ id, name: 'race', createdOn: '2026-11-27T12:00:00.000Z', secureViewer: false, secretHash: 'a'.repeat(64) }, log.sealer(BY, id, 'account', ACCOUNT));
    // the next read of the account's record is followed, before the change's script, by a rival's change
    let rivalChange: (() => Promise<unknown>) | undefined;
    const hgetall = client.hgetall.bind(client);
    (client as unknown as { hgetall: (k: string) => Promise<Record<string, string>> }).hgetall = async (k: string) => {
      const read = await hgetall(k);
      const r = rivalChange;
      rivalChange = undefined;
      if (k === keys.account(id) && r) await r();
      return read;
    };
    const getAccount = store.getAccount.bind(store);
    store.getAccount = async (x: string) => {
      const read = await getAccount(x);
      const r = rivalChange;
      rivalChange = undefined;
      if (r) await r();
      return read;
    };

    rivalChange = () => rival.updateAccount(id, { secureViewer: true }, log.sealer(BY, id, 'account', ACCOUNT));
    await store.updateAccount(id, { secureViewer: false }, log.sealer(BY, id, 'account', ACCOUNT));
    rivalChange = () => rival.setAccountSecret(id, 'b'.repeat(64), undefined, log.sealer(BY, id, 'apiSecret', API_SECRET));
    await store.setAccountSecret(id, 'a'.repeat(64), undefined, log.sealer(BY, id, 'apiSecret', API_SECRET));

    const entries = (await log.list(id, { limit: 10, ascending: true })).entries.map((e) => [e.seq, e.resource, e.action, e.changes]);
    assert.deepEqual(entries, [
      [1, 'account', 'create', entries[0][3]],
      [2, 'account', 'update', { secureViewer: { from: false, to: true } }],
      [3, 'account', 'update', { secureViewer: { from: true, to: false } }],
      [4, 'apiSecret', 'update', { secretHash: { from: '***', to: 'changed' } }],
      [5, 'apiSecret', 'update', { secretHash: { from: '***', to: 'changed' } }],
    ]);
    assert.equal((await store.getAccount(id))?.secureViewer, false);
    assert.equal((await log.verify(id)).ok, true);
  } finally {
    await store.close();
    await rival.close();
    await redis.stop();
  }
});
