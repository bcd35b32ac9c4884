// Real nginx serving a static HLS folder behind auth_request to a real Streamgate process; curl is
// the viewer. nginx appends the client address to X-Forwarded-For and Streamgate trusts nginx for it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { startNginx, requireBinaries, type Nginx } from './nginx.js';

const PLAYLIST = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg-0.ts\n#EXT-X-ENDLIST\n';

describe('nginx auth_request + curl end to end', () => {
  let sg: RunningServer;
  let nginx: Nginx;
  let httpPort: number;
  let secret: string;

  const api = async (p: string, body: unknown) => {
    const r = await fetch(sg.base + p, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return ((await r.json()) as { data: { id: number; token: string } }).data;
  };
  /** curl from a chosen loopback address; returns the status and the x-token-id nginx added. */
  const curl = (uri: string, opts: { from?: string; origin?: string } = {}) => {
    const args = ['-s', '-o', '/dev/null', '-D', '-', '-w', '%{http_code}', '--interface', opts.from ?? '127.0.0.1'];
    if (opts.origin) args.push('-H', `Origin: ${opts.origin}`);
    args.push(`http://127.0.0.1:${httpPort}${uri}`);
    const r = spawnSync('curl', args, { encoding: 'utf8' });
    const status = Number(r.stdout.slice(-3));
    const tokenId = /^x-token-id: (\S+)/im.exec(r.stdout)?.[1];
    return { status, tokenId };
  };

  before(async () => {
    requireBinaries();
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-e2e-'));
    sg = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_HOOKS_TRUSTEDPROXIES: '127.0.0.1' });
    secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    httpPort = await freePort();
    nginx = await startNginx(
      `http {
  access_log DIR/logs/access.log;
  client_body_temp_path DIR/tmp/body;
  proxy_temp_path DIR/tmp/proxy;
  fastcgi_temp_path DIR/tmp/fastcgi;
  uwsgi_temp_path DIR/tmp/uwsgi;
  scgi_temp_path DIR/tmp/scgi;
  server {
    listen 127.0.0.1:${httpPort};
    root DIR/www;
    location /hls/ {
      auth_request /_streamgate;
      auth_request_set $sg_token_id $upstream_http_x_streamgate_token_id;
      add_header X-Token-Id $sg_token_id always;
    }
    location = /_streamgate {
      internal;
      proxy_pass http://127.0.0.1:${sg.port}/hooks/auth-request;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_set_header X-Original-URI $request_uri;
      proxy_set_header X-Original-Method $request_method;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
}`,
      [httpPort],
      false,
    );
    mkdirSync(path.join(nginx.dir, 'www/hls/cam1'), { recursive: true });
    writeFileSync(path.join(nginx.dir, 'www/hls/cam1/index.m3u8'), PLAYLIST);
    writeFileSync(path.join(nginx.dir, 'www/hls/cam1/seg-0.ts'), Buffer.alloc(188, 0x47));
  });

  after(async () => {
    await nginx?.stop();
    if (sg) {
      sg.proc.kill('SIGTERM');
      await sg.exited;
    }
  });

  it('serves the playlist and segments to a valid subscribe token, with the token id from auth_request_set', async () => {
    const s = await api('/api/subscribe_token', { label: 'hls', streams: [{ streamName: 'cam1' }] });
    const r = curl(`/hls/cam1/index.m3u8?token=${s.token}`);
    assert.deepEqual(r, { status: 200, tokenId: String(s.id) });
    assert.equal(curl(`/hls/cam1/seg-0.ts?token=${s.token}`).status, 200);
  });

  it('refuses a bad token (401), an origin outside allowedOrigins (403) and an address outside allowedIpAddresses (403)', async () => {
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${'0'.repeat(64)}`).status, 401);
    const o = await api('/api/subscribe_token', { label: 'o', streams: [{ streamName: 'cam1' }], allowedOrigins: ['*.example.com'] });
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${o.token}`, { origin: 'https://evil.com' }).status, 403);
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${o.token}`, { origin: 'https://www.example.com' }).status, 200);
    const ip = await api('/api/subscribe_token', { label: 'ip', streams: [{ streamName: 'cam1' }], allowedIpAddresses: ['127.0.0.2/32'] });
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${ip.token}`, { from: '127.0.0.2' }).status, 200, 'client 127.0.0.2 (X-Forwarded-For) is inside');
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${ip.token}`, { from: '127.0.0.3' }).status, 403, 'client 127.0.0.3 (X-Forwarded-For) is outside');
    assert.equal(curl(`/hls/cam2/index.m3u8?token=${ip.token}`, { from: '127.0.0.2' }).status, 403, 'another stream');
  });
});
