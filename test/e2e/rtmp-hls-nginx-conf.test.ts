// The complete nginx.conf of docs/callers.md#rtmp-in-hls-out-behind-auth_request-one-nginx, run as
// the page gives it: the test reads the ```nginx block and the Streamgate settings (```yaml) of that
// section from the page itself, replaces only their placeholders (Streamgate's URL, the hook
// secret, the HLS root, the two listen ports), and runs them with Debian's nginx and
// libnginx-mod-rtmp and a real Streamgate process. ffmpeg publishes over RTMP with a publish token;
// viewers fetch the HLS through nginx with a subscribe token, a cookie, or neither.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { HTTP_TEMP_PATHS, exitOf, publishTestPattern, requireBinaries, startNginxConf, stopAll, type Nginx } from './nginx.js';
import { get } from './hls-stand.js';
import { sectionBlocks, substitute } from './doc-blocks.js';
import { until } from './rtmp-stand.js';

const HEADING = '## RTMP in, HLS out behind auth_request (one nginx)';

const STREAM = 'cam1';

describe('docs/callers.md: RTMP in, HLS out behind auth_request, as documented', () => {
  const hookSecret = randomBytes(24).toString('hex');
  let sg: RunningServer;
  let nginx: Nginx;
  let httpPort: number;
  let rtmpPort: number;
  let dataDir: string;
  let apiSecret: string;
  const running: ChildProcess[] = [];

  const api = async (p: string, body: unknown) => {
    const r = await fetch(sg.base + p, { method: 'POST', headers: { authorization: `Bearer ${apiSecret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 200, p);
    return ((await r.json()) as { data: { id: number; token: string } }).data;
  };
  const rtmpUrl = (name: string, token?: string) => `rtmp://127.0.0.1:${rtmpPort}/live/${name}${token === undefined ? '' : `?token=${token}`}`;

  let pub: { id: number; token: string };
  let sub: { id: number; token: string };

  before(async () => {
    requireBinaries();
    const md = readFileSync(path.join(ROOT, 'docs/callers.md'), 'utf8');
    const [nginxConf, ...moreNginx] = sectionBlocks(md, HEADING, 'nginx');
    const [settings, ...moreYaml] = sectionBlocks(md, HEADING, 'yaml');
    assert.ok(nginxConf !== undefined && moreNginx.length === 0, 'the section has exactly one nginx block');
    assert.ok(settings !== undefined && moreYaml.length === 0, 'the section has exactly one yaml block');

    dataDir = mkdtempSync(path.join(tmpdir(), 'sg-rtmp-hls-'));
    const configFile = path.join(dataDir, 'streamgate.yaml');
    writeFileSync(configFile, substitute(settings, [['HOOK_SECRET', hookSecret]]));
    sg = await startServer({ STREAMGATE_DATA_DIR: dataDir, STREAMGATE_CONFIG: configFile });
    apiSecret = readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim();

    httpPort = await freePort();
    rtmpPort = await freePort();
    nginx = await startNginxConf(
      (dir) =>
        substitute(nginxConf, [
          ['STREAMGATE_URL', sg.base],
          ['HOOK_SECRET', hookSecret],
          ['HLS_ROOT', `${dir}/www`],
          [/^(\s*)listen 1935;/m, `$1listen 127.0.0.1:${rtmpPort};`],
          [/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${httpPort};`],
          // the run's own access log and temporary files, inside its directory
          [/^http \{$/m, `http {\n    ${HTTP_TEMP_PATHS.replaceAll('DIR', dir)}`],
        ]),
      [httpPort, rtmpPort],
    );

    pub = await api('/api/publish_token', { label: 'studio', streams: [{ streamName: STREAM }], subscribeRequiresAuth: true });
    sub = await api('/api/subscribe_token', { label: 'viewers', streams: [{ streamName: STREAM }] });
  });

  after(async () => {
    await stopAll(running, nginx, sg);
    for (const d of [dataDir, nginx?.dir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('publishes with a publish token, and serves the HLS to a subscribe token: the playlist, then its segment with the cookie', async () => {
    const ffmpeg = publishTestPattern(rtmpUrl(STREAM, pub.token), 120);
    running.push(ffmpeg);
    let ffmpegErr = '';
    ffmpeg.stderr?.on('data', (b: Buffer) => (ffmpegErr += b.toString()));
    const hls = path.join(nginx.dir, 'www/hls');
    const written = await until(() => existsSync(path.join(hls, `${STREAM}.m3u8`)) && readdirSync(hls).some((f) => f.endsWith('.ts')), 30000);
    assert.ok(written, `nginx-rtmp wrote no HLS within 30 s (ffmpeg: ${ffmpegErr || 'no output'}):\n${nginx.errorLog()}`);

    const playlist = await get(httpPort, `/hls/${STREAM}.m3u8?token=${sub.token}`);
    assert.equal(playlist.status, 200, playlist.body.toString());
    const text = playlist.body.toString('utf8');
    assert.match(text, /^#EXTM3U\n/);
    const segment = text.split('\n').find((l) => l.endsWith('.ts'));
    assert.ok(segment?.startsWith(`${STREAM}-`), text);
    const cookie = playlist.setCookie.map((l) => /^(streamgate_session=[^;]+)/.exec(l)?.[1]).find((c) => c !== undefined);
    assert.ok(cookie, `the playlist's answer sets the viewer-session cookie: ${JSON.stringify(playlist.setCookie)}`);

    const media = await get(httpPort, `/hls/${segment}`, { cookie });
    assert.equal(media.status, 200);
    assert.equal(media.body[0], 0x47, 'an MPEG-TS segment');
    assert.equal((await get(httpPort, `/hls/${segment}`)).status, 401, 'the same segment without the cookie');
  });

  it('refuses the HLS without a subscribe token (401), with an unknown one (401) and with one for another stream (403)', async () => {
    assert.equal((await get(httpPort, `/hls/${STREAM}.m3u8`)).status, 401);
    assert.equal((await get(httpPort, `/hls/${STREAM}.m3u8?token=${'0'.repeat(64)}`)).status, 401);
    const other = await api('/api/subscribe_token', { label: 'other', streams: [{ streamName: 'cam2' }] });
    assert.equal((await get(httpPort, `/hls/${STREAM}.m3u8?token=${other.token}`)).status, 403);
  });

  it('needs the hook secret it sends: Streamgate refuses the same question without it, and no nginx log holds it', async () => {
    const r = await fetch(`${sg.base}/hooks/auth-request`, { headers: { 'x-original-uri': `/hls/${STREAM}.m3u8?token=${sub.token}` } });
    assert.equal(r.status, 401);
    assert.deepEqual(await r.json(), { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' });
    const logs = path.join(nginx.dir, 'logs');
    for (const f of readdirSync(logs)) assert.ok(!readFileSync(path.join(logs, f), 'utf8').includes(hookSecret), `logs/${f} holds the hook secret`);
  });

  it('refuses a publisher without a token: nginx-rtmp drops it', async () => {
    const refused = publishTestPattern(rtmpUrl('cam3'), 30);
    running.push(refused);
    const code = await exitOf(refused, 20000);
    assert.ok(code > 0, `ffmpeg ended with ${code} (-1: still publishing after 20 s)`);
    assert.equal(existsSync(path.join(nginx.dir, 'www/hls/cam3.m3u8')), false);
  });
});
