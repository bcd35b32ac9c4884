// SRT stream ids in the standard syntax through the real app: /hooks/authorize with `srtStreamId`
// (the stream, the action and the token from the id), and SRS, which reads the id itself and passes
// its custom keys as `param`. Each test has an app and tokens of its own.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

const bad = (errors: Record<string, string[]>) => ({ allowed: false, reason: 'bad_request', message: 'Validation errors', errors });

describe('/hooks/authorize with srtStreamId', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  beforeEach(async () => {
    f = await hookFixture();
    pub = await f.token('publish', { streams: [{ streamName: 'cam1' }] });
    sub = await f.token('subscribe', { streams: [{ streamName: 'cam1' }], allowedOrigins: ['player.example.com'] });
  });
  afterEach(() => f.close());
  const authorize = (body: object) => request(f.t.app).post('/hooks/authorize').send(body);

  it('admits a publisher whose id names the stream, the mode and the token', async () => {
    const r = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${pub.token}`, clientIp: '203.0.113.7' });
    assert.equal(r.status, 200);
    assert.equal(r.body.allowed, true);
    assert.equal(r.body.streamName, 'cam1');
    assert.equal(r.body.accountId, f.acct.id);
    assert.equal(r.body.tokenId, pub.id);
  });

  it('admits a viewer (m=request, the default) as SRT: origin rules are skipped', async () => {
    const r = await authorize({ srtStreamId: `#!::r=cam1,sg_token=${sub.token}` });
    assert.equal(r.status, 200);
    assert.equal(r.body.tokenId, sub.id);
    // the same token over HTTP needs its origin
    const hls = await authorize({ srtStreamId: `#!::r=cam1,sg_token=${sub.token}`, protocol: 'hls' });
    assert.deepEqual([hls.status, hls.body.reason], [403, 'origin_not_allowed']);
  });

  it('refuses a stream the token does not name with 403', async () => {
    const r = await authorize({ srtStreamId: `#!::r=cam2,m=publish,sg_token=${pub.token}` });
    assert.equal(r.status, 403);
    assert.deepEqual([r.body.allowed, r.body.reason, r.body.message], [false, 'stream_not_allowed', 'Unauthorized: Stream name not allowed']);
  });

  it('decides on the action the mode names: a publish token asked with m=request is refused', async () => {
    const r = await authorize({ srtStreamId: `#!::r=cam1,m=request,sg_token=${pub.token}` });
    assert.equal(r.status, 401);
    assert.deepEqual([r.body.allowed, r.body.reason], [false, 'token_invalid']);
  });

  it('refuses a mode contradicting the action field with 400 naming it', async () => {
    const r = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${pub.token}`, action: 'subscribe' });
    assert.deepEqual([r.status, r.body], [400, bad({ action: ['m=publish of srtStreamId asks to publish, not to subscribe'] })]);
  });

  it('refuses explicit fields contradicting the id with 400 naming them, and takes agreeing ones', async () => {
    const stream = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${pub.token}`, streamName: 'cam2' });
    assert.deepEqual([stream.status, stream.body], [400, bad({ streamName: ['differs from the stream r of srtStreamId names'] })]);
    const token = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${pub.token}`, token: sub.token });
    assert.deepEqual([token.status, token.body], [400, bad({ token: ['differs from the sg_token of srtStreamId'] })]);
    assert.ok(!JSON.stringify(token.body).includes(pub.token) && !JSON.stringify(token.body).includes(sub.token));
    const agree = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${pub.token}`, action: 'publish', streamName: 'cam1', token: pub.token });
    assert.deepEqual([agree.status, agree.body.tokenId], [200, pub.id]);
  });

  it('refuses malformed ids with 400 and the reason, never a 5xx, nothing recorded', async () => {
    const cases: Array<[string, string]> = [
      [`#!:{"r":"cam1","sg_token":"${pub.token}"}`, 'the nested form #!:{…} is not supported; write #!::key=value,… pairs'],
      [`#!::r=cam1,m=publish,sg_token=${pub.token},x=1`, 'unknown key x: single-letter keys are reserved by the SRT access-control syntax (u, r, h, s, t, m)'],
      [`#!::r=cam1,r=cam2,m=publish,sg_token=${pub.token}`, 'key r is given twice'],
      [`#!::r=cam1,m=publish,sg_token=${pub.token},user_tags=a,b`, "pair 5 has no '=' (a value cannot hold a comma: the syntax has no escaping)"],
      [`#!::r=cam1,m=publish,sg_token=${pub.token},user_pad=${'p'.repeat(420)}`, 'over 512 characters (524), the longest stream id SRT carries'],
      [`#!::r=cam1,m=bidirectional,sg_token=${pub.token}`, 'm=bidirectional is not admitted: ask for m=request (receive) or m=publish (send)'],
      [`publish:cam1:user:${pub.token}`, 'not the standard syntax: a stream id starts with #!::'],
    ];
    for (const [srtStreamId, problem] of cases) {
      const r = await authorize({ srtStreamId });
      assert.deepEqual([r.status, r.body], [400, bad({ srtStreamId: [problem] })], srtStreamId);
    }
    const notText = await authorize({ srtStreamId: 5 });
    assert.deepEqual([notText.status, notText.body], [400, bad({ srtStreamId: ['Invalid input: expected string, received number'] })]);
    const unknown = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${pub.token}`, extra: 1 });
    assert.equal(unknown.status, 400);
    await f.settle();
    assert.deepEqual(f.events, []);
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
  });

  it('reads the token from hooks.srt.tokenKey', async () => {
    await f.close();
    f = await hookFixture({ hooks: { srt: { tokenKey: 'acme_key' } } });
    const t = await f.token('publish', { streams: [{ streamName: 'cam1' }] });
    const r = await authorize({ srtStreamId: `#!::r=cam1,m=publish,acme_key=${t.token}` });
    assert.deepEqual([r.status, r.body.tokenId], [200, t.id]);
    const other = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${t.token}` });
    assert.deepEqual([other.status, other.body.reason], [401, 'token_required']);
  });

  it('reads r as <account>/<stream> with hooks.accountInPath', async () => {
    await f.close();
    f = await hookFixture({ hooks: { accountInPath: true } });
    const t = await f.token('publish', { streams: [{ streamName: 'cam1' }] });
    const r = await authorize({ srtStreamId: `#!::r=${f.acct.id}/cam1,m=publish,sg_token=${t.token}` });
    assert.deepEqual([r.status, r.body.streamName, r.body.accountId, r.body.tokenId], [200, 'cam1', f.acct.id, t.id]);
    const none = await authorize({ srtStreamId: `#!::r=cam1,m=publish,sg_token=${t.token}` });
    assert.deepEqual([none.status, none.body], [400, bad({ srtStreamId: ['r names no account: with hooks.accountInPath: true it is <account>/<stream>'] })]);
  });
});

