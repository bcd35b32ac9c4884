// Two Streamgate instances sharing one Redis: a stream that goes live (or ends) through one
// instance holds its viewers to the publishing token's country lists on the other within 1 s.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { Redis } from 'ioredis';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { fixedGeo } from '../../src/enforce/geo.js';

const FR = '192.0.2.1';
const DE = '192.0.2.2';
const HOOKS = { secret: '', trustedProxies: [], omeSecret: '', mediamtx: { allowApiFrom: [] } };

describe('viewer country rules across two instances on one Redis', () => {
  let redis: TestRedis;
  let a: TestApp;
  let b: TestApp;
  let acct: { id: string; secret: string };
  const clients: Redis[] = [];

  async function instance(prefix: string): Promise<TestApp> {
    const c = new Redis(redis.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
    c.on('error', () => {});
    await c.connect();
    clients.push(c);
    // a generous store deadline: propagation is under test, not the store's latency
    return testApp(new RedisStore(c), { hooks: HOOKS, enforcement: { storeTimeoutMs: 2000 } }, { geo: fixedGeo({ [FR]: 'FR', [DE]: 'DE' }) });
  }

  before(async () => {
    redis = await startRedis();
    const prefix = redis.prefix();
    a = await instance(prefix);
    b = await instance(prefix);
    acct = await a.account();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await redis.stop();
  });

  const mk = async (body: Record<string, unknown>) => {
    const r = await request(a.app).post('/api/publish_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'x', streams: [{ streamName: 'cam1' }], ...body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data as { id: number; token: string };
  };
  const view = async (app: TestApp, clientIp: string) => {
    const r = await request(app.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'cam1', accountId: acct.id, clientIp });
    return r.body.reason as string;
  };
  const rtmp = async (call: 'publish' | 'publish_done', token: string) => {
    const r = await request(a.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=${FR}&clientid=7&call=${call}&name=cam1&type=live&token=${token}`);
    assert.equal(r.status, 200, r.text);
  };
  /** Asks B every 20 ms until the DE viewer's answer is `want`; the milliseconds it took. */
  const untilB = async (want: string): Promise<number> => {
    const started = Date.now();
    for (;;) {
      if ((await view(b, DE)) === want) return Date.now() - started;
      if (Date.now() - started > 5000) assert.fail(`B still answers otherwise than ${want} after 5 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it("B holds viewers to the publishing token's lists within 1 s of the stream going live on A, and to every matching token's once it ends", async () => {
    const deniesFr = await mk({ deniedCountries: ['FR'] });
    await mk({ deniedCountries: ['DE'] });
    // not live: both tokens' lists, on both instances (B's caches warm)
    for (const app of [a, b]) assert.deepEqual([await view(app, FR), await view(app, DE)], ['country_not_allowed', 'country_not_allowed']);

    await rtmp('publish', deniesFr.token);
    const live = await untilB('allowed');
    assert.ok(live < 1000, `B saw the stream live after ${live} ms`);
    assert.equal(await view(b, FR), 'country_not_allowed');

    await rtmp('publish_done', deniesFr.token);
    const ended = await untilB('country_not_allowed');
    assert.ok(ended < 1000, `B saw the stream end after ${ended} ms`);
    assert.equal(await view(b, FR), 'country_not_allowed');
  });
});
