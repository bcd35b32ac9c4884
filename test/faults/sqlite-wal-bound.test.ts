// Anonymous RTMP plays, as fast as the process answers them, against the embedded SQLite store of a
// real Streamgate process: every play of the open stream registers a session and every play_done
// ends it, two writes that never pause. The write-ahead log stays under its 64 MiB bound the whole
// time (sampled every 25 ms), its file is emptied once the plays stop, and every session is in the
// store (docs/operations.md#sqlite-checkpoints). With passive checkpoints alone the log grew by
// 55-65 KiB a pair and never shrank: 20,000 pairs left over 1 GiB.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import { startServer } from '../helpers/process.js';
import { until } from '../helpers/until.js';
import { soak } from '../helpers/soak.js';
import { WAL_LIMIT_BYTES } from '../../src/store/sqlite/checkpointer.js';

// 20,000 pairs are ~30 s of writes that never pause (1.3 GiB of log before the fix); the soak run sends 50,000
const PAIRS = soak(20_000, 50_000);
const CONNECTIONS = 32;
const MiB = 1024 * 1024;

/** The module's own fields for a client of 127.0.0.1 (test/hooks/nginx-rtmp.test.ts has the captured shape). */
const client = (id: number) =>
  `app=live&flashver=LNX%2009%2C0%2C124%2C2&swfurl=&tcurl=rtmp%3A%2F%2F127.0.0.1%3A1935%2Flive&pageurl=&addr=127.0.0.1&clientid=${id}`;

describe('fault: anonymous RTMP plays at full speed on the SQLite store', () => {
  it(`keeps the write-ahead log under ${WAL_LIMIT_BYTES / MiB} MiB through ${PAIRS} play + play_done pairs, and registers every session`, async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-wal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true })); // a failed run's log may be a GiB
    const wal = path.join(dir, 'streamgate.db-wal');
    const walBytes = () => statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
    const sg = await startServer({ STREAMGATE_DATA_DIR: dir });
    const agent = new Agent({ connections: CONNECTIONS });
    let peak = 0;
    let samples = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, walBytes());
      samples++;
    }, 25);
    try {
      const refused: string[] = [];
      const hook = async (body: string) => {
        const r = await request(`${sg.base}/hooks/nginx-rtmp`, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
        const text = await r.body.text();
        if (r.statusCode !== 200 || text !== 'OK') refused.push(`${r.statusCode} ${text}`);
      };
      let next = 0;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next < PAIRS) {
            const id = next++;
            await hook(`${client(id)}&call=play&name=cam1&start=-2&duration=0&reset=0`);
            await hook(`${client(id)}&call=play_done&name=cam1`);
          }
        }),
      );
      const seconds = (Date.now() - started) / 1000;
      const atEnd = walBytes();
      t.diagnostic(`${PAIRS} pairs in ${seconds.toFixed(1)} s; log file peak ${(peak / MiB).toFixed(1)} MiB over ${samples} samples, ${(atEnd / MiB).toFixed(1)} MiB at the end`);
      assert.deepEqual(refused.slice(0, 5), [], 'every play and play_done is answered 200 OK');
      assert.ok(samples >= 20, `sampled ${samples} times`);
      assert.ok(peak < WAL_LIMIT_BYTES, `the log file peaked at ${peak} bytes`);
      // the first checkpoint period without writes empties the file
      await until(() => walBytes() === 0, 5000, "the log file emptied once the plays stopped");
      clearInterval(sampler);
      assert.ok(peak < WAL_LIMIT_BYTES, `the log file peaked at ${peak} bytes, with the emptying`);
    } finally {
      clearInterval(sampler);
      await agent.close();
      sg.proc.kill('SIGTERM');
      await sg.exited;
    }
    // every play registered its session and every play_done ended it
    const db = new Database(path.join(dir, 'streamgate.db'), { readonly: true });
    const rows = db.prepare("SELECT COUNT(*) AS n, SUM(ended) AS ended FROM registry_sessions WHERE caller = 'nginx-rtmp' AND stream_name = 'cam1'").get();
    db.close();
    assert.deepEqual(rows, { n: PAIRS, ended: PAIRS });
  });
});