describe('SRS with SRT stream ids', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  beforeEach(async () => {
    f = await hookFixture();
    pub = await f.token('publish', { streams: [{ streamName: 'livestream' }] });
  });
  afterEach(() => f.close());
  const srs = (body: object) => request(f.t.app).post('/hooks/srs').send(body);
  // What SRS sends for `srt://host:10080?streamid=#!::r=live/livestream,m=publish,sg_token=T,u=alice`:
  // r gives app and stream, m picks on_publish, the other keys become the param (without '?').
  const srtPublish = (param: string) => ({
    server_id: 'vid-0xk989d',
    service_id: 'svc1',
    action: 'on_publish',
    client_id: '7g5x2k1m',
    ip: '203.0.113.7',
    vhost: '__defaultVhost__',
    app: 'live',
    tcUrl: 'srt://198.51.100.1/live',
    stream: 'livestream',
    param,
    stream_url: '/live/livestream',
    stream_id: 'vid-124q9y3',
  });

  it('admits an SRT publisher whose id carries sg_token', async () => {
    const r = await srs(srtPublish(`sg_token=${pub.token}&u=alice`));
    assert.deepEqual([r.status, r.text], [200, '{"code":0}']);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
  });

  it('still reads token= (the query form, and ids written with token=)', async () => {
    const r = await srs(srtPublish(`token=${pub.token}`));
    assert.deepEqual([r.status, r.text], [200, '{"code":0}']);
    const both = await srs(srtPublish(`sg_token=${pub.token}&token=${pub.token}`));
    assert.deepEqual([both.status, both.text], [200, '{"code":0}']);
  });

  it('refuses token= and sg_token= naming different credentials with 400, nothing recorded', async () => {
    const r = await srs(srtPublish(`sg_token=${pub.token}&token=${'f'.repeat(64)}`));
    assert.deepEqual([r.status, r.body], [400, { code: 400, message: 'param: token and sg_token name different credentials' }]);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
  });

  it('refuses a wrong token with 403 as for any SRS refusal', async () => {
    const r = await srs(srtPublish(`sg_token=${'f'.repeat(64)}`));
    assert.deepEqual([r.status, r.body], [403, { code: 403, message: 'Unauthorized: Invalid token' }]);
  });
});
