// WAL checkpoints off the event loop, and a bound on the log (docs/operations.md#sqlite-checkpoints).
// SQLite checkpoints its write-ahead log inside a commit once the log passes 1,000 pages: that
// commit then copies the pages into the database file and fsyncs it, several milliseconds during
// which every request on the instance waits. A store that writes steadily (an admission per
// connection) pays that pause every few seconds: it was the slowest percentile of the admission
// benchmark (docs/performance.md). Once a store has written CHECKPOINT_BUSY_WRITES transactions
// within one period, its checkpoints move to a thread of their own (a one-thread piscina pool
// running checkpoint-worker.ts on its own connection): a PASSIVE checkpoint runs every period that
// had writes, and once the thread has finished its first one (starting it takes a moment, while the
// writes go on) the serving connection stops checkpointing (wal_autocheckpoint = 0). If a
// background checkpoint fails, the serving connection checkpoints for itself again, as SQLite does
// by default.
//
// A PASSIVE checkpoint alone never bounds the log under steady writes. SQLite writes the log from its
// beginning again only when a write transaction begins on a log whose every frame is in the database
// file; a checkpoint on another thread copies the frames it saw when it began, and by the time it
// ends the serving connection has appended more, so no write ever begins on a fully copied log and
// the file grows for as long as the writes go on. So, while checkpoints run in the background, the
// log is looked at every SIZE_CHECK_MS, and once it holds WAL_RESTART_BYTES the thread runs a
// PASSIVE checkpoint (the bulk of the copy, the writer never held up) and then a RESTART one: that
// one waits for the transaction under way, copies what was written meanwhile and makes the next
// write start the log over from the beginning of the file. A write that arrives during those few
// milliseconds (a copy and two fsyncs) waits for them (busy_timeout); reads never do. The file is
// not truncated then (truncating a file of that size holds the writer up longer still;
// docs/operations.md#sqlite-checkpoints has the figures):
// it keeps the size the log reached, under WAL_LIMIT_BYTES, and is written over. Once the store
// has a period without writes, a TRUNCATE checkpoint empties it. journal_size_limit
// (WAL_LIMIT_BYTES) caps what the file keeps whenever the log starts over by itself (SQLite's own
// checkpoints: a quiet store, or after a failure).
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { CheckpointJob, CheckpointMode, CheckpointResult } from './checkpoint-worker.js';

/** How often the background checkpoint runs once the store is busy. */
export const CHECKPOINT_PERIOD_MS = 1000;
/** Write transactions within one period that move checkpoints to the background thread. */
export const CHECKPOINT_BUSY_WRITES = 100;
/** The most the log file keeps once it starts over (the serving connection's journal_size_limit). */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/**
 * The log length at which the background thread starts it over: a quarter of the limit, so that what
 * is written until the next size check and during the checkpoint itself, at the store's fastest
 * write rate (docs/operations.md#sqlite-checkpoints), stays under WAL_LIMIT_BYTES.
 */
export const WAL_RESTART_BYTES = WAL_LIMIT_BYTES / 4;
/** How often the log's length is looked at while checkpoints run in the background. */
export const SIZE_CHECK_MS = 100;
/** The serving connection's own threshold (pages) when it checkpoints for itself: SQLite's default. */
const INLINE_AUTOCHECKPOINT_PAGES = 1000;

/** The worker module beside this one, as src/patterns/pattern-checks.ts finds its own (tsx or built). */
function workerModule(): { filename: string; execArgv?: string[] } {
  const ext = path.extname(fileURLToPath(import.meta.url));
  const filename = new URL(`./checkpoint-worker${ext}`, import.meta.url).href;
  if (ext !== '.ts' || process.execArgv.some((a) => a.includes('tsx'))) return { filename };
  return { filename, execArgv: [...process.execArgv, '--import', import.meta.resolve('tsx')] };
}

/**
 * Whether the log in the WAL file `wal` reaches `bytes`. The file's size cannot tell once the log
 * has started over (the file keeps its size and is written over), so this reads SQLite's WAL format
 * (docs/operations.md#sqlite-checkpoints): a 32-byte header (the page size at offset 8, the log's two
 * salts at 16 and 20, big-endian), then frames of a 24-byte header (their salts at 8 and 12) and a
 * page. The frame that ends at or past `bytes` belongs to the current log when its salts are the
 * header's; a frame left from before the log started over carries the old ones.
 */
export function logReaches(wal: string, bytes: number): boolean {
  let fd: number;
  try {
    fd = openSync(wal, 'r');
  } catch {
    return false;
  }
  try {
    const header = Buffer.alloc(32);
    if (readSync(fd, header, 0, 32, 0) < 32) return false;
    const frameBytes = 24 + header.readUInt32BE(8);
    const frame = Math.max(1, Math.ceil((bytes - 32) / frameBytes)); // 1-based
    const at = 32 + (frame - 1) * frameBytes;
    const frameHeader = Buffer.alloc(24);
    if (!Number.isSafeInteger(at) || readSync(fd, frameHeader, 0, 24, at) < 24) return false;
    return frameHeader.readUInt32BE(8) === header.readUInt32BE(16) && frameHeader.readUInt32BE(12) === header.readUInt32BE(20);
  } finally {
    closeSync(fd);
  }
}

export interface CheckpointHost {
  /** The database file (never ':memory:'). */
  file: string;
  /** Write transactions committed so far by the serving connection. */
  writes(): number;
  /** Sets the serving connection's wal_autocheckpoint (0: it never checkpoints for itself). */
  setAutocheckpoint(pages: number): void;
  /** Told once when background checkpoints stop after a failure (the message names no secret). */
  onFailure(message: string): void;
}

