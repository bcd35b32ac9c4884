// nginx auth_request, Traefik forwardAuth and Envoy ext_authz requests, as each proxy sends them.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

describe('auth-request adapter (nginx auth_request, Traefik, Envoy)', () => {
  let f: HookFixture;
  let sub: { id: number; token: string };
  let limited: { id: number; token: string };
  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: '', accountInPath: false, mediamtx: { allowApiFrom: [], pathPrefix: '' } },
      enforcement: { defaultAccountId: '' },
    });
    sub = await f.token('subscribe', { tracking: { trackingId: 'fans/eu' } });
    limited = await f.token('subscribe', { allowedOrigins: ['*.example.com'], allowedIpAddresses: ['203.0.113.0/24'] });
  });
  const nginx = (uri: string, headers: Record<string, string> = {}) =>
    request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-original-method': 'GET', 'x-forwarded-for': '203.0.113.7', ...headers });

  it('nginx: admits with exactly 200 and the x-streamgate headers for auth_request_set', async () => {
    const r = await nginx(`/hls/cam1/index.m3u8?token=${sub.token}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['x-streamgate-token-id'], String(sub.id));
    assert.equal(r.headers['x-streamgate-tracking-id'], 'fans%2Feu');
    assert.equal(r.headers['x-streamgate-account-id'], f.acct.id);
    assert.equal(r.headers['cache-control'], 'no-store');
  });

  it('names the stream from nested and flat HLS paths and DASH manifests', async () => {
    for (const uri of ['/hls/cam1/index.m3u8', '/hls/cam1-17.ts', '/hls/cam1.m3u8', '/cam1.m3u8', '/dash/cam1/manifest.mpd']) {
      const r = await nginx(`${uri}?token=${sub.token}`);
      assert.equal(r.status, 200, uri);
    }
    const other = await nginx(`/hls/cam2/index.m3u8?token=${sub.token}`);
    assert.deepEqual([other.status, other.body.reason], [403, 'stream_not_allowed']);
    const unnamed = await nginx(`/favicon.ico?token=${sub.token}`);
    assert.deepEqual([unnamed.status, unnamed.body.reason], [403, 'stream_not_allowed']);
  });

  it('refuses with 401 for no or a bad token, 403 for origin and address, never anything else', async () => {
    const none = await nginx('/hls/cam1/index.m3u8');
    assert.deepEqual([none.status, none.body.reason], [401, 'token_required']);
    const bad = await nginx('/hls/cam1/index.m3u8?token=nope');
    assert.deepEqual([bad.status, bad.body.reason], [401, 'token_invalid']);
    const origin = await nginx(`/hls/cam1/index.m3u8?token=${limited.token}`, { origin: 'https://evil.com' });
    assert.deepEqual([origin.status, origin.body.reason], [403, 'origin_not_allowed']);
    const referer = await nginx(`/hls/cam1/index.m3u8?token=${limited.token}`, { referer: 'https://www.example.com/player' });
    assert.equal(referer.status, 200, 'origin from the Referer when there is no Origin');
    const ip = await nginx(`/hls/cam1/index.m3u8?token=${limited.token}`, { origin: 'https://www.example.com', 'x-forwarded-for': '198.51.100.1' });
    assert.deepEqual([ip.status, ip.body.reason], [403, 'ip_not_allowed']);
  });

  it('Traefik forwardAuth: X-Forwarded-Uri and X-Forwarded-For, any method', async () => {
    const r = await request(f.t.app)
      .post('/hooks/auth-request')
      .set({ 'x-forwarded-uri': `/hls/cam1/index.m3u8?token=${limited.token}`, 'x-forwarded-for': '203.0.113.9', 'x-forwarded-method': 'GET', origin: 'https://a.example.com' });
    assert.equal(r.status, 200);
  });

  it('Envoy ext_authz path_prefix: the original path after the prefix, the token in Authorization', async () => {
    const r = await request(f.t.app).get('/hooks/auth-request/hls/cam1/index.m3u8').set('authorization', `Bearer ${sub.token}`);
    assert.equal(r.status, 200);
    const q = await request(f.t.app).get(`/hooks/auth-request/hls/cam1/seg-1.ts?token=${sub.token}`);
    assert.equal(q.status, 200);
    const deny = await request(f.t.app).get('/hooks/auth-request/hls/cam1/index.m3u8').set('authorization', 'Bearer wrong');
    assert.equal(deny.status, 401);
  });

  it('ignores forwarding headers from a peer that is not a trusted proxy', async () => {
    const untrusted = await hookFixture();
    const s = await untrusted.token('subscribe', { allowedIpAddresses: ['203.0.113.0/24'] });
    const r = await request(untrusted.t.app).get('/hooks/auth-request').set({ 'x-original-uri': `/hls/cam1/i.m3u8?token=${s.token}`, 'x-forwarded-for': '203.0.113.7' });
    assert.deepEqual([r.status, r.body.reason], [403, 'ip_not_allowed']);
  });
});
