// Real nginx-rtmp + ffmpeg against a real Streamgate process: nginx's on_publish/on_play/
// on_publish_done call Streamgate, and nginx admits or drops ffmpeg on its answer.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { rtmpBlock, startNginx, stopAll, requireBinaries, publishTestPattern, exitOf, type Nginx } from './nginx.js';

describe('nginx-rtmp + ffmpeg end to end', () => {
  let sg: RunningServer;
  let nginx: Nginx;
  let rtmpPort: number;
  let secret: string;
  const running: ChildProcess[] = [];

  const api = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(sg.base + p, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await r.json()) as { data: Record<string, unknown> & { id: number; token: string } };
  };
  const activeAll = async () => ((await api('GET', '/api/publish_token/active/all')).data as unknown as { tokenIds: number[] }).tokenIds;
  const until = async (cond: () => Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await cond()) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  const url = (name: string, token: string) => `rtmp://127.0.0.1:${rtmpPort}/live/${name}?token=${token}`;
  const play = (name: string, token: string) =>
    spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', url(name, token), '-t', '2', '-f', 'null', '-'], { stdio: 'ignore' });

  before(async () => {
    requireBinaries();
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-e2e-'));
    // A hook secret nginx-rtmp never sends: it is admitted by its address (hooks.allowFrom), so its
    // notify URLs, which nginx logs, carry no secret (docs/callers.md#nginx-rtmp-debian-libnginx-mod-rtmp).
    const config = path.join(dir, 'streamgate.yaml');
    writeFileSync(config, `hooks:\n  secret: "${'e2e-hook-secret-never-in-a-url-'.padEnd(40, 'x')}"\n  allowFrom:\n    nginx-rtmp: ['127.0.0.1', '::1']\n`);
    sg = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_CONFIG: config });
    secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    rtmpPort = await freePort();
    const hook = `http://127.0.0.1:${sg.port}/hooks/nginx-rtmp`;
    nginx = await startNginx(rtmpBlock(rtmpPort, hook, '1s'), [rtmpPort], true);
  });

  after(() => stopAll(running, nginx, sg));

  it('publishes with a valid token, plays back with a subscribe token, and lists the publisher in active/all while it runs', async () => {
    const pub = (await api('POST', '/api/publish_token', { label: 'e2e', streams: [{ streamName: 'cam1' }] })).data;
    const sub = (await api('POST', '/api/subscribe_token', { label: 'e2e', streams: [{ streamName: 'cam1' }] })).data;
    const ff = publishTestPattern(url('cam1', pub.token));
    running.push(ff);
    assert.ok(await until(async () => (await activeAll()).includes(pub.id), 10000), 'the publisher shows up in active/all');
    assert.equal(ff.exitCode, null, 'ffmpeg keeps publishing');
    assert.equal(await exitOf(play('cam1', sub.token), 20000), 0, 'a second ffmpeg plays the stream back');
    assert.notEqual(await exitOf(play('cam1', 'f'.repeat(64)), 20000), 0, 'a wrong subscribe token cannot play');
    ff.kill('SIGTERM');
    await exitOf(ff, 10000);
    assert.ok(await until(async () => (await activeAll()).length === 0, 10000), 'active/all is empty once ffmpeg stopped');
  });

  it('nginx drops a publisher with a wrong token, a wrong stream name, a disabled token or an expired token', async () => {
    const pub = (await api('POST', '/api/publish_token', { label: 'e2e', streams: [{ streamName: 'cam2' }] })).data;
    const disabled = (await api('POST', '/api/publish_token', { label: 'off', streams: [{ streamName: 'cam2' }] })).data;
    await api('PUT', `/api/publish_token/${disabled.id}`, { isActive: false });
    const expiring = (await api('POST', '/api/publish_token', { label: 'exp', streams: [{ streamName: 'cam2' }], expires: 1 })).data;
    await new Promise((r) => setTimeout(r, 1500));
    const cases: Array<[string, string, string]> = [
      ['wrong token', 'cam2', '0'.repeat(64)],
      ['wrong stream name', 'other', pub.token],
      ['disabled token', 'cam2', disabled.token],
      ['expired token', 'cam2', expiring.token],
    ];
    for (const [name, stream, token] of cases) {
      const ff = publishTestPattern(url(stream, token), 10);
      running.push(ff);
      const code = await exitOf(ff, 20000);
      assert.ok(code !== 0 && code !== -1, `${name}: ffmpeg exits with an error (got ${code})`);
    }
    assert.deepEqual(await activeAll(), []);
  });

  it('on_update (every 1 s): deleting the publish token cuts the publisher within 2 s; disabling it does not (terminateOn [delete])', async () => {
    const pub = (await api('POST', '/api/publish_token', { label: 'live', streams: [{ streamName: 'cam3' }] })).data;
    const ff = publishTestPattern(url('cam3', pub.token), 60);
    running.push(ff);
    assert.ok(await until(async () => (await activeAll()).includes(pub.id), 15000), 'the publisher is live');
    await api('PUT', `/api/publish_token/${pub.id}`, { isActive: false });
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(ff.exitCode, null, 'a disabled token keeps its running publisher (3 s, three updates later)');
    const deletedAt = Date.now();
    await fetch(`${sg.base}/api/publish_token/${pub.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${secret}` } });
    const code = await exitOf(ff, 10000);
    const after = Date.now() - deletedAt;
    console.log(`# publisher cut ${after} ms after its token was deleted (ffmpeg exit ${code})`);
    assert.notEqual(code, -1, 'ffmpeg was cut (not killed by the test)');
    assert.ok(after < 2000 + 500, `cut ${after} ms after deletion (update every 1 s; 500 ms for ffmpeg to notice)`);
  });
});
