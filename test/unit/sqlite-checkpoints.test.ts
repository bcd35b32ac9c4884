// The SQLite store's WAL checkpoints move off the event loop once it writes steadily
// (src/store/sqlite/checkpointer.ts, docs/operations.md#sqlite-checkpoints): the serving connection
// stops checkpointing, a thread of its own copies the log into the database file, a quiet store
// never starts that thread, and a failing background checkpoint hands the work back.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Checkpointer, CHECKPOINT_BUSY_WRITES } from '../../src/store/sqlite/checkpointer.js';
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

  it('a quiet store keeps SQLite’s own checkpoints and starts no thread', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const store = new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL', checkpointPeriodMs: 20 });
    try {
      for (let i = 0; i < 10; i++) await store.startSession(session(i), 60);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(store.checkpointer?.background, false);
      assert.equal(store.checkpointer?.completed, 0);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the serving connection stops checkpointing when the thread starts, and takes it back if a background checkpoint fails', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-checkpoint-'));
    const settings: number[] = [];
    const failures: string[] = [];
    let writes = 0;
    // a file that does not exist: the thread's connection refuses to create it, so the checkpoint fails
    const c = new Checkpointer(
      { file: path.join(dir, 'missing.db'), writes: () => writes, setAutocheckpoint: (p) => settings.push(p), onFailure: (m) => failures.push(m) },
      20,
    );
    try {
      writes = CHECKPOINT_BUSY_WRITES;
      await until(() => failures.length === 1, 10_000, 'the failure');
      assert.deepEqual(settings, [0, 1000]);
      assert.match(failures[0], /missing\.db|unable to open|does not exist/i);
      assert.equal(c.background, false);
      writes += CHECKPOINT_BUSY_WRITES;
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(settings, [0, 1000], 'no second attempt: the serving connection keeps the work');
    } finally {
      await c.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an in-memory store has no checkpointer', async () => {
    const store = new SqliteStore({ file: ':memory:' });
    assert.equal(store.checkpointer, undefined);
    await store.close();
  });
});
