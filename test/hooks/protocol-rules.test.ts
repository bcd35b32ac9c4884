// Origin rules apply where a protocol can carry an origin, and address rules on RTMP, RTSP and SRT
// follow the account's ipRulesOnRtmp (docs/api.md#decision-table, docs/api.md#rtmp), through the
// callers that decide such requests: nginx-rtmp's form hook, /hooks/authorize, MediaMTX, and the
// director and check endpoint for contrast. Each test has an app and tokens of its own.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { ADMIN_KEY } from '../helpers/app.js';

const SESSION = 'app=live&flashver=FMLE%2F3.0&swfurl=&tcurl=rtmp%3A%2F%2Fhost%3A1935%2Flive&pageurl=&addr=203.0.113.7';

describe('origins and address rules by protocol, on the callers', () => {
  let f: HookFixture;
  beforeEach(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: [], omeSecret: '', accountInPath: false, mediamtx: { allowApiFrom: [], pathPrefix: 'live/' } },
      // each case publishes one stream over several protocols in turn, never ending the sessions:
      // a second publisher (refused by default) is not what these cases judge
      enforcement: { publishConflict: 'allow' },
    });
  });
  afterEach(() => f.close());

  const rtmp = (body: string) =>
    request(f.t.app).post('/hooks/nginx-rtmp').set('content-type', 'application/x-www-form-urlencoded').set('connection', 'close').send(body);
  const authorize = (body: object) => request(f.t.app).post('/hooks/authorize').send(body);
  const mediamtx = (over: object) =>
    request(f.t.app)
      .post('/hooks/mediamtx/auth')
      .send({ ip: '203.0.113.7', user: '', password: '', token: '', action: 'publish', path: 'live/cam1', protocol: 'rtmp', id: null, query: '', ...over });
  const setIpRulesOnRtmp = async (on: boolean) => {
    const r = await request(f.t.app).put(`/admin/accounts/${f.acct.id}`).set('authorization', `Bearer ${ADMIN_KEY}`).send({ ipRulesOnRtmp: on });
    assert.deepEqual([r.status, r.body.data?.ipRulesOnRtmp], [200, on], JSON.stringify(r.body));
  };

  it('nginx-rtmp: a publish token with allowedOrigins publishes over RTMP (no Origin to send), and its stream rule still holds', async () => {
    const pub = await f.token('publish', { allowedOrigins: ['studio.example.com'] });
    const ok = await rtmp(`${SESSION}&clientid=1&call=publish&name=cam1&type=live&token=${pub.token}`);
    assert.equal(ok.status, 200, ok.text);
    const other = await rtmp(`${SESSION}&clientid=2&call=publish&name=cam2&type=live&token=${pub.token}`);
    assert.equal(other.status, 403, 'the origin rule is skipped, not the others');
    const sub = await f.token('subscribe', { allowedOrigins: ['player.example.com'] });
    assert.equal((await rtmp(`${SESSION}&clientid=3&call=play&name=cam1&token=${sub.token}`)).status, 200, 'an RTMP viewer too');
  });

  it('/hooks/authorize: protocol rtmp, rtsp or srt skips origin rules; the director, HTTP delivery and a caller naming no protocol still need an allowed origin', async () => {
    const sub = await f.token('subscribe', { allowedOrigins: ['player.example.com'] });
    for (const protocol of ['rtmp', 'RTSP', 'srt', 'rtmps']) {
      const r = await authorize({ action: 'subscribe', token: sub.token, streamName: 'cam1', protocol });
      assert.deepEqual([r.status, r.body.allowed, r.body.reason], [200, true, 'allowed'], protocol);
    }
    for (const protocol of ['hls', 'webrtc', undefined]) {
      const r = await authorize({ action: 'subscribe', token: sub.token, streamName: 'cam1', ...(protocol ? { protocol } : {}) });
      assert.deepEqual([r.status, r.body.reason], [403, 'origin_not_allowed'], String(protocol));
      const from = await authorize({ action: 'subscribe', token: sub.token, streamName: 'cam1', origin: 'https://player.example.com', ...(protocol ? { protocol } : {}) });
      assert.equal(from.status, 200, String(protocol));
    }
    const director = await request(f.t.app).post('/api/director/subscribe').set('authorization', `Bearer ${sub.token}`).send({ streamName: 'cam1' });
    assert.deepEqual([director.status, director.body.data.reason], [403, 'origin_not_allowed'], 'the director without Origin or Referer');
  });

  it('MediaMTX: RTSP and SRT skip origin rules; its WebRTC and HLS requests (which carry no origin field) are refused by them', async () => {
    const pub = await f.token('publish', { allowedOrigins: ['studio.example.com'] });
    for (const protocol of ['rtsp', 'srt', 'rtmp', 'rtsps']) {
      const r = await mediamtx({ protocol, password: pub.token, id: `p-${protocol}` });
      assert.deepEqual([r.status, r.body], [200, { allowed: true }], protocol);
    }
    const sub = await f.token('subscribe', { allowedOrigins: ['player.example.com'] });
    for (const protocol of ['webrtc', 'hls']) {
      const refused = await mediamtx({ protocol, action: 'read', token: sub.token, id: `s-${protocol}` });
      assert.deepEqual([refused.status, refused.body.reason], [403, 'origin_not_allowed'], protocol);
    }
  });

  it('ipRulesOnRtmp on (the default): address rules hold on RTMP, RTSP and SRT on every caller', async () => {
    const pub = await f.token('publish', { allowedIpAddresses: ['198.51.100.0/24'] });
    assert.equal((await rtmp(`${SESSION}&clientid=1&call=publish&name=cam1&type=live&token=${pub.token}`)).status, 403);
    const r = await authorize({ action: 'publish', token: pub.token, streamName: 'cam1', protocol: 'rtmp', clientIp: '203.0.113.7' });
    assert.deepEqual([r.status, r.body.reason], [403, 'ip_not_allowed']);
    for (const protocol of ['rtsp', 'srt']) {
      const m = await mediamtx({ protocol, password: pub.token, id: `on-${protocol}` });
      assert.deepEqual([m.status, m.body.reason], [403, 'ip_not_allowed'], protocol);
    }
  });

  it('ipRulesOnRtmp off: RTMP, RTSP and SRT skip allowedIpAddresses and bind nothing; WebRTC, HLS and the director keep them; on again, they hold again', async () => {
    const pub = await f.token('publish', { allowedIpAddresses: ['198.51.100.0/24'] });
    const bound = await f.token('publish', { streams: [{ streamName: 'cam9' }], bindIpsOnUsage: 1 });
    // decided (and cached) once with the rules on, so the change below must reach the cached entry
    assert.equal((await rtmp(`${SESSION}&clientid=1&call=publish&name=cam1&type=live&token=${pub.token}`)).status, 403);
    await setIpRulesOnRtmp(false);

    assert.equal((await rtmp(`${SESSION}&clientid=2&call=publish&name=cam1&type=live&token=${pub.token}`)).status, 200, 'nginx-rtmp');
    const viaAuthorize = await authorize({ action: 'publish', token: pub.token, streamName: 'cam1', protocol: 'rtmp', clientIp: '203.0.113.8' });
    assert.deepEqual([viaAuthorize.status, viaAuthorize.body.reason], [200, 'allowed'], '/hooks/authorize with protocol rtmp');
    for (const protocol of ['rtsp', 'srt']) {
      const m = await mediamtx({ protocol, password: pub.token, path: `live/cam1`, id: `off-${protocol}` });
      assert.deepEqual([m.status, m.body], [200, { allowed: true }], `MediaMTX ${protocol}`);
    }
    for (const protocol of ['webrtc', 'hls']) {
      const m = await authorize({ action: 'publish', token: pub.token, streamName: 'cam1', protocol, clientIp: '203.0.113.7' });
      assert.deepEqual([m.status, m.body.reason], [403, 'ip_not_allowed'], protocol);
    }
    const director = await request(f.t.app).post('/api/director/publish').set('authorization', `Bearer ${pub.token}`).send({ streamName: 'cam1' });
    assert.deepEqual([director.status, director.body.data?.reason], [403, 'ip_not_allowed'], 'the director answers for any protocol: the rules hold');

    // bind on usage over RTMP binds nothing while off
    assert.equal((await rtmp(`${SESSION}&clientid=3&call=publish&name=cam9&type=live&token=${bound.token}`)).status, 200);
    assert.deepEqual((await f.api('get', `/api/publish_token/${bound.id}`)).body.data.boundIpAddresses, []);
    const check = await f.api('post', `/api/publish_token/${pub.id}/check`, { streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'rtsp' });
    assert.deepEqual(
      [check.body.data.allowed, check.body.data.rules.find((r: { rule: string }) => r.rule === 'IP address allowed')],
      [true, { rule: 'IP address allowed', reason: 'ip_not_allowed', result: 'skipped', detail: "IP filters are not applied to RTSP (the account's ipRulesOnRtmp is off)" }],
    );

    await setIpRulesOnRtmp(true);
    assert.equal((await rtmp(`${SESSION}&clientid=4&call=publish&name=cam1&type=live&token=${pub.token}`)).status, 403, 'on again: refused at once');
    const m = await mediamtx({ protocol: 'srt', password: pub.token, id: 'on-again' });
    assert.deepEqual([m.status, m.body.reason], [403, 'ip_not_allowed']);
    assert.equal((await rtmp(`${SESSION}&clientid=5&call=publish&name=cam9&type=live&token=${bound.token}`)).status, 200);
    assert.deepEqual((await f.api('get', `/api/publish_token/${bound.id}`)).body.data.boundIpAddresses, ['203.0.113.7'], 'and binds again');
  });

  it("turned back on, the rules reach the very next RTMP decision of tokens whose cached copy is taken unchecked (bind on usage, session limits)", async () => {
    const bound = await f.token('publish', { streams: [{ streamName: 'cam8' }, { streamName: 'cam9' }], bindIpsOnUsage: 1 });
    const limited = await f.token('publish', { streams: [{ streamName: 'cam6' }, { streamName: 'cam7' }], allowedIpAddresses: ['198.51.100.0/24'], maxUses: 10 });
    await setIpRulesOnRtmp(false);
    assert.equal((await rtmp(`${SESSION}&clientid=1&call=publish&name=cam8&type=live&token=${bound.token}`)).status, 200);
    assert.equal((await rtmp(`${SESSION}&clientid=2&call=publish&name=cam6&type=live&token=${limited.token}`)).status, 200, 'lifted');
    assert.deepEqual((await f.api('get', `/api/publish_token/${bound.id}`)).body.data.boundIpAddresses, []);
    // nothing else is decided in between: this instance still holds both tokens and the account as they were while off
    await setIpRulesOnRtmp(true);
    assert.equal((await rtmp(`${SESSION}&clientid=3&call=publish&name=cam7&type=live&token=${limited.token}`)).status, 403, 'the limited token: refused at once');
    assert.equal((await rtmp(`${SESSION}&clientid=4&call=publish&name=cam9&type=live&token=${bound.token}`)).status, 200);
    assert.deepEqual((await f.api('get', `/api/publish_token/${bound.id}`)).body.data.boundIpAddresses, ['203.0.113.7'], 'the bound token: bound, the rule applied');
    const elsewhere = await authorize({ action: 'publish', token: bound.token, streamName: 'cam9', protocol: 'rtmp', clientIp: '198.51.100.9' });
    assert.deepEqual([elsewhere.status, elsewhere.body.reason], [403, 'ip_not_allowed'], 'the one slot is taken');
  });
});
