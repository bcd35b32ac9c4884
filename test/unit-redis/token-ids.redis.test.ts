// Token ids on Redis come in per-account runs of 64 (keys.tokenRecord buckets fill): ids stay
// unique under concurrent creation, a burst keeps one run per account (the ids it used are
// consecutive runs, so its records share few buckets), and accounts creating at once get runs of their own.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { newTokenRecord } from '../../src/domain/tokens.js';
import { newSecret } from '../../src/domain/secrets.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const NOW = Date.parse('2026-11-29T12:00:00Z');

describe('token ids on redis', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.stop());

  it('300 concurrent creates in each of two accounts: unique ids, runs of 64 per account, few buckets, at most one partial run left', async () => {
    const client = new Redis(server.url, { keyPrefix: server.prefix(), enableOfflineQueue: false, lazyConnect: true });
    await client.connect();
    const s = new RedisStore(client, {});
    const made: Record<string, number[]> = { A: [], B: [] };
    await Promise.all(
      Array.from({ length: 600 }, async (_, i) => {
        const acct = i % 2 === 0 ? 'A' : 'B';
        const t = await s.createToken(newTokenRecord('subscribe', acct, { label: `t${i}`, streams: [{ streamName: 'cam1' }] }, newSecret(), NOW));
        made[acct].push(t.id);
      }),
    );
    const all = [...made.A, ...made.B];
    assert.equal(new Set(all).size, 600, 'every id unique');
    for (const acct of ['A', 'B']) {
      const ids = made[acct];
      // each id's run (64 ids, starting at 1 + a multiple of 64: one record bucket) is the account's alone
      const runs = new Set(ids.map((id) => Math.floor((id - 1) / 64)));
      const other = new Set(made[acct === 'A' ? 'B' : 'A'].map((id) => Math.floor((id - 1) / 64)));
      assert.ok([...runs].every((r) => !other.has(r)), `${acct}: no run shared with the other account`);
      // 300 ids in runs of 64 fill 5 runs; runs taken at the same moment and not kept are skipped, never half used
      assert.equal(runs.size, 5, `${acct}: ${runs.size} runs`);
      assert.ok((await client.llen(`{a:${acct}}:tids`)) < 64);
      const buckets = await client.keys(`${client.options.keyPrefix}{a:${acct}}:tr:*`);
      assert.equal(buckets.length, 5, `${acct}: one record bucket per run (${buckets.join(" ")})`);
      const found = await s.listTokens(acct, 'subscribe', { sortBy: 'AddedOn', descending: false, page: 1, itemsOnPage: 1000 });
      assert.equal(found.length, 300);
    }
    await s.close();
  });
});