export interface CheckpointerOptions {
  /** The background checkpoint's period (default CHECKPOINT_PERIOD_MS). */
  periodMs?: number;
  /** The log length at which the thread starts it over (default WAL_RESTART_BYTES; the tests use less). */
  restartAtBytes?: number;
  /**
   * Write transactions within one period that move checkpoints to the thread (default
   * CHECKPOINT_BUSY_WRITES); 1: from the first write (a file written in batches off the decision
   * path, such as the decision history, whose checkpoints should never run on the event loop).
   */
  busyWrites?: number;
}

export class Checkpointer {
  private readonly timer: NodeJS.Timeout;
  private sizeWatch?: NodeJS.Timeout;
  private pool?: Piscina<CheckpointJob, CheckpointResult>;
  /** The serving connection's write count at the last period, and at the last checkpoint started. */
  private seenWrites = 0;
  private writesAtJob = 0;
  private running?: Promise<void>;
  /** The serving connection has stopped checkpointing (the thread finished a checkpoint). */
  private handedOver = false;
  private failed = false;
  private closed = false;
  private readonly restartAt: number;
  private readonly busyWrites: number;
  private readonly wal: string;
  /** Background checkpoints that finished (the tests read it). */
  completed = 0;
  /** Background checkpoints that started the log over, and that emptied the file (the tests read them). */
  restarted = 0;
  truncated = 0;

  constructor(
    private readonly host: CheckpointHost,
    opts: CheckpointerOptions = {},
  ) {
    this.restartAt = opts.restartAtBytes ?? WAL_RESTART_BYTES;
    this.busyWrites = opts.busyWrites ?? CHECKPOINT_BUSY_WRITES;
    this.wal = `${host.file}-wal`;
    this.timer = setInterval(() => void this.tick(), opts.periodMs ?? CHECKPOINT_PERIOD_MS);
    this.timer.unref();
  }

  /** Whether checkpoints run on the background thread now. */
  get background(): boolean {
    return this.pool !== undefined && !this.failed;
  }

  /** The log file's size in bytes (0 while there is none). */
  walBytes(): number {
    return statSync(this.wal, { throwIfNoEntry: false })?.size ?? 0;
  }

  /**
   * The period's step (the timer calls it; the tests too): moves checkpoints to the thread once the
   * store is busy, then checkpoints every period that had writes, and empties the file in the first
   * period without any. Resolves when its checkpoint is done.
   */
  tick(): Promise<void> {
    if (this.closed || this.failed || this.running) return this.running ?? Promise.resolve();
    const writes = this.host.writes();
    const fresh = writes - this.seenWrites;
    this.seenWrites = writes;
    if (fresh === 0) return this.pool !== undefined && this.walBytes() > 0 ? this.run('truncate') : Promise.resolve();
    if (this.pool === undefined && fresh < this.busyWrites) return Promise.resolve();
    if (this.pool === undefined) {
      const { filename, execArgv } = workerModule();
      this.pool = new Piscina({ filename, execArgv, minThreads: 1, maxThreads: 1, idleTimeout: 60_000 });
      this.sizeWatch = setInterval(() => void this.checkSize(), SIZE_CHECK_MS);
      this.sizeWatch.unref();
    }
    return this.run(logReaches(this.wal, this.restartAt) ? 'restart' : 'passive');
  }

  /**
   * The size check (every SIZE_CHECK_MS in the background; the tests call it): starts the log over
   * once it holds the restart length, without waiting for the period. Resolves when that is done.
   */
  checkSize(): Promise<void> {
    if (this.closed || this.failed || this.running || this.pool === undefined) return this.running ?? Promise.resolve();
    // no write since the last checkpoint: the log has not grown (and a log just started over still carries its old header)
    if (this.host.writes() === this.writesAtJob || !logReaches(this.wal, this.restartAt)) return Promise.resolve();
    return this.run('restart');
  }

  private run(mode: CheckpointMode): Promise<void> {
    const pool = this.pool as Piscina<CheckpointJob, CheckpointResult>;
    this.writesAtJob = this.host.writes();
    const running = pool
      .run({ file: this.host.file, mode })
      .then(
        (r) => {
          this.completed++;
          if (!this.handedOver && !this.closed) {
            this.handedOver = true;
            this.host.setAutocheckpoint(0);
          }
          // busy: the writer or a reader kept the log from starting over; the next size check tries again
          if (!r.busy && mode === 'restart') this.restarted++;
          if (!r.busy && mode === 'truncate') this.truncated++;
        },
        (e: unknown) => this.fail(e),
      )
      .finally(() => {
        this.running = undefined;
      });
    this.running = running;
    return running;
  }

  private fail(e: unknown): void {
    if (this.closed) return;
    this.failed = true;
    clearInterval(this.sizeWatch);
    this.host.setAutocheckpoint(INLINE_AUTOCHECKPOINT_PAGES);
    // an error from the thread may arrive as a plain object (structured clone): its message either way
    const message = (e as { message?: unknown } | null)?.message;
    this.host.onFailure(typeof message === 'string' ? message : String(e));
    void this.pool?.destroy();
  }

  /** Waits for a checkpoint under way and stops the thread; the store then closes its connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.sizeWatch);
    await this.running;
    await this.pool?.destroy();
  }
}
