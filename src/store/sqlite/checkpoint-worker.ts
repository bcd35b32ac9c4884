// Runs on the SQLite store's background thread (src/store/sqlite/checkpointer.ts): copies the
// write-ahead log into the database file with a connection of its own, so the fsync and the page
// copies of a checkpoint never hold the serving thread's event loop; and starts the log over, or
// empties its file, when the checkpointer asks (docs/operations.md#sqlite-checkpoints).
import Database from 'better-sqlite3';

const connections = new Map<string, Database.Database>();

/**
 * How long a RESTART or TRUNCATE checkpoint waits for the serving connection's transaction and for
 * readers of the log: it holds the write lock while it waits for readers, so this bounds what a
 * write may wait for it.
 */
const WAIT_MS = 100;

/**
 * passive: copy what no reader still needs. restart: that, then take the write lock, copy the rest
 * and have the next write start the log over. truncate: the same, and empty the file.
 */
export type CheckpointMode = 'passive' | 'restart' | 'truncate';

export interface CheckpointJob {
  /** The database file. */
  file: string;
  mode: CheckpointMode;
}

export interface CheckpointResult {
  /** The checkpoint could not finish because another connection held a lock (SQLite's `busy`). */
  busy: boolean;
  /** Frames in the log, and how many of them are now in the database file. */
  logFrames: number;
  checkpointedFrames: number;
}

type Row = { busy: number; log: number; checkpointed: number };

export default function checkpoint(job: CheckpointJob): CheckpointResult {
  try {
    let db = connections.get(job.file);
    if (db === undefined) {
      db = new Database(job.file, { fileMustExist: true });
      db.pragma(`busy_timeout = ${WAIT_MS}`);
      connections.set(job.file, db);
    }
    // PASSIVE: copies what no reader still needs, without waiting on the writer or blocking it
    let [r] = db.pragma('wal_checkpoint(PASSIVE)') as Row[];
    // RESTART / TRUNCATE: only what was written since the passive one began is left to copy under the write lock
    if (job.mode === 'restart') [r] = db.pragma('wal_checkpoint(RESTART)') as Row[];
    if (job.mode === 'truncate') [r] = db.pragma('wal_checkpoint(TRUNCATE)') as Row[];
    return { busy: r.busy !== 0, logFrames: r.log, checkpointedFrames: r.checkpointed };
  } catch (e) {
    // better-sqlite3's errors lose their message crossing to the serving thread: a plain Error keeps it
    throw new Error(`checkpoint of ${job.file}: ${(e as Error).message}`);
  }
}
