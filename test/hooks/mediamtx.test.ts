// MediaMTX authMethod: http bodies (with and without userAgent, id null) and runOn* hooks. Each test
// has an app and tokens of its own, so any one runs alone or in any order.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { trackingRow } from '../helpers/analytics.js';

const ID = '5f1c2b0e-6a3d-4c1e-9d0b-1d2f3a4b5c6d';

describe('MediaMTX adapter', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  beforeEach(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: [], omeSecret: '', accountInPath: false, mediamtx: { allowApiFrom: ['127.0.0.1'], pathPrefix: 'live/' } },
    });
    pub = await f.token('publish', { streams: [{ streamName: 'cam[0-9]+', isRegex: true }] });
    sub = await f.token('subscribe', { allowedIpAddresses: ['203.0.113.0/24'], tracking: { trackingId: 'viewers' } });
  });
  afterEach(() => f.close());
  const auth = (body: object) => request(f.t.app).post('/hooks/mediamtx/auth').send(body);
  const base = (over: object) => ({
    ip: '203.0.113.7',
    user: '',
    password: '',
    token: '',
    action: 'publish',
    path: 'live/cam1',
    protocol: 'rtmp',
    id: ID,
    query: '',
    ...over,
  });

  it('admits a publish with the token in the query (RTMP), with and without userAgent', async () => {
    const r = await auth(base({ query: `token=${pub.token}&foo=bar` }));
    assert.deepEqual([r.status, r.body], [200, { allowed: true }]);
    const withUa = await auth(base({ token: pub.token, userAgent: 'obs-studio/30.1', id: 'a2', path: 'live/cam3' }));
    assert.equal(withUa.status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', `/api/publish_token/active?streamId=${f.acct.id}/cam1`)).body.data, { tokenIds: [pub.id] });
    const session = await f.t.services.store.getSession('mediamtx', ID);
    assert.deepEqual([session?.action, session?.tokenId, session?.streamName], ['publish', pub.id, 'cam1']);
  });

  it('takes the token from the password field (SRT/RTSP) and maps read and playback to subscribe', async () => {
    for (const action of ['read', 'playback']) {
      const r = await auth(base({ action, user: 'viewer', password: sub.token, protocol: 'srt', id: `r-${action}` }));
      assert.equal(r.status, 200, action);
    }
    await f.settle();
    const s = await f.t.services.store.getSession('mediamtx', 'r-read');
    assert.deepEqual([s?.action, s?.trackingId], ['subscribe', 'viewers']);
  });

  it('answers 401 (and a challenge) when no credentials came at all, 403 otherwise', async () => {
    const first = await auth(base({ action: 'read', protocol: 'rtsp', id: 'rtsp1' }));
    assert.equal(first.status, 401);
    assert.equal(first.headers['www-authenticate'], 'Bearer realm="streamgate"');
    assert.equal(first.body.reason, 'token_required');
    const wrong = await auth(base({ action: 'read', protocol: 'rtsp', user: 'u', password: 'wrong', id: 'rtsp1' }));
    assert.deepEqual([wrong.status, wrong.body.reason], [403, 'token_invalid']);
    const ip = await auth(base({ action: 'read', ip: '198.51.100.1', token: sub.token, protocol: 'webrtc', id: 'w1' }));
    assert.deepEqual([ip.status, ip.body.message], [403, 'Unauthorized: IP Address not allowed']);
  });

  it('allows api/metrics/pprof (id null, empty path) only from hooks.mediamtx.allowApiFrom', async () => {
    const ok = await auth({ ip: '127.0.0.1', user: 'admin', password: 'x', token: '', action: 'api', path: '', protocol: '', id: null, query: '' });
    assert.equal(ok.status, 200);
    const no = await auth({ ip: '203.0.113.7', user: '', password: '', token: '', action: 'metrics', path: '', protocol: '', id: null, query: '' });
    assert.deepEqual([no.status, no.body.reason], [403, 'api_not_allowed']);
  });

  it('answers 400 naming the problem for malformed bodies', async () => {
    const r = await auth({ action: 'dance', path: 'live/cam1' });
    assert.deepEqual([r.status, Object.keys(r.body.errors)], [400, ['action']]);
    const t = await auth({ path: 5 });
    assert.deepEqual([t.status, Object.keys(t.body.errors).sort()], [400, ['action', 'path']]);
  });

  it('refuses an action word that names an object property (toString, __proto__) as unknown, deciding and counting nothing', async () => {
    for (const action of ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf']) {
      const r = await auth(base({ action, token: pub.token }));
      assert.deepEqual([r.status, r.body.errors], [400, { action: [`unknown MediaMTX action '${action}'`] }], action);
    }
    const metrics = (await request(f.t.app).get('/metrics')).text;
    assert.equal(metrics.split('\n').filter((l) => l.startsWith('streamgate_decisions_total{')).length, 0, 'no decision counted');
  });

  it('ends the feed on runOnNotReady / runOnUnavailable (form-encoded from curl), keyed by the source id', async () => {
    assert.equal((await auth(base({ query: `token=${pub.token}` }))).status, 200);
    assert.equal((await auth(base({ token: pub.token, id: 'a2', path: 'live/cam3' }))).status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
    const r = await request(f.t.app)
      .post('/hooks/mediamtx/event?event=notReady')
      .type('form')
      .send({ path: 'live/cam1', sourceId: ID, sourceType: 'rtmpConn' });
    assert.deepEqual([r.status, r.body], [200, { received: true }]);
    await f.settle();
    const ended = f.events.filter((e) => e.type === 'feeds' && e.event === 'ended');
    assert.deepEqual(ended.map((e) => e.type === 'feeds' && e.data.name), ['cam1']);
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] }, 'cam3 is still live');
    const again = await request(f.t.app).post('/hooks/mediamtx/event').send({ event: 'runOnUnavailable', path: 'live/cam3', sourceId: 'a2' });
    assert.equal(again.status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
  });

  it('starts a feed from runOnReady for a publisher admitted elsewhere, from the token in MTX_QUERY', async () => {
    const r = await request(f.t.app)
      .post('/hooks/mediamtx/event')
      .type('form')
      .send({ event: 'runOnReady', MTX_PATH: 'live/cam2', MTX_SOURCE_ID: 'src-9', MTX_QUERY: `token=${pub.token}` });
    assert.equal(r.status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', `/api/publish_token/active?streamId=${f.acct.id}/cam2`)).body.data, { tokenIds: [pub.id] });
    const bad = await request(f.t.app).post('/hooks/mediamtx/event').send({ event: 'explode' });
    assert.deepEqual([bad.status, Object.keys(bad.body.errors).sort()], [400, ['event', 'path']]);
  });

  it('reports recording segments', async () => {
    const ready = await request(f.t.app).post('/hooks/mediamtx/event').send({ event: 'runOnReady', path: 'live/cam2', sourceId: 'src-9', query: `token=${pub.token}` });
    assert.equal(ready.status, 200);
    await request(f.t.app).post('/hooks/mediamtx/event').send({ event: 'recordSegmentComplete', path: 'live/cam2', sourceId: 'src-9', segmentPath: '/rec/cam2/1.mp4', segmentDuration: '3600' });
    await f.settle();
    const rec = f.events.find((e) => e.type === 'recording');
    assert.ok(rec && rec.type === 'recording');
    assert.deepEqual([rec.event, rec.data.path, rec.data.streamName, rec.data.tokenId], ['completed', '/rec/cam2/1.mp4', 'cam2', pub.id]);
  });
});

