// SRS http_hooks bodies (v5–v7 shapes, and client_id as an integer from older versions). Each test
// has an app and tokens of its own, so any one runs alone or in any order.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

describe('SRS adapter', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  beforeEach(async () => {
    f = await hookFixture();
    pub = await f.token('publish', { streams: [{ streamName: 'livestream' }] });
    sub = await f.token('subscribe', { streams: [{ streamName: 'livestream' }], allowedOrigins: ['player.example.com'] });
  });
  afterEach(() => f.close());
  const srs = (body: object) => request(f.t.app).post('/hooks/srs').send(body);
  const publish = (token: string, clientId: string | number = '341w361a') => ({
    server_id: 'vid-0xk989d',
    service_id: 'svc1',
    action: 'on_publish',
    client_id: clientId,
    ip: '203.0.113.7',
    vhost: '__defaultVhost__',
    app: 'live',
    tcUrl: 'rtmp://host/live',
    stream: 'livestream',
    param: `?token=${token}&salt=xyz`,
    stream_url: '/live/livestream',
    stream_id: 'vid-124q9y3',
  });

  it('admits on_publish with HTTP 200 and exactly {"code":0}', async () => {
    const r = await srs(publish(pub.token));
    assert.equal(r.status, 200);
    assert.equal(r.text, '{"code":0}');
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
  });

  it('refuses with 403 and a non-zero code', async () => {
    const r = await srs(publish('f'.repeat(64), 7));
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, { code: 403, message: 'Unauthorized: Invalid token' });
    const none = await srs({ ...publish(pub.token), param: '' });
    assert.deepEqual(none.body, { code: 403, message: 'Unauthorized: Token required' });
  });

  it('checks on_play with the pageUrl as origin (HTTP-FLV), client_id as integer', async () => {
    const play = { action: 'on_play', client_id: 42, ip: '203.0.113.8', vhost: '__defaultVhost__', app: 'live', stream: 'livestream', tcUrl: 'http://host/live', param: `?token=${sub.token}` };
    assert.equal((await srs({ ...play, pageUrl: 'https://player.example.com/watch' })).text, '{"code":0}');
    const elsewhere = await srs({ ...play, pageUrl: 'https://evil.example.net/' });
    assert.deepEqual([elsewhere.status, elsewhere.body.message], [403, 'Unauthorized: Origin not allowed']);
  });

  it('ends the feed on on_unpublish, and answers the other actions with {"code":0}', async () => {
    assert.equal((await srs(publish(pub.token))).text, '{"code":0}');
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
    const r = await srs({ ...publish(pub.token), action: 'on_unpublish' });
    assert.equal(r.text, '{"code":0}');
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
    assert.deepEqual(f.events.filter((e) => e.type === 'feeds').map((e) => e.type === 'feeds' && e.event), ['started', 'ended']);
    for (const action of ['on_connect', 'on_close', 'on_stop', 'on_hls']) {
      const x = await srs({ action, client_id: '1', ip: '203.0.113.7', app: 'live', stream: 'livestream', send_bytes: 10, recv_bytes: 20 });
      assert.equal(x.text, '{"code":0}', action);
    }
    const dvr = await srs({ ...publish(pub.token), action: 'on_dvr', cwd: '/srs', file: './objs/nginx/html/live/livestream.flv' });
    assert.equal(dvr.text, '{"code":0}');
    await f.settle();
    const rec = f.events.find((e) => e.type === 'recording');
    assert.ok(rec && rec.type === 'recording' && rec.data.path === './objs/nginx/html/live/livestream.flv');
  });

  it('answers 400 with a code for a body without an action', async () => {
    const r = await srs({ stream: 'x' });
    assert.deepEqual([r.status, r.body], [400, { code: 400, message: 'action is required' }]);
  });
});
