// Runs on the SQLite store's background thread (src/store/sqlite/checkpointer.ts): copies the
// write-ahead log into the database file with a connection of its own, so the fsync and the page
// copies of a checkpoint never hold the serving thread's event loop.
import Database from 'better-sqlite3';

const connections = new Map<string, Database.Database>();

export interface CheckpointResult {
  /** The checkpoint could not finish because another connection held a lock (SQLite's `busy`). */
  busy: boolean;
  /** Frames in the log, and how many of them are now in the database file. */
  logFrames: number;
  checkpointedFrames: number;
}

export default function checkpoint(file: string): CheckpointResult {
  try {
    let db = connections.get(file);
    if (db === undefined) {
      db = new Database(file, { fileMustExist: true });
      db.pragma('busy_timeout = 1000');
      connections.set(file, db);
    }
    // PASSIVE: copies what no reader still needs, without waiting on the writer or blocking it
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return { busy: r.busy !== 0, logFrames: r.log, checkpointedFrames: r.checkpointed };
  } catch (e) {
    // better-sqlite3's errors lose their message crossing to the serving thread: a plain Error keeps it
    throw new Error(`checkpoint of ${file}: ${(e as Error).message}`);
  }
}
