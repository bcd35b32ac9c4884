// WHIP publishers and WHEP players behind nginx auth_request (docs/callers.md#whip-and-whep-behind-auth_request):
// patterns with their own action and methods, the CORS preflight answered without a decision, and a
// session resource (PATCH, DELETE) checked with the same bearer token without a new use.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

const PATTERNS = [
  { pattern: '^/whip/(?<stream>[^/]+)$', action: 'publish', methods: ['POST'] },
  { pattern: '^/whip/(?<stream>[^/]+)/[^/]+$', action: 'publish', methods: ['PATCH', 'DELETE'], resource: true },
  { pattern: '^/whep/(?<stream>[^/]+)$', action: 'subscribe', methods: ['POST'] },
  { pattern: '^/whep/(?<stream>[^/]+)/[^/]+$', action: 'subscribe', methods: ['PATCH', 'DELETE'], resource: true },
  '^/hls/(?<stream>[^/]+)/',
];

describe('auth-request: WHIP and WHEP', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], accountInPath: false, authRequest: { streamPatterns: PATTERNS, action: 'subscribe', methodFrom: 'x-original-method' } },
      enforcement: { defaultAccountId: '' },
    });
    pub = await f.token('publish');
    sub = await f.token('subscribe');
  });
  after(() => f.close());

  /** An auth_request subrequest (always a GET) for an original request of `method` on `uri`. */
  const nginx = (method: string, uri: string, headers: Record<string, string> = {}) =>
    request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-original-method': method, 'x-forwarded-for': '203.0.113.7', ...headers });
  const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
  const decisions = async () => {
    const text = (await request(f.t.app).get('/metrics')).text;
    return text
      .split('\n')
      .filter((l) => l.startsWith('streamgate_decisions_total{'))
      .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  };

  it('a WHIP POST is a publish: the publish token is allowed on its stream only, a subscribe token is not', async () => {
    const ok = await nginx('POST', '/whip/cam1', bearer(pub.token));
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['x-streamgate-token-id'], String(pub.id));
    const other = await nginx('POST', '/whip/cam2', bearer(pub.token));
    assert.deepEqual([other.status, other.body.reason], [403, 'stream_not_allowed']);
    const viewer = await nginx('POST', '/whip/cam1', bearer(sub.token));
    assert.deepEqual([viewer.status, viewer.body.reason], [401, 'token_invalid']);
    const none = await nginx('POST', '/whip/cam1');
    assert.deepEqual([none.status, none.body.reason], [401, 'token_required']);
  });

  it('answers a CORS preflight with 200 and decides nothing', async () => {
    const before = await decisions();
    for (const uri of ['/whip/cam1', '/whip/cam1/5f1c2b0e', '/whep/cam1']) {
      const r = await nginx('OPTIONS', uri);
      assert.deepEqual([r.status, r.body], [200, { allowed: true, preflight: true }], uri);
    }
    assert.equal(await decisions(), before, 'no decision counted');
    // a preflight of a path only string patterns name is decided as before
    const hls = await nginx('OPTIONS', '/hls/cam1/index.m3u8');
    assert.deepEqual([hls.status, hls.body.reason], [401, 'token_required']);
  });

  it('PATCH and DELETE on the session URL are checked with the same token; other methods name no stream', async () => {
    for (const m of ['PATCH', 'DELETE']) {
      assert.equal((await nginx(m, '/whip/cam1/5f1c2b0e', bearer(pub.token))).status, 200, m);
      const none = await nginx(m, '/whip/cam1/5f1c2b0e');
      assert.deepEqual([none.status, none.body.reason], [401, 'token_required'], m);
      const other = await nginx(m, '/whip/cam2/5f1c2b0e', bearer(pub.token));
      assert.deepEqual([other.status, other.body.reason], [403, 'stream_not_allowed'], m);
    }
    for (const m of ['GET', 'PUT']) {
      const r = await nginx(m, '/whip/cam1', bearer(pub.token));
      assert.deepEqual([r.status, r.body.reason], [403, 'stream_not_allowed'], m);
    }
  });

  it('a WHEP POST uses a one-time token; its PATCH and DELETE do not use it again', async () => {
    const once = await f.token('subscribe', { maxUses: 1 });
    const first = await nginx('POST', '/whep/cam1', bearer(once.token));
    assert.equal(first.status, 200);
    for (const m of ['PATCH', 'DELETE', 'PATCH']) {
      const r = await nginx(m, '/whep/cam1/ab12', bearer(once.token));
      assert.equal(r.status, 200, `${m} ${JSON.stringify(r.body)}`);
      assert.equal(r.headers['set-cookie'], undefined, 'no viewer session starts');
    }
    // another viewer with the same token: its one use was the first POST's
    const again = await nginx('POST', '/whep/cam1', { ...bearer(once.token), 'x-forwarded-for': '198.51.100.4' });
    assert.deepEqual([again.status, again.body.reason], [403, 'uses_exhausted']);
  });

  it('takes the token from ?jwt= as from ?token= and the Authorization header', async () => {
    assert.equal((await nginx('POST', `/whip/cam1?jwt=${pub.token}`)).status, 200);
    assert.equal((await nginx('POST', `/whip/cam1?token=${pub.token}`)).status, 200);
  });

  it('reads ?token= first, then ?jwt=, then Authorization: Bearer', async () => {
    const wrong = 'f'.repeat(64);
    const token = await nginx('POST', `/whip/cam1?token=${wrong}&jwt=${pub.token}`, bearer(pub.token));
    assert.deepEqual([token.status, token.body.reason], [401, 'token_invalid'], '?token= wins');
    const jwt = await nginx('POST', `/whip/cam1?jwt=${wrong}`, bearer(pub.token));
    assert.deepEqual([jwt.status, jwt.body.reason], [401, 'token_invalid'], '?jwt= wins over the header');
    assert.equal((await nginx('POST', `/whip/cam1?jwt=${pub.token}`, bearer(wrong))).status, 200);
  });

  it("a disabled token's PATCH and DELETE are refused like its POST (the session ends by itself or by a cut)", async () => {
    const gone = await f.token('publish');
    assert.equal((await nginx('POST', '/whip/cam1', bearer(gone.token))).status, 200);
    assert.equal((await f.api('put', `/api/publish_token/${gone.id}`, { isActive: false })).status, 200);
    for (const m of ['POST', 'PATCH', 'DELETE']) {
      const r = await nginx(m, m === 'POST' ? '/whip/cam1' : '/whip/cam1/5f1c2b0e', bearer(gone.token));
      assert.deepEqual([r.status, r.body.reason], [401, 'token_disabled'], m);
    }
    // the preflight stays undecided
    assert.equal((await nginx('OPTIONS', '/whip/cam1/5f1c2b0e')).status, 200);
  });

  it('a method the proxy did not set names nothing a method-aware pattern is for', async () => {
    const r = await request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': '/whip/cam1', 'x-forwarded-for': '203.0.113.7', ...bearer(pub.token) });
    assert.deepEqual([r.status, r.body.reason], [403, 'stream_not_allowed']);
  });
});

