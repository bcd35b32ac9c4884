// Several tenants (hooks.accountInPath: true): every caller reads the account from the path, and a
// path that names no account names no stream. Deciding such a path on the default account (where
// streams are open) let anyone watch another tenant's secured HLS without a token.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import { hookFixture, type HookFixture } from '../hooks/fixture.js';
import { loadConfig, ConfigError } from '../../src/config/load.js';

const OME_SECRET = 'k';
const HOOKS = { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: OME_SECRET, accountInPath: true, mediamtx: { allowApiFrom: [], pathPrefix: '' } };

describe('accounts in paths: auth_request reads the account, and no caller falls back to the default account', () => {
  let f: HookFixture;
  let tenant: { id: string; secret: string };
  let viewer: string;
  let otherViewer: string;
  before(async () => {
    f = await hookFixture({ hooks: HOOKS });
    tenant = await f.t.account('tenant');
    const as = (secret: string) => async (kind: 'publish' | 'subscribe', body: Record<string, unknown>) => {
      const r = await request(f.t.app).post(`/api/${kind}_token`).set('authorization', `Bearer ${secret}`).send({ label: 'x', ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string };
    };
    await as(tenant.secret)('publish', { streams: [{ streamName: 'premium' }], subscribeRequiresAuth: true });
    viewer = (await as(tenant.secret)('subscribe', { streams: [{ streamName: 'premium' }] })).token;
    // another tenant (the fixture's own account) holds a subscribe token for streams of the same
    // names, and for a stream named like the tenant's id
    otherViewer = (await f.token('subscribe', { streams: [{ streamName: 'premium' }, { streamName: tenant.id }] })).token;
  });
  after(() => f.close());

  const ask = (uri: string) => request(f.t.app).get('/hooks/auth-request').set('x-original-uri', uri);

  it("refuses a token-less viewer of the tenant's secured stream on every built-in layout", async () => {
    for (const uri of [
      `/hls/${tenant.id}/premium/index.m3u8`,
      `/live/${tenant.id}/premium/index.m3u8`,
      `/dash/${tenant.id}/premium/manifest.mpd`,
      `/hls/${tenant.id}/premium.m3u8`,
      `/hls/${tenant.id}/premium-3.ts`,
      `/${tenant.id}/premium.m3u8`,
    ]) {
      const r = await ask(uri);
      assert.deepEqual([r.status, r.body.reason], [401, 'token_required'], uri);
    }
  });

  it("admits the tenant's own subscribe token and names the account in the allow headers", async () => {
    const r = await ask(`/hls/${tenant.id}/premium/index.m3u8?token=${viewer}`);
    assert.deepEqual([r.status, r.headers['x-streamgate-account-id'], r.headers['x-streamgate-stream']], [200, tenant.id, 'premium']);
  });

  it("refuses another tenant's subscribe token for a stream of the same name, or named like the account", async () => {
    // its streams name both `premium` and the tenant's id: read without the account, the path was
    // one of them on the token's own account
    const r = await ask(`/hls/${tenant.id}/premium/index.m3u8?token=${otherViewer}`);
    assert.deepEqual([r.status, r.body.reason], [403, 'stream_not_allowed']);
  });

  it('names no stream for a path without an account segment (403, never the default account)', async () => {
    for (const uri of ['/premium.m3u8', '/hls/premium/']) {
      const r = await ask(uri);
      assert.deepEqual([r.status, r.body.reason], [403, 'stream_not_allowed'], uri);
    }
  });

  it('every path-reading caller refuses a path without an account, with a token of the default account', async () => {
    const own = (await f.token('publish', { streams: [{ streamName: 'cam1' }] })).token;
    const rtmp = await request(f.t.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=203.0.113.7&clientid=1&call=publish&name=cam1&type=live&token=${own}`);
    assert.equal(rtmp.status, 403);
    const mtx = await request(f.t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token: own, action: 'publish', path: 'cam1', protocol: 'srt', id: 'i1', query: '' });
    assert.deepEqual([mtx.status, mtx.body.reason], [403, 'stream_not_allowed']);
    const srs = await request(f.t.app).post('/hooks/srs').send({ action: 'on_publish', client_id: 'c1', ip: '203.0.113.7', vhost: '__defaultVhost__', app: 'live', tcUrl: 'rtmp://h/live', stream: 'cam1', param: `?token=${own}` });
    assert.equal(srs.status, 403);
    const raw = JSON.stringify({ client: { address: '203.0.113.7', port: 1 }, request: { direction: 'incoming', protocol: 'srt', status: 'opening', url: `srt://h:9999/app/cam1?token=${own}` } });
    const ome = await request(f.t.app)
      .post('/hooks/ome/admission')
      .set('content-type', 'application/json')
      .set('x-ome-signature', createHmac('sha1', OME_SECRET).update(raw).digest('base64url'))
      .send(raw);
    assert.deepEqual([ome.status, ome.body.allowed], [200, false]);
    const gen = await request(f.t.app).post('/hooks/authorize').send({ action: 'publish', token: own, streamName: 'cam1' });
    assert.deepEqual([gen.status, Object.keys(gen.body.errors ?? {})], [400, ['accountId']]);
    // the same requests with the account segment are admitted
    const ok = await request(f.t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token: own, action: 'publish', path: `${f.acct.id}/cam1`, protocol: 'srt', id: 'i2', query: '' });
    assert.equal(ok.status, 200);
  });

  it('records no MediaMTX event for a path without an account (no feed starts on the default account)', async () => {
    const pub = await f.token('publish', { streams: [{ streamName: 'evt' }] });
    const event = (path: string, sourceId: string) => request(f.t.app).post('/hooks/mediamtx/event').send({ event: 'runOnReady', path, sourceId, query: `token=${pub.token}` });
    const active = async () => (await f.api('get', `/api/publish_token/active?streamId=${f.acct.id}/evt`)).body.data;
    const bare = await event('evt', 'src-bare');
    assert.equal(bare.status, 200);
    await f.settle();
    assert.deepEqual(await active(), { tokenIds: [] });
    // the same event with the account segment starts the feed
    await event(`${f.acct.id}/evt`, 'src-acct');
    await f.settle();
    assert.deepEqual(await active(), { tokenIds: [pub.id] });
  });
});

describe('accounts in paths: start-up', () => {
  it('refuses a configured auth_request pattern without an account group, naming it', () => {
    assert.throws(
      () => loadConfig({ env: {}, overrides: { hooks: { accountInPath: true, authRequest: { streamPatterns: ['^/hls/(?<stream>[^/]+)/'] } } } }),
      (e: unknown) => e instanceof ConfigError && /hooks\.authRequest\.streamPatterns\.0: needs a named group account/.test(e.message),
    );
    // with an account group, or the built-in patterns, it starts
    loadConfig({ env: {}, overrides: { hooks: { accountInPath: true, authRequest: { streamPatterns: ['^/hls/(?<account>[^/]+)/(?<stream>[^/]+)/'] } } } });
    loadConfig({ env: {}, overrides: { hooks: { accountInPath: true } } });
  });
});
