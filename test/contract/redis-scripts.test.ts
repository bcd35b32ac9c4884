// session-admit.lua's "ask for more keys" protocol (docs/architecture.md#redis-scripts), on one Redis
// server and on a Redis Cluster: an admission whose script finds records it was given no keys for
// (the connection's earlier record under another token and stream, publishers to replace) writes
// nothing, names them, and is called again with their keys; the script verifies them again, and
// the calls are bounded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { RedisClient } from '../../src/store/redis/connect.js';
import { clusterClient } from '../helpers/stores.js';
import { keys } from '../../src/store/redis/keys.js';
import { Reply } from '../../src/store/redis/codes.js';
import { ADMIT_ATTEMPTS } from '../../src/store/redis/session-admit.js';
import type { Session } from '../../src/store/store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startCluster, type TestCluster } from '../helpers/redis-cluster.js';
import { sessionRecord } from '../helpers/sessions.js';
import { until } from '../helpers/until.js';

interface Backend {
  name: string;
  setup(): Promise<void>;
  /** A connected client with this key prefix. */
  client(prefix: string): Promise<RedisClient>;
  teardown(): Promise<void>;
}

function standalone(): Backend {
  let server: TestRedis | undefined;
  return {
    name: 'redis',
    async setup() {
      server = await startRedis();
    },
    async client(prefix) {
      const c = new Redis(server!.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
      await c.connect();
      return c;
    },
    async teardown() {
      await server?.stop();
    },
  };
}

function cluster(): Backend {
  let c: TestCluster | undefined;
  return {
    name: 'redis-cluster',
    async setup() {
      c = await startCluster();
    },
    async client(prefix) {
      return clusterClient(c!.nodes, prefix);
    },
    async teardown() {
      await c?.stop();
    },
  };
}

/** An instance: a store, its client, and the session-admit.lua replies it got, in order. */
interface Instance {
  store: RedisStore;
  client: RedisClient;
  replies: unknown[];
  /** Runs after each reply, before the store reads it. */
  afterReply?: (reply: unknown) => Promise<void>;
}


for (const backend of [standalone(), cluster()]) {
  describe(`session-admit.lua asks for the keys it lacks: ${backend.name}`, () => {
    const open: Instance[] = [];
    before(async () => {
      await backend.setup();
    });
    after(async () => {
      await Promise.all(open.map((i) => i.store.close()));
      await backend.teardown();
    });

    /** `n` instances sharing one fresh key prefix (one Redis, as several Streamgate instances). */
    async function instances(n: number): Promise<Instance[]> {
      const prefix = `t${randomBytes(4).toString('hex')}:`;
      const out: Instance[] = [];
      for (let i = 0; i < n; i++) {
        const client = await backend.client(prefix);
        const store = new RedisStore(client, { now: () => Date.now() });
        const instance: Instance = { store, client, replies: [] };
        const c = client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
        const run = c.sessionAdmit.bind(client);
        c.sessionAdmit = async (...args: unknown[]) => {
          const reply = await run(...args);
          instance.replies.push(reply);
          await instance.afterReply?.(reply);
          return reply;
        };
        open.push(instance);
        out.push(instance);
      }
      return out;
    }

    const at = new Date(Date.now()).toISOString();
    const viewer = (sessionId: string, id: string, tokenId: number, streamName: string): Session =>
      sessionRecord({ accountId: 'acc', sessionId, id, tokenId, streamName, startedOn: at, lastSeenOn: at });
    const publisher = (sessionId: string, id: string, tokenId: number, streamName: string): Session =>
      sessionRecord({ accountId: 'acc', sessionId, id, tokenId, streamName, action: 'publish', feedId: `f-${id}`, startedOn: at, lastSeenOn: at });
    const live = async (s: RedisStore, filter: { tokenId?: number; streamName?: string; action?: 'publish' | 'subscribe' }) =>
      (await s.listSessions('acc', filter, { offset: 0, limit: 10 })).items.map((x) => x.id).sort();
    const gauge = async (s: RedisStore, want: Array<{ action: string; count: number }>) => {
      const key = (c: Array<{ action: string; count: number }>) => JSON.stringify(c.map((x) => [x.action, x.count]).sort());
      let got: Array<{ action: string; count: number }> = [];
      // on a Cluster the gauge lives on another node and lands a moment later
      await until(
        async () => {
          got = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx' && c.count > 0);
          return key(got) === key(want);
        },
        2000,
        `the gauge at ${key(want)}`,
      ).catch(() => assert.equal(key(got), key(want)));
    };

    it('a connection re-registered under another token and stream: the earlier record\'s keys are asked for, then it goes', async () => {
      const [a, b] = await instances(2);
      assert.deepEqual(await a.store.admitSession(viewer('c1', 'r1', 1, 'cam1'), 60, {}), { admitted: true, replaced: [] });
      assert.deepEqual(a.replies, [[Reply.DONE, '', '']]);
      // the other instance never registered the connection: its first call writes nothing and asks
      b.afterReply = async (reply) => {
        if ((reply as unknown[])[0] !== Reply.NEEDS_KEYS) return;
        assert.equal(await b.client.get(keys.sessionRecord('acc', 'r2')), null, 'no record written');
        assert.equal(await b.client.get(keys.sessionPointer('acc', 'mediamtx', 'c1')), 'r1', 'the pointer as it was');
        assert.notEqual(await b.client.zscore(keys.sessionsOfToken('acc', 1), 'r1'), null, 'the earlier record still indexed');
        assert.equal(await b.client.zscore(keys.sessionsLive('acc'), 'r2'), null, 'the new one not indexed');
      };
      assert.deepEqual(await b.store.admitSession(publisher('c1', 'r2', 2, 'cam2'), 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
      assert.deepEqual(b.replies, [
        [Reply.NEEDS_KEYS, 'r1'],
        [Reply.DONE, 'subscribe', 'r1'],
      ]);
      assert.equal(await b.store.getSessionById('acc', 'r1'), null, 'the earlier record is gone');
      assert.deepEqual(await live(b.store, { tokenId: 1 }), []);
      assert.deepEqual(await live(b.store, { streamName: 'cam1' }), []);
      assert.deepEqual(await live(b.store, { tokenId: 2 }), ['r2']);
      assert.deepEqual(await live(b.store, { streamName: 'cam2', action: 'publish' }), ['r2']);
      assert.equal((await a.store.getSession('mediamtx', 'c1'))?.id, 'r2');
      await gauge(a.store, [{ action: 'publish', count: 1 }]);

      // the instance that sent the last registration knows its keys: one call, whatever the token and stream
      b.afterReply = undefined;
      assert.deepEqual(await b.store.admitSession(viewer('c1', 'r3', 3, 'cam3'), 60, {}), { admitted: true, replaced: [] });
      assert.deepEqual(b.replies.slice(2), [[Reply.DONE, 'publish', 'r2']]);
      // the first instance remembers r1, long gone: it is told r3 and calls again
      assert.deepEqual(await a.store.admitSession(viewer('c1', 'r4', 1, 'cam1'), 60, {}), { admitted: true, replaced: [] });
      assert.deepEqual(a.replies.slice(1), [
        [Reply.NEEDS_KEYS, 'r3'],
        [Reply.DONE, 'subscribe', 'r3'],
      ]);
      assert.deepEqual(await live(a.store, {}), ['r4']);
      assert.deepEqual(await live(a.store, { tokenId: 3 }), []);
      await gauge(a.store, [{ action: 'subscribe', count: 1 }]);
    });

    it('a connection re-registered as it was (same token and stream): one call naming only the earlier record, its indexes this admission\'s', async () => {
      const [a] = await instances(1);
      assert.equal((await a.store.admitSession(viewer('c1', 'r1', 1, 'cam1'), 60, { maxConcurrent: 1 })).admitted, true);
      const calls: unknown[][] = [];
      const c = a.client as unknown as Record<string, (...x: unknown[]) => Promise<unknown>>;
      const inner = c.sessionAdmit;
      c.sessionAdmit = (...args: unknown[]) => {
        calls.push(args);
        return inner(...args);
      };
      // within maxConcurrent 1: the earlier record of the same connection is not counted
      assert.deepEqual(await a.store.admitSession(viewer('c1', 'r2', 1, 'cam1'), 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
      assert.deepEqual(a.replies.slice(1), [[Reply.DONE, 'subscribe', 'r1']]);
      const [numberOfKeys, ...rest] = calls[0];
      assert.equal(rest[Number(numberOfKeys) - 1], keys.sessionRecord('acc', 'r1'), 'the last key is the earlier record');
      assert.equal(rest.filter((k) => k === keys.sessionsOfToken('acc', 1)).length, 1, "the token's index is passed once");
      assert.equal(rest[Number(numberOfKeys) + 17], '=', 'ARGV[18] says the earlier record is indexed as this admission');
      assert.equal(await a.store.getSessionById('acc', 'r1'), null);
      assert.deepEqual(await live(a.store, { tokenId: 1 }), ['r2']);
      assert.deepEqual(await live(a.store, { streamName: 'cam1' }), ['r2']);
      assert.deepEqual(await live(a.store, {}), ['r2']);
    });

    it('a refusal that does not depend on the earlier record is answered at once, and keeps it', async () => {
      const [a, b] = await instances(2);
      assert.equal((await a.store.admitSession(viewer('c1', 'r1', 1, 'cam1'), 60, { maxUses: 1 })).admitted, true);
      assert.deepEqual(await b.store.admitSession(viewer('c1', 'r2', 1, 'cam2'), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
      assert.deepEqual(b.replies, [Reply.USES_EXHAUSTED]);
      assert.deepEqual(await live(a.store, {}), ['r1']);
    });

    it('publish with conflict replace: the publishers\' keys are asked for, other tokens\' and its own', async () => {
      const [a] = await instances(1);
      for (const p of [publisher('p0', 'p0', 3, 'cam1'), publisher('p1', 'p1', 1, 'cam1'), publisher('p2', 'p2', 2, 'cam1')]) await a.store.startSession(p, 60);
      await a.store.startSession(viewer('v1', 'v1', 1, 'cam1'), 60);
      a.replies.length = 0;
      // token 3's own publisher frees its slot: admitted under maxConcurrent 1
      const r = await a.store.admitSession(publisher('p3', 'p3', 3, 'cam1'), 60, { publishConflict: 'replace', maxConcurrent: 1 });
      assert.equal(r.admitted, true);
      assert.deepEqual(r.admitted ? r.replaced.map((x) => [x.id, x.tokenId, x.endedReason]) : [], [
        ['p0', 3, 'replaced'],
        ['p1', 1, 'replaced'],
        ['p2', 2, 'replaced'],
      ]);
      assert.deepEqual(
        a.replies.map((x) => (x as unknown[]).slice(0, 3)),
        [
          [Reply.NEEDS_KEYS, '', 'p0'],
          [Reply.DONE, '', ''],
        ],
      );
      assert.deepEqual(a.replies[0], [Reply.NEEDS_KEYS, '', 'p0', 'p1', 'p2']);
      assert.equal((a.replies[1] as unknown[]).length, 6, 'the three replaced records');
      assert.equal((await a.store.getSessionById('acc', 'p1'))?.endedReason, 'replaced');
      assert.deepEqual(await live(a.store, { tokenId: 1 }), ['v1']);
      assert.deepEqual(await live(a.store, { tokenId: 2 }), []);
      assert.deepEqual(await live(a.store, { tokenId: 3 }), ['p3']);
      assert.deepEqual(await live(a.store, { streamName: 'cam1', action: 'publish' }), ['p3']);
      assert.deepEqual(await live(a.store, { streamName: 'cam1' }), ['p3', 'v1']);
      await gauge(a.store, [
        { action: 'publish', count: 1 },
        { action: 'subscribe', count: 1 },
      ]);
    });

    it('the second call verifies again: a registration landing in between is asked for too', async () => {
      const [a, b] = await instances(2);
      assert.equal((await a.store.admitSession(viewer('c1', 'r1', 1, 'cam1'), 60, {})).admitted, true);
      let moved = false;
      b.afterReply = async () => {
        if (moved) return;
        moved = true;
        assert.equal((await a.store.admitSession(viewer('c1', 'r2', 4, 'cam4'), 60, {})).admitted, true);
      };
      assert.deepEqual(await b.store.admitSession(viewer('c1', 'r3', 2, 'cam2'), 60, {}), { admitted: true, replaced: [] });
      assert.deepEqual(b.replies, [
        [Reply.NEEDS_KEYS, 'r1'],
        [Reply.NEEDS_KEYS, 'r2'],
        [Reply.DONE, 'subscribe', 'r2'],
      ]);
      assert.deepEqual(await live(a.store, {}), ['r3']);
      assert.deepEqual(await live(a.store, { tokenId: 4 }), []);
      assert.equal(await a.store.getSessionById('acc', 'r2'), null);
    });

    it(`gives up after ${ADMIT_ATTEMPTS} calls with StoreConflict, having registered nothing`, async () => {
      const [a, b] = await instances(2);
      let n = 0;
      const again = async () => {
        n++;
        assert.equal((await a.store.admitSession(viewer('c1', `r${n}`, n, `cam${n}`), 60, {})).admitted, true);
      };
      await again();
      b.afterReply = again;
      await assert.rejects(b.store.admitSession(viewer('c1', 'mine', 9, 'cam9'), 60, {}), { name: 'StoreConflict' });
      assert.equal(b.replies.length, ADMIT_ATTEMPTS);
      assert.ok(b.replies.every((x) => (x as unknown[])[0] === Reply.NEEDS_KEYS));
      assert.equal(await b.store.getSessionById('acc', 'mine'), null);
      assert.deepEqual(await live(a.store, {}), [`r${n}`]);
      assert.equal((await a.store.getSession('mediamtx', 'c1'))?.id, `r${n}`);
    });
  });
}
