// WAL checkpoints off the event loop (docs/operations.md#sqlite-checkpoints). SQLite checkpoints
// its write-ahead log inside a commit once the log passes 1,000 pages: that commit then copies the
// pages into the database file and fsyncs it, several milliseconds during which every request on
// the instance waits. A store that writes steadily (an admission per connection) pays that pause
// every few seconds: it was the slowest percentile of the admission benchmark
// (docs/performance.md). Once a store has written CHECKPOINT_BUSY_WRITES transactions within one
// period, its checkpoints move to a thread of their own (a one-thread piscina pool running
// checkpoint-worker.ts on its own connection): the serving connection stops checkpointing
// (wal_autocheckpoint = 0) and a PASSIVE checkpoint runs every period that had writes. If a
// background checkpoint fails, the serving connection checkpoints for itself again, as SQLite does
// by default, so the log never grows without bound.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { CheckpointResult } from './checkpoint-worker.js';

/** How often the background checkpoint runs once the store is busy. */
export const CHECKPOINT_PERIOD_MS = 1000;
/** Write transactions within one period that move checkpoints to the background thread. */
export const CHECKPOINT_BUSY_WRITES = 100;
/** The serving connection's own threshold (pages) when it checkpoints for itself: SQLite's default. */
const INLINE_AUTOCHECKPOINT_PAGES = 1000;

/** The worker module beside this one, as src/patterns/pattern-checks.ts finds its own (tsx or built). */
function workerModule(): { filename: string; execArgv?: string[] } {
  const ext = path.extname(fileURLToPath(import.meta.url));
  const filename = new URL(`./checkpoint-worker${ext}`, import.meta.url).href;
  if (ext !== '.ts' || process.execArgv.some((a) => a.includes('tsx'))) return { filename };
  return { filename, execArgv: [...process.execArgv, '--import', import.meta.resolve('tsx')] };
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

export class Checkpointer {
  private readonly timer: NodeJS.Timeout;
  private pool?: Piscina<string, CheckpointResult>;
  private seenWrites = 0;
  private running?: Promise<unknown>;
  private failed = false;
  private closed = false;
  /** Background checkpoints that finished (the tests read it). */
  completed = 0;

  constructor(
    private readonly host: CheckpointHost,
    periodMs = CHECKPOINT_PERIOD_MS,
  ) {
    this.timer = setInterval(() => this.tick(), periodMs);
    this.timer.unref();
  }

  /** Whether checkpoints run on the background thread now. */
  get background(): boolean {
    return this.pool !== undefined && !this.failed;
  }

  private tick(): void {
    if (this.closed || this.failed || this.running) return;
    const writes = this.host.writes();
    const fresh = writes - this.seenWrites;
    if (fresh === 0 || (this.pool === undefined && fresh < CHECKPOINT_BUSY_WRITES)) {
      this.seenWrites = writes;
      return;
    }
    this.seenWrites = writes;
    if (this.pool === undefined) {
      const { filename, execArgv } = workerModule();
      this.pool = new Piscina({ filename, execArgv, minThreads: 1, maxThreads: 1, idleTimeout: 60_000 });
      this.host.setAutocheckpoint(0);
    }
    this.running = this.pool
      .run(this.host.file)
      .then(
        () => void this.completed++,
        (e: unknown) => this.fail(e),
      )
      .finally(() => {
        this.running = undefined;
      });
  }

  private fail(e: unknown): void {
    if (this.closed) return;
    this.failed = true;
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
    await this.running;
    await this.pool?.destroy();
  }
}
