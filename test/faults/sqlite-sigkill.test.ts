// The embedded SQLite store under a hammer of writes, its process killed with SIGKILL mid-write:
// after a restart every acknowledged create and update is there, and the file passes
// PRAGMA integrity_check. (test/process/serve.test.ts covers one quiet write; this one is under load.)
// Only a request the kill cut off (its connection reset, closed or refused once the kill was sent)
// goes unacknowledged quietly; any answer, assertion or other error fails the test, before the kill
// or after it. The moment of the kill comes from a seeded generator (FC_SEED replays it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startServer, type RunningServer } from '../helpers/process.js';
import { call } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';
import { seededRandom } from '../helpers/property.js';

const CYCLES = soak(1, 4);
const WORKERS = 6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Socket-level error codes of a request whose server process died under it. */
const CUT_OFF = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * fetch rejects a request that lost its connection with a TypeError ("fetch failed", or "terminated"
 * when the body was being read) whose cause carries the socket's error code.
 */
function cutOffByKill(e: unknown): boolean {
  if (!(e instanceof TypeError)) return false;
  const code = (e.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && CUT_OFF.has(code);
}

describe('fault: SQLite process killed with SIGKILL mid-write', () => {
  it(`keeps every acknowledged write and an intact file (${CYCLES} kill(s))`, async (t) => {
    const rnd = seededRandom();
    t.diagnostic(rnd.replay);
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
        let cutOff = 0;
        const failed: unknown[] = []; // errors that were not a cut-off: the first is rethrown
        const base = server.base;
        const worker = async (w: number) => {
          for (let i = 1; !killed && failed.length === 0; i++) {
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
              // `killed` is set in the same synchronous step as the kill is sent: true here means the
              // request was still open when the process died.
              if (killed && cutOffByKill(e)) cutOff++; // not acknowledged, so nothing to find later
              else failed.push(e);
              return;
            }
          }
        };
        const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
        // A worker stops early only on a failure: then there is nothing to kill for.
        await Promise.race([sleep(soak(600, 1500) + rnd.next() * 400), load]);
        if (failed.length) throw failed[0];
        const before = acked.size;
        killed = true;
        server.proc.kill('SIGKILL');
        assert.equal(await server.exited, 'SIGKILL');
        await load;
        if (failed.length) throw failed[0];
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
          assert.deepEqual([r.status, r.body], [200, body], `cycle ${cycle}: acknowledged token ${id} (${cutOff} requests cut off)`);
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
