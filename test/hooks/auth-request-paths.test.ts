// Path confusion on the auth-request family, with the requests each proxy really sends: nginx
// auth_request (X-Original-URI $request_uri, client headers passed through), Traefik forwardAuth
// (X-Forwarded-Method/-Proto/-Host/-Uri/-For, client headers copied through) and Envoy ext_authz
// over HTTP (path_prefix + the request path as the client sent it; Envoy does not normalise by
// default). Requests go over a raw socket so no client library resolves the dot segments first.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { ADMIN_KEY, testApp } from '../helpers/app.js';
import { DEFAULT_ACCOUNT_META } from '../../src/management/accounts.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { CONFUSING_PATHS } from '../helpers/confusing-paths.js';
import { rawRequest } from '../helpers/raw-http.js';
import { idChecked } from '../helpers/decision-id.js';

const REFUSED = { allowed: false, reason: 'stream_not_allowed', message: 'Unauthorized: Stream name not allowed' };

/** The status and JSON body of a request written byte for byte. */
const raw = async (port: number, target: string, headers: Record<string, string>) => {
  const r = await rawRequest(port, target, headers);
  return { status: r.status, body: r.json };
};

/** Header values cannot carry CR or LF; a request target cannot carry spaces or controls. */
const fitsHeader = (p: string) => !/[\r\n]/.test(p);
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a request target cannot carry
const fitsTarget = (p: string) => p.startsWith('/') && !/[\s\u0000-\u001f\u007f#]/.test(p);

describe('auth-request: a path a proxy could serve as another stream is refused, never resolved', () => {
  let f: HookFixture;
  let server: Server;
  let port: number;
  let cam1: { id: number; token: string };
  let premiumViewer: { id: number; token: string };

  before(async () => {
    const overrides = {
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: '', accountInPath: false, mediamtx: { allowApiFrom: [], pathPrefix: '' } },
      enforcement: { defaultAccountId: '' },
    };
    f = await hookFixture(overrides);
    // f.acct is the default account here (as the one a first start creates): token-less viewers
    // belong to it. An app reads the default account when it starts: the served one starts now.
    await f.t.services.store.setMeta(DEFAULT_ACCOUNT_META, f.acct.id, true);
    const served = await testApp(f.t.services.store, overrides, { geo: fixedGeo({}) });
    await f.token('publish', { streams: [{ streamName: 'premium' }], subscribeRequiresAuth: true });
    cam1 = await f.token('subscribe', { streams: [{ streamName: 'cam1' }] });
    premiumViewer = await f.token('subscribe', { streams: [{ streamName: 'premium' }] });
    server = served.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const nginx = (uri: string, extra: Record<string, string> = {}) =>
    raw(port, '/hooks/auth-request', { 'X-Original-URI': uri, 'X-Original-Method': 'GET', 'X-Forwarded-For': '203.0.113.7', ...extra });
  const traefik = (uri: string, extra: Record<string, string> = {}) =>
    raw(port, '/hooks/auth-request', {
      'X-Forwarded-Method': 'GET',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'video.example.com',
      'X-Forwarded-Uri': uri,
      'X-Forwarded-For': '203.0.113.7',
      ...extra,
    });
  const envoy = (uri: string, extra: Record<string, string> = {}) =>
    raw(port, `/hooks/auth-request${uri}`, { 'x-forwarded-for': '203.0.113.7', 'x-envoy-expected-rq-timeout-ms': '500', 'content-length': '0', ...extra });

  /** A decided refusal's answer with its decisionId checked and set aside. */
  const bodyIdChecked = <R extends { body: unknown }>(r: R): R => ({ ...r, body: idChecked(r.body) });

  it('the baseline: the open stream is served, premium needs its token, another stream is refused', async () => {
    for (const send of [nginx, traefik, envoy]) {
      assert.deepEqual(await send('/hls/open/index.m3u8'), { status: 200, body: { allowed: true } });
      assert.deepEqual(bodyIdChecked(await send('/hls/premium/index.m3u8')), { status: 401, body: { allowed: false, reason: 'token_required', message: 'Unauthorized: Token required' } });
      assert.deepEqual(await send(`/hls/premium/index.m3u8?token=${premiumViewer.token}`), { status: 200, body: { allowed: true } });
      assert.deepEqual(bodyIdChecked(await send(`/hls/premium/seg-1.ts?token=${cam1.token}`)), { status: 403, body: REFUSED });
    }
  });

  it('nginx (X-Original-URI): every confusing spelling, with no token and with a token for another stream, is a 403 stream_not_allowed', async () => {
    for (const p of CONFUSING_PATHS.filter(fitsHeader)) {
      assert.deepEqual(await nginx(p), { status: 403, body: REFUSED }, `no token: ${JSON.stringify(p)}`);
      const viaCam1 = p.replaceAll('/open', '/cam1');
      assert.deepEqual(await nginx(`${viaCam1}?token=${cam1.token}`), { status: 403, body: REFUSED }, `cam1 token: ${JSON.stringify(viaCam1)}`);
      assert.deepEqual(await nginx(viaCam1, { Authorization: `Bearer ${cam1.token}` }), { status: 403, body: REFUSED }, `cam1 bearer: ${JSON.stringify(viaCam1)}`);
    }
  });

  it('Traefik (X-Forwarded-Uri): the same spellings are refused the same way', async () => {
    for (const p of CONFUSING_PATHS.filter(fitsHeader)) {
      assert.deepEqual(await traefik(p), { status: 403, body: REFUSED }, JSON.stringify(p));
      const viaCam1 = p.replaceAll('/open', '/cam1');
      assert.deepEqual(await traefik(`${viaCam1}?token=${cam1.token}`), { status: 403, body: REFUSED }, JSON.stringify(viaCam1));
    }
  });

  it('Envoy (path_prefix suffix, forwarded as sent): the same spellings are refused the same way', async () => {
    const sendable = CONFUSING_PATHS.filter(fitsTarget);
    assert.ok(sendable.length >= 40, `only ${sendable.length} spellings fit a request line`);
    for (const p of sendable) {
      assert.deepEqual(await envoy(p), { status: 403, body: REFUSED }, JSON.stringify(p));
      const viaCam1 = p.replaceAll('/open', '/cam1');
      assert.deepEqual(await envoy(viaCam1, { authorization: `Bearer ${cam1.token}` }), { status: 403, body: REFUSED }, JSON.stringify(viaCam1));
    }
  });

  it('a client-supplied forwarding header that disagrees with the proxy is refused (Traefik and nginx pass client headers through)', async () => {
    // Traefik sets X-Forwarded-Uri itself and copies the client's X-Original-URI
    assert.deepEqual(await traefik('/hls/premium/index.m3u8', { 'X-Original-URI': '/hls/open/index.m3u8' }), { status: 403, body: REFUSED });
    // nginx sets X-Original-URI itself and passes the client's X-Forwarded-Uri
    assert.deepEqual(await nginx('/hls/premium/index.m3u8', { 'X-Forwarded-Uri': '/hls/open/index.m3u8' }), { status: 403, body: REFUSED });
    // Envoy forwarding every header: the real path is the suffix
    assert.deepEqual(await envoy('/hls/premium/index.m3u8', { 'x-original-uri': '/hls/open/index.m3u8' }), { status: 403, body: REFUSED });
    // two copies of one header arrive joined by ', ': never a path
    assert.deepEqual(await raw(port, '/hooks/auth-request', { 'X-Original-URI': '/hls/open/index.m3u8', 'x-original-uri': '/hls/premium/index.m3u8' }), { status: 403, body: REFUSED });
    // the same value twice is no disagreement
    assert.deepEqual(await traefik('/hls/open/index.m3u8', { 'X-Original-URI': '/hls/open/index.m3u8' }), { status: 200, body: { allowed: true } });
  });

  it('legitimate names keep working: dots inside names, ~, -, _, %20, UTF-8, query strings with tokens', async () => {
    const v = await f.token('subscribe', { streams: [{ streamName: 'cam.1' }, { streamName: 'a-b_c~d' }, { streamName: 'my cam' }, { streamName: 'café' }] });
    for (const send of [nginx, traefik, envoy]) {
      for (const p of ['/hls/cam.1/index.m3u8', '/hls/a-b_c~d/seg-1.ts', '/hls/my%20cam/index.m3u8', '/hls/caf%C3%A9/index.m3u8', '/hls/cam.1.m3u8', '/hls/a-b_c~d-17.ts']) {
        assert.deepEqual(await send(`${p}?token=${v.token}&t=1`), { status: 200, body: { allowed: true } }, p);
        assert.deepEqual(await send(`${p}?x=%2F..%2F&token=${v.token}`), { status: 200, body: { allowed: true } }, `query is not the path: ${p}`);
      }
    }
  });

  it('with secureViewer on, a token for cam1 does not open /hls/cam1/../premium (nor any other spelling)', async () => {
    const put = await request(f.t.app).put(`/admin/accounts/${f.acct.id}`).set('authorization', `Bearer ${ADMIN_KEY}`).send({ secureViewer: true });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    try {
      assert.deepEqual(await nginx(`/hls/cam1/index.m3u8?token=${cam1.token}`), { status: 200, body: { allowed: true } });
      for (const p of ['/hls/cam1/../premium/index.m3u8', '/hls/cam1%2F..%2Fpremium/index.m3u8', '/hls/cam1/%2e%2e/premium/index.m3u8', '/hls/cam1/..%2Fpremium/seg-1.ts']) {
        assert.deepEqual(await nginx(`${p}?token=${cam1.token}`), { status: 403, body: REFUSED }, p);
        assert.deepEqual(await traefik(`${p}?token=${cam1.token}`), { status: 403, body: REFUSED }, p);
        assert.deepEqual(await envoy(`${p}?token=${cam1.token}`), { status: 403, body: REFUSED }, p);
      }
    } finally {
      await request(f.t.app).put(`/admin/accounts/${f.acct.id}`).set('authorization', `Bearer ${ADMIN_KEY}`).send({ secureViewer: false });
    }
  });
});
