// Cross-account access: account B's API secret on every management route (enumerated from the
// route table, so a new route cannot be forgotten) with every id account A owns, of every kind.
// Each answer is 404 (or, for routes without ids, shows nothing of A), and A's stored state,
// including its account version, is unchanged afterwards. Admin routes refuse B's secret (401).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { managementRoutes } from '../../src/app.js';
import type { RouteSpec } from '../../src/http/route.js';
import type { Store } from '../../src/store/store.js';
import { sqliteFactory, redisFactory, type StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { streamTotal, streamTrackingRow, trackingRow } from '../helpers/analytics.js';

/** A valid body per route, so validation passes and the answer comes from the ownership check. */
const BODIES: Record<string, unknown> = {
  'put /api/publish_token/:id': { label: 'hijacked', refreshToken: true, isActive: false },
  'put /api/v2/publish_token/:id': { label: 'hijacked', refreshToken: true, isActive: false },
  'put /api/subscribe_token/:id': { label: 'hijacked', refreshToken: true, isActive: false },
  'put /api/v2/subscribe_token/:id': { label: 'hijacked', refreshToken: true, isActive: false },
  'post /api/publish_token/:id/check': { streamName: 'cam1', clientIp: '192.0.2.1' },
  'post /api/subscribe_token/:id/check': { streamName: 'cam1', clientIp: '192.0.2.1' },
  'put /api/webhooks/:id': { url: 'https://attacker.example.net/h', refreshSecret: true },
  'post /api/issuers/:id/sign': { path: '/hls/cam1/*' },
  'post /api/issuers/:id/check': { jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJodHRwczovL3ZpY3RpbS5leGFtcGxlLmNvbS8iLCJzdWIiOiJjYW0xIn0.c2ln', streamName: 'cam1' },
  'put /api/issuers/:id': { isActive: false, secret: 'attacker-chosen-secret-0123456789' },
};
const NOT_FOUND_WORD: Record<string, string> = {
  '/api/publish_token': 'publish token',
  '/api/v2/publish_token': 'publish token',
  '/api/subscribe_token': 'subscribe token',
  '/api/v2/subscribe_token': 'subscribe token',
  '/api/webhooks': 'webhook',
  '/api/issuers': 'issuer',
  '/api/recordings': 'recording',
  '/api/sessions': 'session',
  '/api/sharing/publish_token': 'publish token',
  '/api/sharing/subscribe_token': 'subscribe token',
  '/api/sharing/issuer': 'issuer',
};
/** The query a route needs besides its id. */
const QUERIES: Record<string, string> = {
  'get /api/sharing/issuer/:id': '?subject=alice',
};

/** Everything of account A a route could reveal or change, read through the store interface. */
async function snapshot(store: Store, accountId: string, ids: { tokens: number[]; webhooks: number[] }) {
  const tokens = [];
  for (const id of ids.tokens) {
    tokens.push(await store.getToken(accountId, 'publish', id), await store.getToken(accountId, 'subscribe', id), await store.boundAddresses(accountId, id));
  }
  const webhooks = [];
  for (const id of ids.webhooks) webhooks.push(await store.getWebhook(accountId, id), await store.listDeliveries(accountId, id));
  return JSON.stringify({
    account: await store.getAccount(accountId),
    version: await store.accountVersion(accountId),
    tokens,
    webhooks,
    recordings: await store.listRecordings(accountId),
    issuers: await store.listIssuers(accountId),
    live: await store.activePublishTokenIds(accountId),
    sessions: await store.listSessions(accountId, {}, { offset: 0, limit: 100 }),
    usage: await store.usageByTracking(accountId, ['ta'], '2026-01-01', '2027-01-01'),
  });
}

function crossAccountSuite(factory: StoreFactory): void {
  describe(`security: cross-account access on every management route (${factory.name})`, () => {
    let t: TestApp;
    let store: Store;
    let a: { id: string; secret: string };
    let b: { id: string; secret: string };
    const own = { publish: [] as number[], subscribe: [] as number[], webhooks: [] as number[], recordings: [] as number[], issuers: [] as number[], sessions: [] as string[] };
    const sent: string[] = [];

    before(async () => {
      await factory.setup();
      store = await factory.make();
      t = await testApp(store, { webhooks: { allowPrivateTargets: true } });
      // Deliveries are recorded, never sent: a cross-account test send must reach none of A's hooks.
      (t.services.dispatcher as unknown as { client: { post: (url: string) => Promise<unknown> } }).client = {
        post: async (url: string) => {
          sent.push(url);
          return { statusCode: 204, durationMs: 0 };
        },
      };
      a = await t.account('victim');
      b = await t.account('attacker');
      const as = (secret: string) => ({ authorization: `Bearer ${secret}` });
      for (const kind of ['publish', 'subscribe'] as const) {
        for (const extra of [{}, { bindIpsOnUsage: 2 }]) {
          const r = await request(t.app).post(`/api/${kind}_token`).set(as(a.secret)).send({ label: 'a', streams: [{ streamName: 'cam1' }], ...(kind === 'subscribe' ? { tracking: { trackingId: 'ta' } } : {}), ...extra });
          assert.equal(r.status, 200);
          own[kind].push(r.body.data.id);
        }
      }
      // A bound address, a webhook with a delivery, recordings, a live stream and usage for A.
      const bindTok = await store.getToken(a.id, 'subscribe', own.subscribe[1]);
      assert.equal(await store.bindAddress(bindTok!, '192.0.2.9'), 'bound');
      const w = await request(t.app).post('/api/webhooks').set(as(a.secret)).send({ url: 'https://victim.example.com/h', isFeedHooks: true, isRecordingHooks: true });
      assert.equal(w.status, 200);
      own.webhooks.push(w.body.data.id);
      const i = await request(t.app).post('/api/issuers').set(as(a.secret)).send({ label: 'a', policyTokenId: own.subscribe[0], issuer: 'https://victim.example.com/', algorithms: ['HS256'], secret: 'victim-issuer-secret-0123456789' });
      assert.equal(i.status, 201);
      own.issuers.push(i.body.data.id);
      await store.addDelivery(a.id, w.body.data.id, { deliveryId: 'msg_1', at: new Date().toISOString(), event: 'feeds.started', attempt: 1, statusCode: 204, durationMs: 3 });
      for (const p of ['/r1.mp4', '/r2.mp4']) {
        const rec = await store.completeRecording({ accountId: a.id, streamName: 'cam1', tokenId: own.publish[0], path: p, recordedOn: new Date().toISOString(), completedOn: new Date().toISOString() });
        own.recordings.push(rec.id);
      }
      await store.startLiveStream({ accountId: a.id, streamName: 'cam1', tokenId: own.publish[0], feedId: 'f1', startedOn: new Date().toISOString(), caller: 'events' }, 3600);
      // A's running sessions: a publisher (admitted through a hook) and a viewer
      const pubToken = (await store.getToken(a.id, 'publish', own.publish[0]))!.token;
      const hooked = await request(t.app).post('/hooks/srs').send({ action: 'on_publish', server_id: 's1', client_id: 'c1', ip: '192.0.2.4', app: 'live', stream: 'cam1', param: `?token=${pubToken}` });
      assert.equal(hooked.text, '{"code":0}');
      await t.services.lifecycle.idle();
      const at = new Date().toISOString();
      await store.startSession({ id: 'a-viewer-1', caller: 'mediamtx', sessionId: 'v1', action: 'subscribe', accountId: a.id, streamName: 'cam1', tokenId: own.subscribe[0], startedOn: at, lastSeenOn: at }, 3600);
      own.sessions.push(...(await store.listSessions(a.id, {}, { offset: 0, limit: 10 })).items.map((s) => s.id));
      assert.equal(own.sessions.length, 2);
      // A's own feed event went to A's webhook: not what the checks below count
      await t.services.dispatcher.idle();
      sent.length = 0;
      await store.addUsage({ accountId: a.id, trackingId: 'ta', streamName: 'cam1', day: '2026-06-01', bytesOut: 1000, bytesIn: 0 });
    });
    after(() => factory.teardown());

    const allIds = () => [...new Set([...own.publish, ...own.subscribe, ...own.webhooks, ...own.recordings, ...own.issuers])].sort((x, y) => x - y);

    it('every route with an id answers 404 for each of the other account\'s ids, and changes nothing', async () => {
      const routes = managementRoutes(t.services).filter((r: RouteSpec) => r.auth === 'apiSecret' && r.path.includes(':id'));
      assert.ok(routes.length >= 15, `${routes.length} routes with ids`);
      const before = await snapshot(store, a.id, { tokens: [...own.publish, ...own.subscribe], webhooks: own.webhooks });
      let calls = 0;
      for (const r of routes) {
        const key = `${r.method} ${r.path}`;
        const word = Object.entries(NOT_FOUND_WORD).find(([prefix]) => r.path.startsWith(`${prefix}/`))?.[1];
        assert.ok(word, `route ${key} is new: teach this test what it returns`);
        if (['put', 'post'].includes(r.method) && !r.path.endsWith('/deliveries')) assert.ok(key in BODIES, `route ${key} needs a valid body in BODIES`);
        // a session route is tried with A's session ids (strings), every other with A's numeric ids
        const ids: Array<string | number> = word === 'session' ? own.sessions : allIds();
        for (const id of ids) {
          const res = await request(t.app)[r.method](r.path.replace(':id', String(id)) + (QUERIES[key] ?? '')).set('authorization', `Bearer ${b.secret}`).send(BODIES[key] as object);
          calls++;
          assert.equal(res.status, 404, `${key} with A's id ${id}: ${res.status} ${JSON.stringify(res.body)}`);
          assert.equal(res.body.status, 'fail');
          assert.equal(res.body.data.message, `No ${r.method === 'delete' && word === 'session' ? 'live ' : ''}${word} with id: ${id}`, key);
        }
      }
      const sessionRoutes = routes.filter((r) => r.path.startsWith('/api/sessions/')).length;
      assert.equal(sessionRoutes, 2);
      assert.equal(calls, (routes.length - sessionRoutes) * allIds().length + sessionRoutes * own.sessions.length);
      // the one route that takes ids in its body
      const dis = await request(t.app).patch('/api/publish_token/disable').set('authorization', `Bearer ${b.secret}`).send({ tokenIds: allIds() });
      assert.deepEqual([dis.status, dis.body.data], [200, { successfulTokens: [], failedTokens: allIds().map((id) => ({ tokenId: id, errorMessage: `No publish token with id: ${id}` })) }]);
      assert.equal(await snapshot(store, a.id, { tokens: [...own.publish, ...own.subscribe], webhooks: own.webhooks }), before, 'A\'s state is unchanged');
      assert.deepEqual(sent, [], 'nothing was sent to A\'s webhooks');
    });

    it('routes without ids show nothing of the other account and change nothing of it', async () => {
      const before = await snapshot(store, a.id, { tokens: [...own.publish, ...own.subscribe], webhooks: own.webhooks });
      const get = (p: string) => request(t.app).get(p).set('authorization', `Bearer ${b.secret}`);
      for (const p of ['/api/publish_token/list', '/api/subscribe_token/list', '/api/webhooks/list', '/api/recordings', '/api/recordings?streamName=cam1', '/api/issuers']) {
        const r = await get(p);
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: [] }], p);
      }
      for (const start of allIds()) {
        const r = await get(`/api/webhooks/list?startingId=${start}`);
        assert.deepEqual(r.body.data, [], `webhook list from A's id ${start}`);
      }
      assert.deepEqual((await get(`/api/publish_token/active?streamId=${a.id}/cam1`)).body, { status: 'success', data: { tokenIds: [] } });
      assert.deepEqual((await get('/api/publish_token/active/all')).body, { status: 'success', data: { tokenIds: [] } });
      assert.deepEqual((await get('/api/sessions')).body.data, { pagination: { totalItems: 0, totalPages: 0, itemsOnPage: 25 }, data: [] });
      assert.deepEqual((await get(`/api/sessions?streamId=${a.id}/cam1`)).body.data.data, []);
      assert.deepEqual((await get('/api/monitoring/streams')).body.data.data, []);
      assert.equal((await get('/api/monitoring/streams/cam1')).status, 404);
      for (const p of ['/api/stream/stop/all', '/api/stream/stop']) {
        const r = await request(t.app).post(p).set('authorization', `Bearer ${b.secret}`).send(p.endsWith('all') ? undefined : { streamId: `${a.id}/cam1` });
        assert.deepEqual([r.status, r.body.data], [200, { stoppingLevel: 'None' }], p);
      }
      assert.deepEqual((await get('/api/analytics/tracking/total?trackingIds=ta&startDate=2026-01-01&stopDate=2027-01-01')).body, { status: 'success', data: { ta: [] } });
      assert.deepEqual((await get('/api/analytics/streams/total?streamNames=cam1&startDate=2026-01-01&stopDate=2027-01-01')).body, { status: 'success', data: { cam1: streamTotal(0, 0) } });
      assert.deepEqual((await get('/api/analytics/tracking/series?resolution=Month&trackingIds=ta&startDate=2026-06-01&stopDate=2026-07-01')).body.data, { ta: { '2026-06-01T00:00:00Z': [] } });
      assert.deepEqual((await get('/api/analytics/streams/series?resolution=Day&streamNames=cam1&startDate=2026-06-01&stopDate=2026-06-02')).body.data.cam1.bandwidth, { '2026-06-01T00:00:00Z': { bytesOut: 0, bytesIn: 0 } });
      assert.deepEqual((await get('/api/analytics/account/total?startDate=2026-01-01&stopDate=2027-01-01')).body, { status: 'success', data: streamTotal(0, 0) });
      assert.deepEqual((await get('/api/analytics/account/series?resolution=Day&startDate=2026-06-01&stopDate=2026-06-02')).body.data.bandwidth, { '2026-06-01T00:00:00Z': { bytesOut: 0, bytesIn: 0 } });
      assert.deepEqual((await get('/api/analytics/tracking/streams/total?streamNames=cam1&startDate=2026-01-01&stopDate=2027-01-01')).body, { status: 'success', data: { cam1: [] } });
      assert.deepEqual((await get('/api/analytics/tracking/streams/series?resolution=Day&streamNames=cam1&startDate=2026-06-01&stopDate=2026-06-02')).body.data, { cam1: { '2026-06-01T00:00:00Z': [] } });
      // the same calls with A's secret do see A's things: the empty answers above are not vacuous
      const asA = (p: string) => request(t.app).get(p).set('authorization', `Bearer ${a.secret}`);
      assert.equal((await asA('/api/publish_token/list')).body.data.length, 2);
      assert.equal((await asA('/api/recordings')).body.data.length, 2);
      assert.equal((await asA('/api/issuers')).body.data.length, 1);
      assert.equal((await asA('/api/sessions')).body.data.pagination.totalItems, 2);
      assert.equal((await asA('/api/monitoring/streams')).body.data.data.length, 1);
      assert.deepEqual((await asA(`/api/publish_token/active?streamId=${a.id}/cam1`)).body.data, { tokenIds: [own.publish[0]] });
      assert.deepEqual((await asA('/api/analytics/tracking/total?trackingIds=ta&startDate=2026-01-01&stopDate=2027-01-01')).body.data, { ta: [trackingRow('cam1', 1000, 0)] });
      assert.deepEqual((await asA('/api/analytics/streams/total?streamNames=cam1&startDate=2026-01-01&stopDate=2027-01-01')).body.data, { cam1: streamTotal(1000, 0) });
      assert.deepEqual((await asA('/api/analytics/tracking/series?resolution=Month&trackingIds=ta&startDate=2026-06-01&stopDate=2026-07-01')).body.data, { ta: { '2026-06-01T00:00:00Z': [trackingRow('cam1', 1000, 0)] } });
      assert.deepEqual((await asA('/api/analytics/streams/series?resolution=Day&streamNames=cam1&startDate=2026-06-01&stopDate=2026-06-02')).body.data.cam1.bandwidth, { '2026-06-01T00:00:00Z': { bytesOut: 1000, bytesIn: 0 } });
      assert.deepEqual((await asA('/api/analytics/account/total?startDate=2026-01-01&stopDate=2027-01-01')).body.data, streamTotal(1000, 0));
      assert.deepEqual((await asA('/api/analytics/account/series?resolution=Day&startDate=2026-06-01&stopDate=2026-06-02')).body.data.bandwidth, { '2026-06-01T00:00:00Z': { bytesOut: 1000, bytesIn: 0 } });
      assert.deepEqual((await asA('/api/analytics/tracking/streams/total?streamNames=cam1&startDate=2026-01-01&stopDate=2027-01-01')).body.data, { cam1: [streamTrackingRow('ta', 1000, 0)] });
      assert.deepEqual((await asA('/api/analytics/tracking/streams/series?resolution=Day&streamNames=cam1&startDate=2026-06-01&stopDate=2026-06-02')).body.data, { cam1: { '2026-06-01T00:00:00Z': [streamTrackingRow('ta', 1000, 0)] } });
      for (const kind of ['Feeds', 'Recordings', 'Thumbnail']) {
        const r = await request(t.app).post(`/api/webhooks/test/${kind}`).set('authorization', `Bearer ${b.secret}`).send({ streamName: 'cam1' });
        assert.equal(r.status, 200);
      }
      await t.services.dispatcher.idle();
      assert.deepEqual(sent, [], 'B\'s test sends reach none of A\'s webhooks');
      const rotated = await request(t.app).post('/api/account/secret').set('authorization', `Bearer ${b.secret}`);
      assert.equal(rotated.status, 200);
      b.secret = rotated.body.data.apiSecret;
      assert.equal((await asA('/api/publish_token/list')).status, 200, 'B rotating its secret leaves A\'s alone');
      assert.equal(await snapshot(store, a.id, { tokens: [...own.publish, ...own.subscribe], webhooks: own.webhooks }), before);
    });

    it('admin routes refuse an account\'s API secret (401) for every account id', async () => {
      const routes = managementRoutes(t.services).filter((r) => r.auth === 'admin');
      assert.ok(routes.length >= 5);
      const before = await snapshot(store, a.id, { tokens: [...own.publish, ...own.subscribe], webhooks: own.webhooks });
      for (const r of routes) {
        for (const id of [a.id, b.id]) {
          const res = await request(t.app)[r.method](r.path.replace(':accountId', id)).set('authorization', `Bearer ${b.secret}`).send({ name: 'x', secureViewer: true });
          assert.deepEqual([res.status, res.body], [401, { status: 'fail', data: { message: 'Unauthorized' } }], `${r.method} ${r.path}`);
        }
      }
      assert.equal(await snapshot(store, a.id, { tokens: [...own.publish, ...own.subscribe], webhooks: own.webhooks }), before);
    });
  });
}

crossAccountSuite(sqliteFactory());
crossAccountSuite(redisFactory());
