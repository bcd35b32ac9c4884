// The Redis store's version watch (docs/decision-path.md#watched-account-versions): account versions
// held in memory while a subscription proves them current. A version moved on another instance is
// never answered from memory past the lag bound; this instance's own writes are seen at once; a
// dropped or silent subscription sends decisions back to reading Redis.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import type { Account } from '../../src/store/store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { until } from '../helpers/until.js';
import { counting } from '../helpers/counting-store.js';
import { pino } from 'pino';
import { Enforcer } from '../../src/admission/pipeline.js';
import { Metrics } from '../../src/observability/metrics.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { loadConfig } from '../../src/config/load.js';
import { newTokenRecord } from '../../src/domain/tokens.js';

const LAG_MS = 250;

const account = (id: string): Account => ({ id, name: id, createdOn: '2026-05-01T10:00:00.000Z', secureViewer: false });

describe('redis: watched account versions', () => {
  let server: TestRedis;
  const stores: RedisStore[] = [];
  const admins: Redis[] = [];
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    for (const s of stores) await s.close();
    for (const a of admins) a.disconnect();
    await server.stop();
  });

  /** `versionLagMs` 0: no watch. */
  async function instance(prefix: string, versionLagMs = LAG_MS): Promise<RedisStore> {
    const client = new Redis(server.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
    client.on('error', () => {});
    await client.connect();
    const s = new RedisStore(client, { versionLagMs });
    stores.push(s);
    return s;
  }

  function admin(): Redis {
    const a = new Redis(server.url);
    admins.push(a);
    return a;
  }

  /** Reads the version until the watch vouches for it (the subscription is confirmed). */
  async function known(s: RedisStore, accountId: string): Promise<number> {
    await until(async () => {
      await s.accountVersion(accountId);
      return s.accountVersionKnown(accountId) !== undefined;
    }, 3000, `the watch to vouch for ${accountId}`);
    return s.accountVersionKnown(accountId) as number;
  }

  it('a version moved on another instance reaches this one by its message, and is never answered from memory past the lag', async () => {
    const prefix = server.prefix();
    const a = await instance(prefix);
    const b = await instance(prefix);
    await a.createAccount(account('WATCH1'));
    const before = await known(b, 'WATCH1');
    assert.equal(before, await a.accountVersion('WATCH1'));
    const sent = performance.now();
    await a.updateAccount('WATCH1', { secureViewer: true });
    const moved = before + 1;
    let seenAt: number | undefined;
    // sampled on every turn until the message arrives: from lag after the write, never the old version
    while (seenAt === undefined) {
      const v = b.accountVersionKnown('WATCH1');
      const at = performance.now() - sent;
      if (v === moved) seenAt = at;
      else if (at > LAG_MS) assert.equal(v, undefined, `${at.toFixed(1)} ms after the write B still answers version ${v} from memory`);
      if (at > 3000) assert.fail('the message never arrived');
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(await b.accountVersion('WATCH1'), moved);
  });

  it("this instance's own write is seen at its next decision, before its message arrives", async () => {
    const a = await instance(server.prefix());
    await a.createAccount(account('WATCH2'));
    const before = await known(a, 'WATCH2');
    await a.updateAccount('WATCH2', { secureViewer: true });
    assert.equal(a.accountVersionKnown('WATCH2'), undefined, 'forgotten when the write is acknowledged');
    assert.equal(await a.accountVersion('WATCH2'), before + 1);
  });

  it('reads of the live registry leave the watched versions as they are (only writes that move a version forget them)', async () => {
    const a = await instance(server.prefix());
    await a.createAccount(account('WATCH9'));
    const ver = await known(a, 'WATCH9');
    assert.equal(await a.getLiveStream('WATCH9', 'cam1'), null);
    assert.deepEqual(await a.activePublishTokenIds('WATCH9'), []);
    assert.equal(a.accountVersionKnown('WATCH9'), ver);
  });

  it('a dropped subscription forgets every version at once, and vouches again once subscribed anew', async () => {
    const prefix = server.prefix();
    const a = await instance(prefix);
    const b = await instance(prefix);
    await a.createAccount(account('WATCH3'));
    await known(b, 'WATCH3');
    const killed = Number(await admin().call('CLIENT', 'KILL', 'TYPE', 'pubsub'));
    assert.ok(killed >= 1, `killed ${killed} subscriber connection(s)`);
    await until(() => b.accountVersionKnown('WATCH3') === undefined, 1000, 'the dropped subscription to be noticed');
    // a write made while B was not subscribed: B reads it, then watches again
    await a.updateAccount('WATCH3', { secureViewer: true });
    assert.equal(await known(b, 'WATCH3'), await a.accountVersion('WATCH3'));
    await a.updateAccount('WATCH3', { secureViewer: false });
    const now = await a.accountVersion('WATCH3');
    await until(() => b.accountVersionKnown('WATCH3') === now, 2000, 'the message on the new subscription');
  });

  it('a subscription whose pings go unanswered stops vouching within the lag (Redis paused)', async () => {
    const b = await instance(server.prefix());
    await b.createAccount(account('WATCH4'));
    await known(b, 'WATCH4');
    const paused = performance.now();
    await admin().call('CLIENT', 'PAUSE', '1000', 'ALL');
    await until(() => b.accountVersionKnown('WATCH4') === undefined, LAG_MS + 500, 'the watch to stop vouching');
    const after = performance.now() - paused;
    assert.ok(after <= LAG_MS + 200, `stopped vouching ${after.toFixed(0)} ms after the pause (lag ${LAG_MS} ms)`);
    await known(b, 'WATCH4');
  });

  it('channels follow the key prefix, glob characters included, and other prefixes are not heard', async () => {
    const odd = `w[1]*?\\${server.prefix()}`;
    const a = await instance(odd);
    const b = await instance(odd);
    const other = await instance(server.prefix());
    await a.createAccount(account('WATCH5'));
    await other.createAccount(account('WATCH5'));
    const before = await known(b, 'WATCH5');
    // the other deployment's version of the same account moves further: heard, it would raise this one's
    for (const secureViewer of [true, false, true]) await other.updateAccount('WATCH5', { secureViewer });
    assert.equal(await other.accountVersion('WATCH5'), before + 3);
    await a.updateAccount('WATCH5', { secureViewer: true });
    await until(() => b.accountVersionKnown('WATCH5') === before + 1, 2000, 'the message on the odd prefix');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(b.accountVersionKnown('WATCH5'), before + 1, 'the other prefix’s moves are not this deployment’s');
  });

  it('a decision on a cached token makes no round trip while the watch vouches, one version read per decision without it', async () => {
    const prefix = server.prefix();
    for (const [lag, perDecision] of [[LAG_MS, []], [0, ['accountVersion']]] as const) {
      const inner = await instance(prefix, lag);
      const id = lag ? 'WATCH7' : 'WATCH8';
      await inner.createAccount(account(id));
      const t = await inner.createToken(newTokenRecord('subscribe', id, { label: 'p', streams: [{ streamName: 'cam1' }] }, id.repeat(11).slice(0, 64), Date.now()));
      const { store, calls } = counting(inner);
      const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
      const ask = () => enforcer.admit({ action: 'subscribe', token: t.token, streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'hls' }, 'store', 'test');
      assert.equal((await ask()).allowed, true); // warms the cache
      if (lag) await known(inner, id);
      calls.length = 0;
      for (let i = 0; i < 10; i++) assert.equal((await ask()).allowed, true);
      assert.deepEqual(calls, Array(10).fill(perDecision).flat(), lag ? 'watched' : 'not watched');
    }
  });

  it('without a watch every version is read (redis.versionLagMs: 0)', async () => {
    const s = await instance(server.prefix(), 0);
    await s.createAccount(account('WATCH6'));
    for (let i = 0; i < 5; i++) {
      assert.equal(await s.accountVersion('WATCH6'), 1);
      assert.equal(s.accountVersionKnown('WATCH6'), undefined);
      await new Promise((r) => setTimeout(r, 60));
    }
  });
});
