// nginx-rtmp-module notify calls, as the module sends them (form-encoded, raw appended args). Each
// test has an app and tokens of its own, so any one runs alone or in any order.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { trackingRow } from '../helpers/analytics.js';

const SESSION = 'app=live&flashver=FMLE%2F3.0%20%28compatible%3B%20FMSc%2F1.0%29&swfurl=&tcurl=rtmp%3A%2F%2Fhost%3A1935%2Flive&pageurl=&addr=203.0.113.7&clientid=12';

describe('nginx-rtmp adapter', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  beforeEach(async () => {
    f = await hookFixture();
    pub = await f.token('publish', { record: true });
    sub = await f.token('subscribe');
  });
  afterEach(() => f.close());
  const post = (body: string) =>
    request(f.t.app).post('/hooks/nginx-rtmp').set('content-type', 'application/x-www-form-urlencoded').set('connection', 'close').send(body);

  it('admits on_publish with the token appended by nginx, and the stream goes live', async () => {
    const r = await post(`${SESSION}&call=publish&name=cam1&type=live&token=${pub.token}`);
    assert.equal(r.status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
    const started = f.events.find((e) => e.type === 'feeds' && e.event === 'started');
    assert.ok(started && started.type === 'feeds');
    assert.deepEqual({ ...started.data, feedId: undefined, started: undefined }, {
      feedId: undefined,
      accountId: f.acct.id,
      name: 'cam1',
      streamId: `${f.acct.id}/cam1`,
      started: undefined,
      active: true,
      tokenId: pub.id,
    });
  });

  it('ends the feed on publish_done with the same feedId, and ignores the following done', async () => {
    assert.equal((await post(`${SESSION}&call=publish&name=cam1&type=live&token=${pub.token}`)).status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
    const r = await post(`${SESSION}&call=publish_done&name=cam1&token=${pub.token}`);
    assert.equal(r.status, 200);
    assert.equal((await post(`${SESSION}&call=done&name=cam1&token=${pub.token}`)).status, 200);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
    const feeds = f.events.filter((e) => e.type === 'feeds');
    assert.deepEqual(feeds.map((e) => e.type === 'feeds' && e.event), ['started', 'ended']);
    const [a, b] = feeds as Array<Extract<(typeof feeds)[number], { type: 'feeds' }>>;
    assert.equal(a.data.feedId, b.data.feedId);
    assert.equal(b.data.active, false);
    assert.equal(typeof b.data.ended, 'number');
  });

  it('refuses with 403 a wrong token, a wrong stream name, and no token', async () => {
    for (const body of [
      `${SESSION}&call=publish&name=cam1&type=live&token=${'0'.repeat(64)}`,
      `${SESSION}&call=publish&name=other&type=live&token=${pub.token}`,
      `${SESSION}&call=publish&name=cam1&type=live`,
      `${SESSION}&call=publish&name=cam1&type=live&token=${sub.token}`,
    ]) {
      const r = await post(body);
      assert.equal(r.status, 403, body.slice(-80));
    }
  });

  it('takes the module\'s own name when a client arg repeats it, and decodes percent-escapes', async () => {
    const spoof = await post(`${SESSION}&call=publish&name=cam1&type=live&name=other&token=${pub.token}`);
    assert.equal(spoof.status, 200);
    const evil = await post(`${SESSION}&call=publish&name=other&type=live&name=cam1&token=${pub.token}`);
    assert.equal(evil.status, 403, 'the appended name=cam1 does not override the stream being published');
    const p2 = await f.token('publish', { streams: [{ streamName: 'a b/c' }] });
    assert.equal((await post(`${SESSION}&call=publish&name=a%20b%2Fc&type=live&token=${p2.token}`)).status, 200);
  });

  it('finds the token in tcurl when it was put on the application URL', async () => {
    const tcurl = encodeURIComponent(`rtmp://host:1935/live?token=${pub.token}`);
    const r = await post(`app=live&tcurl=${tcurl}&addr=203.0.113.7&clientid=13&call=publish&name=cam1&type=live`);
    assert.equal(r.status, 200);
  });

  it('admits on_play with a subscribe token (and the GET variant), answers connect and the done calls with 200', async () => {
    assert.equal((await post(`${SESSION}&call=play&name=cam1&start=-2000&duration=0&reset=0&token=${sub.token}`)).status, 200);
    assert.equal((await request(f.t.app).get(`/hooks/nginx-rtmp?${SESSION}&call=play&name=cam1&token=${sub.token}`)).status, 200);
    assert.equal((await request(f.t.app).get(`/hooks/nginx-rtmp?${SESSION}&call=play&name=cam1&token=bad`)).status, 403);
    assert.equal((await post(`${SESSION.replace('clientid=12', '')}&call=connect&epoch=1`)).status, 200);
    assert.equal((await post(`${SESSION}&call=play_done&name=cam1`)).status, 200);
  });

  it('on_update (update_publish / update_play, and a bare update): a deleted token ends the session; by default a disabled, refreshed or expired one does not', async () => {
    const p = await f.token('publish');
    const publisher = `${SESSION.replace('clientid=12', 'clientid=40')}&name=cam1&token=${p.token}`;
    assert.equal((await post(`${publisher}&call=publish&type=live`)).status, 200);
    await f.settle();
    assert.equal((await post(`${publisher}&call=update_publish&time=30&timestamp=30000`)).status, 200);
    await f.api('put', `/api/publish_token/${p.id}`, { isActive: false });
    assert.equal((await post(`${publisher}&call=update_publish&time=60&timestamp=60000`)).status, 200, 'disabled: keeps streaming (terminateOn [delete])');
    assert.equal((await post(`${publisher}&call=publish&type=live`)).status, 403, 'a new publish with the disabled token is refused');
    await f.api('put', `/api/publish_token/${p.id}`, { isActive: true, refreshToken: true });
    assert.equal((await post(`${publisher}&call=update_publish&time=90&timestamp=90000`)).status, 200, 'refreshed: keeps streaming');
    await f.api('delete', `/api/publish_token/${p.id}`);
    const cut = await post(`${publisher}&call=update_publish&time=120&timestamp=120000`);
    assert.deepEqual([cut.status, cut.text], [403, 'Unauthorized: Invalid token'], 'deleted: the session ends');

    const s = await f.token('subscribe');
    const viewer = `${SESSION.replace('clientid=12', 'clientid=41')}&name=cam1&token=${s.token}`;
    assert.equal((await post(`${viewer}&call=play&start=-2000`)).status, 200);
    await f.settle();
    assert.equal((await post(`${viewer}&call=update_play&time=30`)).status, 200);
    await f.api('delete', `/api/subscribe_token/${s.id}`);
    assert.equal((await post(`${viewer}&call=update_play&time=60`)).status, 403);
    assert.equal((await post(`${viewer}&call=update&time=60`)).status, 403, 'a bare update is resolved from the session');
  });

  it('with enforcement.terminateOn [delete, disable, refresh, expire] each of those ends a session at its next on_update; a rule edited since admission does not', async (t) => {
    // The app and its store read the mocked clock (from before they are made): the expiry comes when it is moved on.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-05-01T10:00:00.000Z') });
    const g = await hookFixture({ enforcement: { terminateOn: ['delete', 'disable', 'refresh', 'expire'] } });
    try {
      const send = (body: string) =>
        request(g.t.app).post('/hooks/nginx-rtmp').set('content-type', 'application/x-www-form-urlencoded').set('connection', 'close').send(body);
      const session = async (n: number, body: Record<string, unknown> = {}) => {
        const p = await g.token('publish', body);
        const b = `${SESSION.replace('clientid=12', `clientid=${n}`)}&name=cam1&token=${p.token}`;
        assert.equal((await send(`${b}&call=publish&type=live`)).status, 200);
        await g.settle();
        assert.equal((await send(`${b}&call=update_publish`)).status, 200);
        return { ...p, b };
      };
      const disabled = await session(60);
      await g.api('put', `/api/publish_token/${disabled.id}`, { isActive: false });
      assert.equal((await send(`${disabled.b}&call=update_publish`)).status, 403, 'disable');
      const refreshed = await session(61);
      await g.api('put', `/api/publish_token/${refreshed.id}`, { refreshToken: true });
      assert.equal((await send(`${refreshed.b}&call=update_publish`)).status, 403, 'refresh');
      const expiring = await session(62);
      await g.api('put', `/api/publish_token/${expiring.id}`, { expiresOn: new Date(Date.now() + 1500).toISOString() });
      t.mock.timers.tick(1499);
      assert.equal((await send(`${expiring.b}&call=update_publish`)).status, 200, 'not expired yet');
      t.mock.timers.tick(1);
      assert.equal((await send(`${expiring.b}&call=update_publish`)).status, 403, 'expire');
      const edited = await session(63);
      await g.api('put', `/api/publish_token/${edited.id}`, { addTokenStreams: [{ streamName: 'cam2' }], removeTokenStreams: ['cam1'] });
      assert.equal((await send(`${edited.b}&call=update_publish`)).status, 200, 'a stream rule edited since admission is not a termination trigger');
    } finally {
      await g.close();
    }
  });

  it('reports record_done as a completed recording of the publishing token', async () => {
    const body = `${SESSION.replace('clientid=12', 'clientid=50')}&name=cam1&token=${pub.token}`;
    await post(`${body}&call=publish&type=live`);
    assert.equal((await post(`${body}&call=record_done&recorder=rec1&path=%2Frec%2Fcam1-1.flv`)).status, 200);
    await f.settle();
    const rec = f.events.find((e) => e.type === 'recording');
    assert.ok(rec && rec.type === 'recording');
    assert.equal(rec.event, 'completed');
    assert.equal(rec.data.path, '/rec/cam1-1.flv');
    assert.equal(rec.data.tokenId, pub.id);
    assert.equal(rec.data.streamId, `${f.acct.id}/cam1`);
  });

  it('counts byte totals a done call carries (bytes_out/bytes_in, as some forks send) for the session\'s tracking id', async () => {
    const tracked = await f.token('subscribe', { tracking: { trackingId: 'rtmp-fans' } });
    const body = `${SESSION.replace('clientid=12', 'clientid=77')}&name=cam1&token=${tracked.token}`;
    assert.equal((await post(`${body}&call=play&start=0&duration=0&reset=0`)).status, 200);
    assert.equal((await post(`${body}&call=play_done&bytes_out=4096&bytes_in=12`)).status, 200);
    await f.settle();
    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
    const r = await f.api('get', `/api/analytics/tracking/total?trackingIds=rtmp-fans&startDate=${day}&stopDate=${next}`);
    assert.deepEqual(r.body.data, { 'rtmp-fans': [trackingRow('cam1', 4096, 12)] });
  });

  it('servers named in their notify URL keep connections numbered alike apart: a session limit counts both', async () => {
    const limited = await f.token('subscribe', { maxConcurrentSessions: 1 });
    const at = (p: string, body: string) => request(f.t.app).post(p).set('content-type', 'application/x-www-form-urlencoded').set('connection', 'close').send(body);
    const play = `${SESSION}&call=play&name=cam1&token=${limited.token}`;
    // two servers on one host: the same address, the same connection number
    assert.equal((await at('/hooks/nginx-rtmp/edge-1', play)).status, 200);
    const second = await at('/hooks/nginx-rtmp/edge-2', play);
    assert.deepEqual([second.status, second.text], [403, 'Unauthorized: Too many sessions for this token']);
    const live = (await f.api('get', `/api/sessions?tokenId=${limited.id}`)).body.data.data as Array<{ callerSessionId: string }>;
    assert.deepEqual(
      live.map((x) => x.callerSessionId),
      ['127.0.0.1/edge-1#12'],
    );
    // the named server's re-ask finds its session; the GET form takes the name too
    assert.equal((await at('/hooks/nginx-rtmp/edge-1', `${SESSION}&call=update_play&name=cam1&token=${limited.token}`)).status, 200);
    assert.equal((await request(f.t.app).get(`/hooks/nginx-rtmp/edge-1?${SESSION}&call=update_play&name=cam1&token=${limited.token}`)).status, 200);
    // what follows the path must be a name: a 400 that says so, and nothing registered
    for (const p of ['/hooks/nginx-rtmp/a/b', '/hooks/nginx-rtmp/-x', `/hooks/nginx-rtmp/${'n'.repeat(65)}`]) {
      const r = await at(p, `${SESSION.replace('clientid=12', 'clientid=13')}&call=play&name=cam1&token=${sub.token}`);
      assert.deepEqual([r.status, r.text], [400, 'The path below /hooks/nginx-rtmp/ names the server: 1 to 64 letters, digits, dots, underscores or hyphens'], p);
    }
    assert.deepEqual((await f.api('get', `/api/sessions?tokenId=${sub.id}`)).body.data.data, []);
  });

  it('refuses a JSON body with 415', async () => {
    const r = await request(f.t.app).post('/hooks/nginx-rtmp').send({ call: 'publish', name: 'cam1', token: pub.token });
    assert.equal(r.status, 415);
  });

  it('a re-ask of a connection the registry no longer knows (its entry lapsed) registers it again', async (t) => {
    // The app and its store read the mocked clock (from before they are made): the entry lapses when it is moved on.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-05-01T10:00:00.000Z') });
    const g = await hookFixture({ enforcement: { liveTtlSeconds: 1 } });
    try {
      const send = (body: string) =>
        request(g.t.app).post('/hooks/nginx-rtmp').set('content-type', 'application/x-www-form-urlencoded').set('connection', 'close').send(body);
      const s = await g.token('subscribe');
      const viewer = `${SESSION.replace('clientid=12', 'clientid=77')}&name=cam1&token=${s.token}`;
      assert.equal((await send(`${viewer}&call=play&start=-2000`)).status, 200);
      await g.settle();
      const listed = async () => (await g.api('get', `/api/sessions?tokenId=${s.id}`)).body.data.data.map((x: { callerSessionId: string }) => x.callerSessionId);
      t.mock.timers.tick(999);
      assert.equal((await listed()).length, 1);
      t.mock.timers.tick(1);
      assert.deepEqual(await listed(), [], 'lapsed: no update for liveTtlSeconds');
      assert.equal((await send(`${viewer}&call=update_play&time=30`)).status, 200);
      await g.settle();
      assert.deepEqual(await listed(), ['127.0.0.1#77'], 'registered again by the re-ask');
    } finally {
      await g.close();
    }
  });
});