describe('MediaMTX API poller, wired to the session registry', () => {
  it('attributes polled bytes to the tracking id admitted with that session id, counting deltas', async () => {
    const { createServer } = await import('node:http');
    let outbound = 0;
    const api = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/v3/rtspsessions/list')) {
        const items = outbound > 0 ? [{ id: 'rtsp-sess-1', path: 'live/cam1', outboundBytes: outbound, inboundBytes: 0, query: 'token=SECRET' }] : [];
        res.end(JSON.stringify({ pageCount: 1, itemCount: items.length, items }));
      } else {
        res.end(JSON.stringify({ pageCount: 0, itemCount: 0, items: [] }));
      }
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const port = (api.address() as { port: number }).port;
    const f = await hookFixture({
      hooks: { secret: '', trustedProxies: [], omeSecret: '', accountInPath: false, mediamtx: { allowApiFrom: [], pathPrefix: 'live/' } },
      analytics: { mediamtx: { apiUrl: `http://127.0.0.1:${port}`, intervalMs: 3600000 } },
    });
    try {
      const s = await f.token('subscribe', { tracking: { trackingId: 'mtx-viewers' } });
      await f.t.services.poller!.pollOnce(); // the start-up baseline: nothing open yet
      const r = await request(f.t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token: s.token, action: 'read', path: 'live/cam1', protocol: 'rtsp', id: 'rtsp-sess-1', query: '' });
      assert.equal(r.status, 200);
      await f.settle();
      outbound = 1000;
      await f.t.services.poller!.pollOnce();
      outbound = 1500;
      await f.t.services.poller!.pollOnce();
      const day = new Date().toISOString().slice(0, 10);
      const next = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
      const totals = await f.api('get', `/api/analytics/tracking/total?trackingIds=mtx-viewers&startDate=${day}&stopDate=${next}`);
      assert.deepEqual(totals.body.data, { 'mtx-viewers': [trackingRow('cam1', 1500, 0)] });
    } finally {
      await f.t.services.close();
      await new Promise<void>((r) => api.close(() => r()));
    }
  });
});
