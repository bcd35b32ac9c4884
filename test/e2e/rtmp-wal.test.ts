// A thousand anonymous plays of an open stream through real nginx-rtmp, while ffmpeg publishes it:
// each play is a session registered and ended in the embedded SQLite store of a real Streamgate
// process, and its write-ahead log stays under its bound throughout and afterwards
// (docs/operations.md#sqlite-checkpoints; test/faults/sqlite-wal-bound.test.ts drives the hook
// itself at full speed). The plays are raw RTMP clients (test/e2e/rtmp-play.ts): nginx handles them
// as it does ffmpeg, at a fraction of the cost of a process each.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { rtmpBlock, startNginx, requireBinaries, publishTestPattern, exitOf } from './nginx.js';
import { rtmpPlay, type PlayOutcome } from './rtmp-play.js';
import { until } from './rtmp-stand.js';
import { WAL_LIMIT_BYTES, WAL_RESTART_BYTES } from '../../src/store/sqlite/checkpointer.js';

const PLAYS = 1000;
const AT_ONCE = 16;
const MiB = 1024 * 1024;

describe('nginx-rtmp: a thousand anonymous plays', () => {
  it(`registers every play and keeps the SQLite write-ahead log under ${WAL_LIMIT_BYTES / MiB} MiB`, async (t) => {
    requireBinaries();
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-e2e-wal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const wal = path.join(dir, 'streamgate.db-wal');
    const walBytes = () => statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    const sg = await startServer({ STREAMGATE_DATA_DIR: dir });
    const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    const api = async (method: string, p: string, body?: unknown) => {
      const r = await fetch(sg.base + p, {
        method,
        headers: { authorization: `Bearer ${secret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: r.status, body: (await r.json()) as any };
    };
    const rtmpPort = await freePort();
    const nginx = await startNginx(rtmpBlock(rtmpPort, `http://127.0.0.1:${sg.port}/hooks/nginx-rtmp`, '30s'), [rtmpPort], true).catch(async (e) => {
      sg.proc.kill('SIGTERM');
      await sg.exited;
      throw e;
    });
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, walBytes());
    }, 25);
    const publisher = { proc: undefined as ReturnType<typeof publishTestPattern> | undefined };
    try {
      const pub = await api('POST', '/api/publish_token', { label: 'wal', streams: [{ streamName: 'cam1' }] });
      assert.equal(pub.status, 200);
      publisher.proc = publishTestPattern(`rtmp://127.0.0.1:${rtmpPort}/live/cam1?token=${pub.body.data.token}`, 300);
      const live = async () => (await api('GET', '/api/publish_token/active/all')).body.data.tokenIds.includes(pub.body.data.id);
      assert.ok(await until(live, 15_000), 'ffmpeg publishes cam1');

      const outcomes: PlayOutcome[] = [];
      let next = 0;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: AT_ONCE }, async () => {
          while (next < PLAYS) {
            next++;
            outcomes.push(await rtmpPlay(rtmpPort, 'live', 'cam1'));
          }
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      assert.deepEqual(
        outcomes.filter((o) => o !== 'playing'),
        [],
        'nginx starts every play (Streamgate admits the open stream without a token)',
      );
      // nginx reports each close (on_play_done): no subscriber stays live
      const liveViewers = async () => (await api('GET', '/api/sessions?streamId=cam1&direction=subscribe')).body.data;
      assert.ok(await until(async () => (await liveViewers()).data.length === 0, 15_000), 'every play ended');
      const atEnd = walBytes();
      // a thousand plays write ~50 MiB of log, which stays in the file unless the log is started over;
      // once the plays stop, the checkpoint thread empties the file (SQLite's own checkpoints, should
      // the plays come too slowly for the thread, keep it at a few MiB)
      const settled = await until(() => walBytes() < WAL_RESTART_BYTES, 5000);
      t.diagnostic(`${PLAYS} plays in ${seconds.toFixed(1)} s; log file peak ${(peak / MiB).toFixed(1)} MiB, ${(atEnd / MiB).toFixed(1)} MiB at the end, then ${(walBytes() / MiB).toFixed(1)} MiB`);
      assert.ok(peak < WAL_LIMIT_BYTES, `the log file peaked at ${peak} bytes`);
      assert.ok(settled, `the log file keeps ${walBytes()} bytes after the plays`);
      assert.equal(publisher.proc.exitCode, null, 'ffmpeg kept publishing through the plays');
    } finally {
      clearInterval(sampler);
      if (publisher.proc) {
        publisher.proc.kill('SIGTERM');
        await exitOf(publisher.proc, 10_000);
      }
      await nginx.stop();
      sg.proc.kill('SIGTERM');
      await sg.exited;
    }
    const db = new Database(path.join(dir, 'streamgate.db'), { readonly: true });
    const viewers = db
      .prepare("SELECT COUNT(*) AS n, SUM(ended) AS ended FROM registry_sessions WHERE caller = 'nginx-rtmp' AND action = 'subscribe' AND stream_name = 'cam1'")
      .get();
    db.close();
    assert.deepEqual(viewers, { n: PLAYS, ended: PLAYS }, 'a session registered and ended per play');
  });
});