describe('auth-request: WHIP and WHEP through Traefik and Envoy, and the server layouts of docs/callers.md', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  const bearer = (t: string) => ({ authorization: `Bearer ${t}`, 'x-forwarded-for': '203.0.113.7' });
  /** A fresh app (the previous one closed) reading the method from `methodFrom`. */
  const open = async (methodFrom: string, streamPatterns: unknown[]) => {
    await f?.close();
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'], accountInPath: false, authRequest: { streamPatterns, action: 'subscribe', methodFrom } },
      enforcement: { defaultAccountId: '' },
    });
    pub = await f.token('publish');
  };
  after(() => f?.close());

  it("Traefik (methodFrom x-forwarded-method): its X-Forwarded-Method says the method, the client's X-Original-Method is not read", async () => {
    await open('x-forwarded-method', PATTERNS);
    const traefik = (method: string, uri: string, headers: Record<string, string> = {}) =>
      request(f.t.app).get('/hooks/auth-request').set({ 'x-forwarded-uri': uri, 'x-forwarded-method': method, 'x-forwarded-proto': 'https', ...headers });
    assert.equal((await traefik('POST', '/whip/cam1', bearer(pub.token))).status, 200);
    assert.equal((await traefik('DELETE', '/whip/cam1/5f1c2b0e', bearer(pub.token))).status, 200);
    assert.deepEqual((await traefik('OPTIONS', '/whip/cam1')).body, { allowed: true, preflight: true });
    const spoofed = await traefik('POST', '/whip/cam1', { 'x-original-method': 'OPTIONS' });
    assert.deepEqual([spoofed.status, spoofed.body.reason], [401, 'token_required']);
  });

  it('Envoy (methodFrom request): the check request carries the original method and the path after the prefix', async () => {
    await open('request', PATTERNS);
    const path = '/hooks/auth-request/whip/cam1';
    assert.equal((await request(f.t.app).post(path).set(bearer(pub.token))).status, 200);
    assert.equal((await request(f.t.app).patch(`${path}/5f1c2b0e`).set(bearer(pub.token))).status, 200);
    assert.equal((await request(f.t.app).delete(`${path}/5f1c2b0e`).set(bearer(pub.token))).status, 200);
    const preflight = await request(f.t.app).options(path);
    assert.deepEqual([preflight.status, preflight.body], [200, { allowed: true, preflight: true }]);
    const get = await request(f.t.app).get(path).set(bearer(pub.token));
    assert.deepEqual([get.status, get.body.reason], [403, 'stream_not_allowed']);
  });

  it("MediaMTX's /<stream>/whip and /<stream>/whep, and Janus's /whip/endpoint/<stream>", async () => {
    await open('x-original-method', [
      { pattern: '^/(?<stream>[^/]+)/whip$', action: 'publish', methods: ['POST'] },
      { pattern: '^/(?<stream>[^/]+)/whip/[^/]+$', action: 'publish', methods: ['PATCH', 'DELETE'], resource: true },
      { pattern: '^/(?<stream>[^/]+)/whep$', action: 'subscribe', methods: ['POST'] },
      { pattern: '^/(?<stream>[^/]+)/whep/[^/]+$', action: 'subscribe', methods: ['PATCH', 'DELETE'], resource: true },
      { pattern: '^/whip/endpoint/(?<stream>[^/]+)$', action: 'publish', methods: ['POST'] },
    ]);
    const sub = await f.token('subscribe');
    const nginx = (method: string, uri: string, headers: Record<string, string> = {}) =>
      request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-original-method': method, ...headers });
    const cases: Array<[string, string, string | undefined, number]> = [
      ['POST', '/cam1/whip', pub.token, 200],
      ['PATCH', '/cam1/whip/5f1c2b0e-1d2e', pub.token, 200],
      ['DELETE', '/cam1/whip/5f1c2b0e-1d2e', pub.token, 200],
      ['POST', '/cam1/whip', sub.token, 401],
      ['POST', '/cam2/whip', pub.token, 403],
      ['OPTIONS', '/cam1/whip', undefined, 200],
      ['POST', '/cam1/whep', sub.token, 200],
      ['DELETE', '/cam1/whep/ab12', sub.token, 200],
      ['POST', '/cam1/whep', pub.token, 401],
      ['POST', '/whip/endpoint/cam1', pub.token, 200],
      ['POST', '/whip/endpoint/cam2', pub.token, 403],
      // Janus's session URLs name no stream: refused, as docs/callers.md says
      ['DELETE', '/whip/resource/5f1c2b0e', pub.token, 403],
    ];
    for (const [method, uri, token, status] of cases) {
      const r = await nginx(method, uri, token === undefined ? {} : bearer(token));
      assert.equal(r.status, status, `${method} ${uri}: ${JSON.stringify(r.body)}`);
    }
  });
});
