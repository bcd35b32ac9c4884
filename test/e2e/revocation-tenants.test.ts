// A change that narrows access never widens it, shown with the real servers: another tenant's
// secured HLS behind nginx auth_request with accounts in paths, and a secured RTMP stream whose
// publish token is disabled and then deleted while ffmpeg publishes it through nginx-rtmp.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { until } from './rtmp-stand.js';
import { HTTP_TEMP_PATHS, authRequestLocation, exitOf, publishTestPattern, requireBinaries, rtmpBlock, startNginx, stopAll, type Nginx } from './nginx.js';

const ADMIN_KEY = 'e2e-admin-key-0123456789abcdefghijklmnop';
const PREMIUM = '#EXTM3U\n#EXT-X-VERSION:3\n#PREMIUM-ONLY\n#EXTINF:2.0,\nseg-1.ts\n#EXT-X-ENDLIST\n';

const json = async (base: string, method: string, p: string, auth: string, body?: unknown) => {
  const r = await fetch(base + p, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as { data: Record<string, unknown> & { id: number; token: string } } };
};

describe('nginx auth_request with accounts in paths: no tenant is watched without its token', () => {
  let sg: RunningServer;
  let nginx: Nginx;
  let httpPort: number;
  let tenant: { id: string; apiSecret: string };
  let viewer: string;
  let otherViewer: string;

  before(async () => {
    requireBinaries();
    const dataDir = mkdtempSync(path.join(tmpdir(), 'sg-e2e-'));
    sg = await startServer({
      STREAMGATE_DATA_DIR: dataDir,
      STREAMGATE_HOOKS_TRUSTEDPROXIES: '127.0.0.1',
      STREAMGATE_HOOKS_ACCOUNTINPATH: 'true',
      STREAMGATE_ADMIN_KEY: ADMIN_KEY,
    });
    const defaultSecret = readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim();
    tenant = (await json(sg.base, 'POST', '/admin/accounts', ADMIN_KEY, { name: 'tenant' })).body.data as unknown as { id: string; apiSecret: string };
    await json(sg.base, 'POST', '/api/publish_token', tenant.apiSecret, { label: 'premium', streams: [{ streamName: 'premium' }], subscribeRequiresAuth: true });
    viewer = (await json(sg.base, 'POST', '/api/subscribe_token', tenant.apiSecret, { label: 'v', streams: [{ streamName: 'premium' }] })).body.data.token;
    // the first-start account: a tenant whose token names the same stream, and one named like the tenant
    otherViewer = (
      await json(sg.base, 'POST', '/api/subscribe_token', defaultSecret, { label: 'other', streams: [{ streamName: 'premium' }, { streamName: tenant.id }] })
    ).body.data.token;
    httpPort = await freePort();
    const location = (prefix: string) => `
    location ${prefix} {
      auth_request /_streamgate;
    }`;
    nginx = await startNginx(
      `http {
  ${HTTP_TEMP_PATHS}
  server {
    listen 127.0.0.1:${httpPort};
    root DIR/www;
    ${location('/hls/')}
    ${location('/live/')}
    ${location('/dash/')}
    ${authRequestLocation(sg.port)}
  }
}`,
      [httpPort],
      false,
    );
    for (const dir of ['hls', 'live', 'dash']) {
      mkdirSync(path.join(nginx.dir, 'www', dir, tenant.id, 'premium'), { recursive: true });
      writeFileSync(path.join(nginx.dir, 'www', dir, tenant.id, 'premium', dir === 'dash' ? 'manifest.mpd' : 'index.m3u8'), PREMIUM);
    }
    writeFileSync(path.join(nginx.dir, 'www/hls', tenant.id, 'premium.m3u8'), PREMIUM);
  });

  after(() => stopAll([], nginx, sg));

  const get = (uri: string) => {
    const r = spawnSync('curl', ['-s', '-o', '-', '-w', '\n%{http_code}', `http://127.0.0.1:${httpPort}${uri}`], { encoding: 'utf8' });
    const nl = r.stdout.lastIndexOf('\n');
    return { status: Number(r.stdout.slice(nl + 1)), premium: r.stdout.slice(0, nl).includes('#PREMIUM-ONLY') };
  };
  const files = () => [
    `/hls/${tenant.id}/premium/index.m3u8`,
    `/live/${tenant.id}/premium/index.m3u8`,
    `/dash/${tenant.id}/premium/manifest.mpd`,
    `/hls/${tenant.id}/premium.m3u8`,
  ];

  it('serves no premium byte without a token (401) on /hls, /live and /dash, flat and foldered', () => {
    for (const f of files()) assert.deepEqual(get(f), { status: 401, premium: false }, f);
  });

  it("serves no premium byte to another tenant's token for a stream of that name, or named like the tenant (403)", () => {
    for (const f of files()) assert.deepEqual(get(`${f}?token=${otherViewer}`), { status: 403, premium: false }, f);
  });

  it("serves the tenant's own viewer", () => {
    for (const f of files()) assert.deepEqual(get(`${f}?token=${viewer}`), { status: 200, premium: true }, f);
  });
});

