// The SQLite store's WAL checkpoints move off the event loop once it writes steadily
// (src/store/sqlite/checkpointer.ts, docs/operations.md#sqlite-checkpoints): the serving connection
// stops checkpointing, a thread of its own copies the log into the database file, a quiet store
// never starts that thread, and a failing background checkpoint hands the work back. Under writes
// that never pause, the thread starts the log over once it reaches its restart length, so the log
// stays bounded, and empties the file once the store is quiet.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Checkpointer, CHECKPOINT_BUSY_WRITES, SIZE_CHECK_MS, logReaches } from '../../src/store/sqlite/checkpointer.js';
import { sessionRecord } from '../helpers/sessions.js';
import { until } from '../helpers/until.js';

const session = (i: number) => sessionRecord({ sessionId: `conn-${i}` });

/** Rows of registry_sessions in the database file alone (its write-ahead log left behind): what checkpoints copied there. */
function rowsInMainFile(file: string, dir: string): number {
  const copy = path.join(dir, 'main-only.db');
  copyFileSync(file, copy);
  const db = new Database(copy, { readonly: true });
  try {
    return db.prepare('SELECT COUNT(*) FROM registry_sessions').pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('SQLite checkpoints', () => {
  it('a store that writes steadily checkpoints on a thread of its own, and the log reaches the database file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const file = path.join(dir, 'db');
    const store = new SqliteStore({ file, synchronous: 'NORMAL', checkpointPeriodMs: 50 });
    try {
      const n = CHECKPOINT_BUSY_WRITES + 50;
      for (let i = 0; i < n; i++) await store.startSession(session(i), 60);
      await until(() => (store.checkpointer?.completed ?? 0) >= 1, 10_000, 'a background checkpoint');
      assert.equal(store.checkpointer?.background, true);
      // ~2 pages a write stays under the 1,000 pages at which the serving connection would have checkpointed for itself
      assert.equal(rowsInMainFile(file, dir), n);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a quiet store keeps SQLite’s own checkpoints and starts no thread', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] }); // the periods pass by hand
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const store = new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL', checkpointPeriodMs: 20 });
    try {
      // more than CHECKPOINT_BUSY_WRITES in all, never that many in one period
      for (let period = 0; period < 7; period++) {
        for (let i = 0; i < 20; i++) await store.startSession(session(period * 20 + i), 60);
        t.mock.timers.tick(20);
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(store.checkpointer?.background, false);
      assert.equal(store.checkpointer?.completed, 0);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the serving connection stops checkpointing once the thread has checkpointed, and takes it back if a background checkpoint fails', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] }); // the steps are called by hand
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const good = path.join(dir, 'good.db');
    const db = new Database(good);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v)');
    db.close();
    const settings: number[] = [];
    const failures: string[] = [];
    let writes = 0;
    const host = { file: good, writes: () => writes, setAutocheckpoint: (p: number) => void settings.push(p), onFailure: (m: string) => void failures.push(m) };
    const c = new Checkpointer(host);
    try {
      writes = CHECKPOINT_BUSY_WRITES;
      await c.tick();
      assert.deepEqual(settings, [0], 'handed over after the first background checkpoint');
      assert.equal(c.background, true);
      // a file that does not exist: the thread's connection refuses to create it, so the checkpoint fails
      host.file = path.join(dir, 'missing.db');
      writes += CHECKPOINT_BUSY_WRITES;
      await c.tick();
      assert.deepEqual(settings, [0, 1000]);
      assert.equal(failures.length, 1);
      assert.match(failures[0], /missing\.db|unable to open|does not exist/i);
      assert.equal(c.background, false);
      writes += CHECKPOINT_BUSY_WRITES;
      await c.tick();
      assert.deepEqual(settings, [0, 1000], 'no second attempt: the serving connection keeps the work');
    } finally {
      await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('under writes that never pause, the thread starts the log over each time it reaches the restart length; a quiet period empties the file; no write is lost', async (t) => {
    // the period and the size check are ticked by hand; the checkpoints themselves run on the real thread
    t.mock.timers.enable({ apis: ['setInterval'] });
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const file = path.join(dir, 'db');
    const wal = `${file}-wal`;
    const restartAt = 256 * 1024;
    const store = new SqliteStore({ file, synchronous: 'NORMAL', walRestartBytes: restartAt });
    const cp = store.checkpointer!;
    let n = 0;
    const write = async () => store.startSession(session(n++), 60);
    /** Writes on while `job` runs, a write per turn of the event loop, as a busy instance does. */
    const writingThrough = async (job: Promise<void>) => {
      let done = false;
      void job.finally(() => {
        done = true;
      });
      while (!done) {
        await write();
        await new Promise((r) => setImmediate(r));
      }
      await job;
    };
    try {
      for (let i = 0; i < CHECKPOINT_BUSY_WRITES; i++) await write();
      await writingThrough(cp.tick()); // the busy store moves its checkpoints to the thread
      assert.equal(cp.background, true);
      const first = cp.restarted; // the first checkpoint may already have found the log that long
      const rounds = 6;
      for (let round = 0; round < rounds; round++) {
        while (!logReaches(wal, restartAt)) await write();
        const before = cp.restarted;
        // every other round from the period's tick, the others from the size check between ticks
        if (round % 2 === 0) await writingThrough(cp.tick());
        else {
          t.mock.timers.tick(SIZE_CHECK_MS);
          await writingThrough(cp.checkSize());
        }
        // a RESTART that found the writer or a reader in the way (busy) is tried again at the next size check
        for (let retry = 0; cp.restarted === before && retry < 20; retry++) await cp.checkSize().then(() => cp.checkSize());
        assert.equal(cp.restarted, before + 1, `round ${round}: the log started over`);
        await write();
        assert.equal(logReaches(wal, restartAt), false, `round ${round}: the log holds only what was written since it started over`);
      }
      assert.equal(cp.restarted, first + rounds);
      // a period without writes empties the file
      await cp.tick();
      await cp.tick();
      assert.equal(cp.truncated, 1);
      assert.equal(cp.walBytes(), 0);
    } finally {
      await store.close();
    }
    try {
      assert.equal(statSync(wal, { throwIfNoEntry: false }), undefined, 'the closed store leaves no log behind');
      // every write is in the file: nothing went missing with the log
      const db = new Database(file, { readonly: true });
      assert.equal(db.prepare('SELECT COUNT(*) FROM registry_sessions').pluck().get(), n);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads how far the log reaches from the WAL file, also once the log has started over in a longer file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const file = path.join(dir, 'db');
    const wal = `${file}-wal`;
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('wal_autocheckpoint = 0');
      db.exec('CREATE TABLE t (v BLOB)');
      const insert = db.prepare('INSERT INTO t VALUES (randomblob(3000))');
      assert.equal(logReaches(`${dir}/missing-wal`, 1), false, 'no file');
      for (let i = 0; i < 100; i++) insert.run(); // ~100 frames of 4 KiB
      const size = statSync(wal).size;
      assert.equal(logReaches(wal, size), true, 'the log reaches its own end');
      assert.equal(logReaches(wal, size + 4096 + 24), false, 'and no frame further');
      db.pragma('wal_checkpoint(RESTART)');
      insert.run(); // the log starts over at the front of the same file
      assert.equal(statSync(wal).size, size, 'the file keeps its size');
      assert.equal(logReaches(wal, size), false, 'the frames past the new log are the old one');
      assert.equal(logReaches(wal, 4096), true, 'the new log holds its first frames');
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an in-memory store has no checkpointer', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    assert.equal(store.checkpointer, undefined);
    await store.close();
  });
});
