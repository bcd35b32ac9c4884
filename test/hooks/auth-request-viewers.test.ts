// HTTP viewer sessions through each proxy's own request and answer, header by header
// (docs/callers.md#http-viewer-sessions): what nginx's auth_request_set, Traefik's
// addAuthCookiesToResponse and Envoy's allowed_client_headers_on_success pass on to the viewer, and
// the Cookie header each forwards back. Traefik and Envoy are not packaged for Debian, whose
// packages the end-to-end suite runs: the requests are the ones their documentation describes.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

const COOKIE = 'sg_view';

describe('viewer credentials through nginx, Traefik and Envoy', () => {
  let f: HookFixture;
  let sub: { id: number; token: string };
  before(async () => {
    f = await hookFixture({
      hooks: { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'] },
      sessions: { http: { secret: 'viewer-credential-secret-0123456789abcdef', cookieName: COOKIE, cookieSecure: true, cookieSameSite: 'None' } },
    });
    sub = await f.token('subscribe');
  });
  after(() => f.close());

  /** The one Set-Cookie of an answer, and the credential it carries. */
  const setCookie = (r: request.Response): { header: string; value: string } => {
    const all = r.headers['set-cookie'] as unknown as string[] | undefined;
    assert.equal(all?.length, 1, 'exactly one Set-Cookie ($upstream_http_set_cookie reads the first only)');
    const m = new RegExp(`^${COOKIE}=([A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+); Max-Age=60; Path=/; HttpOnly; Secure; SameSite=None$`).exec(all![0]);
    assert.ok(m, all![0]);
    return { header: all![0], value: m[1] };
  };

  it('nginx auth_request: the allow carries the cookie for auth_request_set; the browser sends it back through the subrequest', async () => {
    const first = await request(f.t.app)
      .get('/hooks/auth-request')
      .set({ 'x-original-uri': `/hls/cam1.m3u8?token=${sub.token}`, 'x-original-method': 'GET', 'x-forwarded-for': '203.0.113.7' });
    assert.equal(first.status, 200);
    const { value } = setCookie(first);
    // nginx passes the client's request headers (Cookie included) to the auth subrequest
    const seg = await request(f.t.app)
      .get('/hooks/auth-request')
      .set({ 'x-original-uri': '/hls/cam1-3.ts', 'x-original-method': 'GET', 'x-forwarded-for': '203.0.113.7', cookie: `${COOKIE}=${value}` });
    assert.deepEqual([seg.status, seg.body, seg.headers['x-streamgate-token-id']], [200, { allowed: true }, String(sub.id)]);
  });

  it('Traefik forwardAuth: X-Forwarded-Uri in, the named cookie out (addAuthCookiesToResponse), the client Cookie copied through', async () => {
    const traefik = (uri: string, extra: Record<string, string> = {}) =>
      request(f.t.app)
        .get('/hooks/auth-request')
        .set({ 'x-forwarded-method': 'GET', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'video.example.com', 'x-forwarded-uri': uri, 'x-forwarded-for': '203.0.113.9', ...extra });
    const first = await traefik(`/hls/cam1/index.m3u8?token=${sub.token}`);
    assert.equal(first.status, 200);
    const { value } = setCookie(first);
    const seg = await traefik('/hls/cam1/seg-7.ts', { cookie: `theme=dark; ${COOKIE}=${value}` });
    assert.equal(seg.status, 200);
    const tampered = await traefik('/hls/cam1/seg-8.ts', { cookie: `${COOKIE}=${value.slice(0, -2)}xx` });
    assert.deepEqual([tampered.status, tampered.body.reason], [401, 'credential_invalid']);
  });

  it('Envoy ext_authz (path_prefix): the original path appended; set-cookie out (allowed_client_headers_on_success), cookie in (allowed_headers)', async () => {
    const first = await request(f.t.app).get(`/hooks/auth-request/hls/cam1/index.m3u8?token=${sub.token}`).set({ 'x-forwarded-for': '203.0.113.11' });
    assert.equal(first.status, 200);
    const { value } = setCookie(first);
    const seg = await request(f.t.app).get('/hooks/auth-request/hls/cam1/seg-9.ts').set({ 'x-forwarded-for': '203.0.113.11', cookie: `${COOKIE}=${value}` });
    assert.deepEqual([seg.status, seg.headers['set-cookie']], [200, undefined]);
    // without the cookie in allowed_headers, Envoy would send none: the segment is a full decision, and refused
    const bare = await request(f.t.app).get('/hooks/auth-request/hls/cam1/seg-9.ts').set({ 'x-forwarded-for': '203.0.113.11' });
    assert.deepEqual([bare.status, bare.body.reason], [401, 'token_required']);
  });
});

describe('viewer credentials only for viewers', () => {
  it('with hooks.authRequest.action publish, no credential is granted and every request is a full decision', async () => {
    const f = await hookFixture({ hooks: { authRequest: { action: 'publish' } }, sessions: { http: { secret: 'viewer-credential-secret-0123456789abcdef' } } });
    try {
      const pub = await f.token('publish');
      const r = await request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': `/hls/cam1.m3u8?token=${pub.token}` });
      assert.deepEqual([r.status, r.headers['set-cookie']], [200, undefined]);
      await f.settle();
      const live = await f.api('get', '/api/sessions');
      assert.deepEqual(live.body.data.data, [], 'no session started');
    } finally {
      await f.close();
    }
  });
});