describe('nginx-rtmp + ffmpeg: disabling or deleting a secured stream\'s publish token never opens it', () => {
  let sg: RunningServer;
  let nginx: Nginx;
  let rtmpPort: number;
  let secret: string;
  const running: ChildProcess[] = [];

  const api = (method: string, p: string, body?: unknown) => json(sg.base, method, p, secret, body);
  const url = (name: string, token?: string) => `rtmp://127.0.0.1:${rtmpPort}/live/${name}${token ? `?token=${token}` : ''}`;
  /** A token-less (or tokened) ffmpeg playing 2 s of the stream: its exit code. */
  const play = (name: string, token?: string) =>
    exitOf(spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', url(name, token), '-t', '2', '-f', 'null', '-'], { stdio: 'ignore' }), 20000);
  const tokenless = async (streamName: string) => {
    const r = await fetch(`${sg.base}/hooks/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'subscribe', streamName }) });
    return r.status;
  };
  /** Whether the publish token shows up as publishing within 15 s (polled, as the other RTMP suites do). */
  const live = (tokenId: number) =>
    until(async () => ((await api('GET', '/api/publish_token/active/all')).body.data as unknown as { tokenIds: number[] }).tokenIds.includes(tokenId), 15000);

  before(async () => {
    requireBinaries();
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-e2e-'));
    sg = await startServer({ STREAMGATE_DATA_DIR: dir });
    secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    rtmpPort = await freePort();
    nginx = await startNginx(rtmpBlock(rtmpPort, `http://127.0.0.1:${sg.port}/hooks/nginx-rtmp`, '1s'), [rtmpPort], true);
  });

  after(() => stopAll(running, nginx, sg));

  it('an open stream plays without a token (the control)', async () => {
    const pub = (await api('POST', '/api/publish_token', { label: 'open', streams: [{ streamName: 'open1' }] })).body.data;
    const ff = publishTestPattern(url('open1', pub.token), 60);
    running.push(ff);
    assert.ok(await live(pub.id), 'the open publisher is live');
    assert.equal(await play('open1'), 0);
    ff.kill('SIGTERM');
  });

  it('live, disabled, then deleted: token-less playback is refused at every step; a subscribe token still plays', async () => {
    const pub = (await api('POST', '/api/publish_token', { label: 'secured', streams: [{ streamName: 'live1' }], subscribeRequiresAuth: true })).body.data;
    const sub = (await api('POST', '/api/subscribe_token', { label: 'viewer', streams: [{ streamName: 'live1' }] })).body.data;
    const ff = publishTestPattern(url('live1', pub.token), 60);
    running.push(ff);
    assert.ok(await live(pub.id), 'the secured publisher is live');
    assert.notEqual(await play('live1'), 0, 'live: no token, no playback');
    assert.equal(await play('live1', sub.token), 0, 'live: the subscribe token plays');

    const disabled = await api('PATCH', '/api/publish_token/disable', { tokenIds: [pub.id] });
    assert.deepEqual(disabled.body.data, { successfulTokens: [pub.id], failedTokens: [] });
    assert.equal(ff.exitCode, null, 'the publisher keeps running (terminateOn: [delete])');
    assert.notEqual(await play('live1'), 0, 'disabled: no token, still no playback');
    assert.equal(await tokenless('live1'), 401);

    assert.equal((await api('DELETE', `/api/publish_token/${pub.id}`)).status, 200);
    assert.equal(await tokenless('live1'), 401, 'deleted: still secured');
    assert.notEqual(await play('live1'), 0, 'deleted: no token, no playback');
    const kept = await api('GET', '/api/secured_streams');
    assert.deepEqual(
      (kept.body.data as unknown as Array<{ streamName: string; tokenId: number }>).map((e) => [e.streamName, e.tokenId]),
      [['live1', pub.id]],
    );
  });
});
