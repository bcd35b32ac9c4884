// The default streamPatterns must name the stream whose file the proxy serves. In nginx-rtmp's flat
// HLS layout a stream's playlist is <stream>.m3u8 and its segments <stream>-<n>.ts: a '-<digits>'
// before the extension belongs to the stream name in a playlist, and only a segment carries one of
// its own.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

describe('auth-request: stream names from flat HLS paths', () => {
  let f: HookFixture;
  let camViewer: { id: number; token: string };
  let cam2Viewer: { id: number; token: string };
  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: '', accountInPath: false, mediamtx: { allowApiFrom: [], pathPrefix: '' } },
      enforcement: { defaultAccountId: '' },
    });
    // A viewer of 'cam' must not open the secured 'cam-2' (nor, token-less, would an open 'cam' do).
    await f.token('publish', { streams: [{ streamName: 'cam-2' }], subscribeRequiresAuth: true });
    camViewer = await f.token('subscribe', { streams: [{ streamName: 'cam' }] });
    cam2Viewer = await f.token('subscribe', { streams: [{ streamName: 'cam-2' }] });
  });
  const nginx = (uri: string) =>
    request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-original-method': 'GET', 'x-forwarded-for': '203.0.113.7' });

  it("a secured stream's flat playlist (cam-2.m3u8) is decided as cam-2, never as the open stream cam", async () => {
    const other = await nginx(`/hls/cam-2.m3u8?token=${camViewer.token}`);
    assert.deepEqual([other.status, other.body.reason], [403, 'stream_not_allowed']);
    const own = await nginx(`/hls/cam-2.m3u8?token=${cam2Viewer.token}`);
    assert.deepEqual([own.status, own.headers['x-streamgate-stream']], [200, 'cam-2']);
    for (const uri of ['/dash/cam-2.mpd', '/live/cam-2.m3u8']) {
      const r = await nginx(`${uri}?token=${camViewer.token}`);
      assert.deepEqual([r.status, r.body.reason], [403, 'stream_not_allowed'], uri);
    }
  });

  it('segments keep their stream: cam-2-0.ts is cam-2, cam-2.ts is fragment 2 of cam, cam.m3u8 is cam', async () => {
    const seg = await nginx(`/hls/cam-2-0.ts?token=${camViewer.token}`);
    assert.deepEqual([seg.status, seg.body.reason], [403, 'stream_not_allowed']);
    const own = await nginx(`/hls/cam-2-17.m4s?token=${cam2Viewer.token}`);
    assert.deepEqual([own.status, own.headers['x-streamgate-stream']], [200, 'cam-2']);
    for (const uri of ['/hls/cam-2.ts', '/hls/cam.m3u8', '/hls/cam.ts', '/hls/cam-0.m4s']) {
      const r = await nginx(`${uri}?token=${camViewer.token}`);
      assert.deepEqual([r.status, r.headers['x-streamgate-stream']], [200, 'cam'], uri);
    }
  });
});
