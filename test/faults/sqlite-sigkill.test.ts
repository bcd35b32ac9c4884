// The embedded SQLite store under a hammer of writes, its process killed with SIGKILL mid-write:
// after a restart every acknowledged create and update is there, and the file passes
// PRAGMA integrity_check. (test/process/serve.test.ts covers one quiet write; this one is under load.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startServer, type RunningServer } from '../helpers/process.js';
import { call } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';

const CYCLES = soak(1, 4);
const WORKERS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fault: SQLite process killed with SIGKILL mid-write', () => {
  it(`keeps every acknowledged write and an intact file (${CYCLES} kill(s))`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-kill-'));
    const env = { STREAMGATE_DATA_DIR: dir };
    let server: RunningServer = await startServer(env);
    const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    const acked = new Map<number, unknown>(); // id → the record as created
    // Per worker, its own token: the label last acknowledged, and the one in flight at the kill.
    const owned: Array<{ id: number; acked: string; pending?: string }> = [];
    for (let w = 0; w < WORKERS; w++) {
      const r = await call(server.base, 'POST', '/api/publish_token', { secret, body: { label: `own-${w}-0`, streams: [{ streamName: 'cam1' }] } });
      assert.equal(r.status, 200);
      owned.push({ id: r.body.data.id, acked: `own-${w}-0` });
    }
    try {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        let killed = false;
        let failures = 0;
        const base = server.base;
        const worker = async (w: number) => {
          for (let i = 1; !killed; i++) {
            try {
              if (i % 3 === 0) {
                const label = `own-${w}-${cycle}-${i}`;
                owned[w].pending = label;
                const r = await call(base, 'PUT', `/api/publish_token/${owned[w].id}`, { secret, body: { label } });
                if (r.status === 200) owned[w].acked = label;
                else assert.fail(`update answered ${r.status}`);
              } else {
                const r = await call(base, 'POST', '/api/publish_token', {
                  secret,
                  body: { label: `c${cycle}-w${w}-${i}`, streams: [{ streamName: `cam${i}` }], allowedOrigins: ['*.example.com'] },
                });
                if (r.status === 200) acked.set(r.body.data.id, r.body);
                else assert.fail(`create answered ${r.status}`);
              }
            } catch (e) {
              if (!killed) throw e;
              failures++; // the connection died with the process: not acknowledged
            }
          }
        };
        const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
        await sleep(soak(600, 1500) + Math.random() * 400);
        const before = acked.size;
        killed = true;
        server.proc.kill('SIGKILL');
        assert.equal(await server.exited, 'SIGKILL');
        await load;
        assert.ok(before >= 20, `cycle ${cycle}: ${before} creates acknowledged before the kill`);

        const db = new Database(path.join(dir, 'streamgate.db'));
        try {
          assert.deepEqual(db.pragma('integrity_check'), [{ integrity_check: 'ok' }], `cycle ${cycle}: integrity_check`);
        } finally {
          db.close();
        }
        server = await startServer(env);
        for (const [id, body] of acked) {
          const r = await call(server.base, 'GET', `/api/publish_token/${id}`, { secret });
          assert.deepEqual([r.status, r.body], [200, body], `cycle ${cycle}: acknowledged token ${id} (${failures} requests cut off)`);
        }
        for (const o of owned) {
          const r = await call(server.base, 'GET', `/api/publish_token/${o.id}`, { secret });
          assert.ok([o.acked, o.pending].includes(r.body.data.label), `token ${o.id}: label ${r.body.data.label}, acknowledged ${o.acked}`);
          o.acked = r.body.data.label;
          o.pending = undefined;
        }
      }
    } finally {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
  });
});
