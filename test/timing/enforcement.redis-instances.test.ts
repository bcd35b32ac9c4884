// Two Streamgate instances sharing one Redis: binding, revocation and secrets across instances,
// and what decisions do while Redis is down or slow, and after it comes back.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ADMIN_KEY, testApp, type TestApp } from '../helpers/app.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { VERSION_LAG_MS } from '../helpers/stores.js';
import { until } from '../helpers/until.js';

describe('two instances on one Redis', () => {
  let redis: TestRedis;
  let prefix: string;
  let a: TestApp;
  let b: TestApp;
  let acct: { id: string; secret: string };
  const clients: Redis[] = [];
  const stores: RedisStore[] = [];

  /** `versionLagMs` above 0: the version watch, as the server runs it by default; 0: every decision reads the version. */
  async function instance(overrides: Record<string, unknown> = {}, versionLagMs = 0): Promise<TestApp> {
    const c = new Redis(redis.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
    c.on('error', () => {});
    await c.connect();
    clients.push(c);
    const store = new RedisStore(c, { versionLagMs });
    if (versionLagMs > 0) stores.push(store);
    return testApp(store, overrides);
  }

  before(async () => {
    redis = await startRedis({ persistent: true });
    prefix = redis.prefix();
    // Atomicity and revocation are under test here, not latency: generous store deadline.
    a = await instance({ enforcement: { storeTimeoutMs: 2000 } });
    b = await instance({ enforcement: { storeTimeoutMs: 2000 } });
    acct = await a.account();
  });
  after(async () => {
    for (const s of stores) await s.close();
    for (const c of clients) c.disconnect();
    await redis.stop();
  });

  const mk = async (body: Record<string, unknown>) => {
    const r = await request(a.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'x', streams: [{ streamName: 'cam1' }], ...body });
    assert.equal(r.status, 200);
    return r.body.data as { id: number; token: string };
  };
  const ask = (app: TestApp, token: string, clientIp = '192.0.2.1') =>
    request(app.app).post('/hooks/authorize').send({ action: 'subscribe', token, streamName: 'cam1', clientIp });

  it("a securing publish token disabled or deleted on one instance never opens its stream on the other", async () => {
    const view = async (app: TestApp) =>
      (await request(app.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'kept1', accountId: acct.id })).status;
    const p = await request(a.app)
      .post('/api/publish_token')
      .set('authorization', `Bearer ${acct.secret}`)
      .send({ label: 'secures', streams: [{ streamName: 'kept1' }], subscribeRequiresAuth: true });
    // b decides first, so its account entry is cached before each change made on a
    assert.deepEqual([await view(b), await view(a)], [401, 401]);
    await request(a.app).put(`/api/publish_token/${p.body.data.id}`).set('authorization', `Bearer ${acct.secret}`).send({ isActive: false });
    assert.deepEqual([await view(b), await view(a)], [401, 401]);
    await request(a.app).delete(`/api/publish_token/${p.body.data.id}`).set('authorization', `Bearer ${acct.secret}`);
    assert.deepEqual([await view(b), await view(a)], [401, 401]);
    // the account opens it on b: a sees it at its next decision
    assert.equal((await request(b.app).delete('/api/secured_streams/kept1').set('authorization', `Bearer ${acct.secret}`)).status, 200);
    assert.deepEqual([await view(a), await view(b)], [200, 200]);
  });

  it('binds exactly 3 of 40 addresses when 200 first uses are spread over both instances', async () => {
    const s = await mk({ bindIpsOnUsage: 3 });
    const ips = Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => ask(i % 2 ? a : b, s.token, ips[i % 40])));
    const rec = (await request(b.app).get(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`)).body.data;
    assert.equal(rec.boundIpAddresses.length, 3);
    assert.equal(results.filter((r) => r.status === 200).length, 15);
    for (const [i, r] of results.entries()) assert.equal(r.status === 200, rec.boundIpAddresses.includes(ips[i % 40]), `request ${i}`);
  });

  it('a token created on A is usable on B at once; disabled or refreshed on A, denied on B at the next decision', async () => {
    const s = await mk({});
    assert.equal((await ask(b, s.token)).status, 200);
    assert.equal((await ask(b, s.token)).status, 200, 'now cached on B');
    await request(a.app).put(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`).send({ isActive: false });
    assert.equal((await ask(b, s.token)).body.reason, 'token_disabled');
    await request(a.app).put(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`).send({ isActive: true });
    assert.equal((await ask(b, s.token)).status, 200);
    const r = await request(a.app).put(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`).send({ refreshToken: true });
    assert.equal((await ask(b, s.token)).body.reason, 'token_invalid');
    assert.equal((await ask(b, r.body.data.token)).status, 200);
    await request(a.app).delete(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`);
    assert.equal((await ask(b, r.body.data.token)).body.reason, 'token_invalid');
  });

  it('with versions watched: disabled, refreshed or deleted on one instance, refused on the other within versionLagMs', async () => {
    const wa = await instance({ enforcement: { storeTimeoutMs: 2000 } }, VERSION_LAG_MS);
    const wb = await instance({ enforcement: { storeTimeoutMs: 2000 } }, VERSION_LAG_MS);
    const s = await mk({});
    assert.equal((await ask(wb, s.token)).status, 200);
    const put = (body: Record<string, unknown>) => request(wa.app).put(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`).send(body);
    // Past the lag nothing may still answer from before the write; a message usually arrives long before.
    const afterLag = async (token: string) => {
      await new Promise((r) => setTimeout(r, VERSION_LAG_MS));
      return ask(wb, token);
    };
    await put({ isActive: false });
    assert.equal((await afterLag(s.token)).body.reason, 'token_disabled');
    await put({ isActive: true });
    assert.equal((await afterLag(s.token)).status, 200);
    const r = await put({ refreshToken: true });
    assert.equal((await afterLag(s.token)).body.reason, 'token_invalid');
    assert.equal((await ask(wb, r.body.data.token)).status, 200);
    await request(wa.app).delete(`/api/subscribe_token/${s.id}`).set('authorization', `Bearer ${acct.secret}`);
    assert.equal((await afterLag(r.body.data.token)).body.reason, 'token_invalid');
    // the writing instance itself: at its very next decision
    const own = await mk({});
    assert.equal((await ask(wa, own.token)).status, 200);
    await request(wa.app).put(`/api/subscribe_token/${own.id}`).set('authorization', `Bearer ${acct.secret}`).send({ isActive: false });
    assert.equal((await ask(wa, own.token)).body.reason, 'token_disabled');
  });

  it("with versions watched: an account's ipRulesOnRtmp and default cluster changed through one instance reach the other's decisions and director within versionLagMs", async () => {
    const clusters = [
      { id: 'eu-1', publishUrls: ['wss://eu/{streamName}'], subscribeUrls: ['wss://eu/{streamName}'] },
      { id: 'us-1', publishUrls: ['wss://us/{streamName}'], subscribeUrls: ['wss://us/{streamName}'] },
    ];
    const wa = await instance({ enforcement: { storeTimeoutMs: 2000 }, director: { clusters } }, VERSION_LAG_MS);
    const wb = await instance({ enforcement: { storeTimeoutMs: 2000 }, director: { clusters } }, VERSION_LAG_MS);
    const tenant = await wa.account('settings');
    const auth = { authorization: `Bearer ${tenant.secret}` };
    const pub = (await request(wa.app).post('/api/publish_token').set(auth).send({ label: 'p', streams: [{ streamName: 'cam1' }], allowedIpAddresses: ['198.51.100.0/24'] })).body
      .data as { token: string };
    const rtmp = () => request(wb.app).post('/hooks/authorize').send({ action: 'publish', token: pub.token, streamName: 'cam1', protocol: 'rtmp', clientIp: '192.0.2.1' });
    const urls = async () => (await request(wb.app).post('/api/director/publish').set('authorization', `Bearer ${pub.token}`).send({ streamName: 'cam1' })).body;
    // b decides first, so its entries are cached before each change made on a
    assert.equal((await rtmp()).body.reason, 'ip_not_allowed');
    const admin = (body: object) => request(wa.app).put(`/admin/accounts/${tenant.id}`).set('authorization', `Bearer ${ADMIN_KEY}`).send(body);
    assert.equal((await admin({ ipRulesOnRtmp: false })).status, 200);
    // the other instance sees the account's new version within versionLagMs: polled, not slept
    await until(async () => (await rtmp()).status === 200, 5000, 'ipRulesOnRtmp: false lifted on the other instance');
    assert.equal((await admin({ ipRulesOnRtmp: true })).status, 200);
    await until(async () => (await rtmp()).body.reason === 'ip_not_allowed', 5000, 'ipRulesOnRtmp: true back on the other instance');
    // the director refuses this token's address over webrtc; a token without address rules shows the cluster
    const open = (await request(wa.app).post('/api/publish_token').set(auth).send({ label: 'o', streams: [{ streamName: 'cam2' }] })).body.data as { token: string };
    const director = async () => (await request(wb.app).post('/api/director/publish').set('authorization', `Bearer ${open.token}`).send({ streamName: 'cam2' })).body.data.urls;
    assert.deepEqual(await director(), ['wss://eu/cam2']);
    assert.equal((await request(wa.app).put('/api/cluster').set(auth).send({ defaultCluster: 'us-1' })).status, 200);
    await until(async () => (await director())?.[0] === 'wss://us/cam2', 5000, "the other instance's director answering from the new default cluster");
    assert.deepEqual(await director(), ['wss://us/cam2']);
    assert.equal((await urls()).data.reason, 'ip_not_allowed');
  });

  it('a secret refreshed on A is rejected on B at once', async () => {
    const other = await a.account('rotating');
    assert.equal((await request(b.app).get('/api/subscribe_token/list').set('authorization', `Bearer ${other.secret}`)).status, 200);
    await request(a.app).post('/api/account/secret').set('authorization', `Bearer ${other.secret}`);
    assert.equal((await request(b.app).get('/api/subscribe_token/list').set('authorization', `Bearer ${other.secret}`)).status, 401);
  });

  it('answers 503 within the store timeout while Redis is paused, and recovers by itself', async () => {
    const c = await instance(); // the default enforcement.storeTimeoutMs: 250
    const s = await mk({});
    assert.equal((await ask(c, s.token)).status, 200);
    const admin = new Redis(redis.url);
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    const started = Date.now();
    const r = await ask(c, s.token);
    const elapsed = Date.now() - started;
    admin.disconnect();
    assert.deepEqual([r.status, r.body.reason, r.body.message], [503, 'store_unavailable', 'Service Unavailable: token store unreachable']);
    assert.ok(elapsed < 250 + 500, `answered in ${elapsed} ms (storeTimeoutMs 250 + margin)`);
    await new Promise((res) => setTimeout(res, 1600));
    assert.equal((await ask(c, s.token)).status, 200);
  });

  it('fails closed while Redis is down (deny), decides from cache with allow-cached, and recovers without a restart', async () => {
    const cached = await instance({ enforcement: { onStoreError: 'allow-cached' } });
    const warm = await mk({});
    const cold = await mk({});
    const binder = await mk({ bindIpsOnUsage: 1 });
    assert.equal((await ask(cached, warm.token)).status, 200);
    assert.equal((await ask(cached, binder.token, '192.0.2.77')).status, 200);
    await redis.kill();
    try {
      const started = Date.now();
      const denied = await ask(b, warm.token);
      assert.deepEqual([denied.status, denied.body.reason], [503, 'store_unavailable']);
      assert.ok(Date.now() - started < 750, 'no waiting on a dead store');
      assert.equal((await ask(cached, warm.token)).status, 200, 'allow-cached: from the cached record');
      assert.equal((await ask(cached, cold.token)).status, 503, 'allow-cached: nothing cached, denied');
      assert.equal((await ask(cached, binder.token, '192.0.2.77')).status, 200, 'allow-cached: an address this instance saw bound');
      assert.equal((await ask(cached, binder.token, '192.0.2.78')).status, 503, 'allow-cached: a new address cannot be bound');
      const ready = await request(b.app).get('/readyz');
      assert.equal(ready.status, 503);
      const write = await request(b.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'x', streams: [{ streamName: 'a' }] });
      assert.deepEqual([write.status, write.body], [503, { status: 'fail', data: { message: 'Store unavailable; retry' } }], 'a store outage is retryable, not an internal error');
    } finally {
      await redis.start();
    }
    const deadline = Date.now() + 15000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await ask(b, warm.token)).status;
      if (status === 200) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(status, 200, 'decisions recover once Redis is back');
    assert.equal((await ask(b, cold.token)).status, 200, 'acknowledged tokens survived the restart');
  });
});
