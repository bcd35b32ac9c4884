// Checks stream patterns for the management API without holding the event loop: the cost check is
// counted from the syntax on the caller's thread; only a pattern within the cap is compiled, on a
// small pool of worker threads.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { ApiError } from '../errors.js';
import { patternCostProblem } from '../domain/matchers.js';
import type { Logger } from '../observability/logger.js';

export interface PatternCheckOptions {
  /** Worker threads compiling patterns (config `limits.patternWorkers`). */
  workers: number;
  /** Batches (one per request) waiting or compiling before a new one is refused (`limits.patternQueue`). */
  queue: number;
}

/** Seconds a refused writer is told to wait: a full queue drains in about that on one worker. */
export const PATTERN_RETRY_AFTER_SECONDS = 1;

const busy = () =>
  new ApiError(503, 'Too many stream patterns are being validated; retry', { retryAfterSeconds: PATTERN_RETRY_AFTER_SECONDS });
const unavailable = () =>
  new ApiError(503, 'Stream pattern validation failed to run; retry', { retryAfterSeconds: PATTERN_RETRY_AFTER_SECONDS });

/**
 * The worker module beside this one, with the same extension: `.ts` when the service runs through
 * tsx, `.js` once built. A `.ts` worker needs tsx's loader; threads inherit `--import tsx` from the
 * command line, but not a loader registered from code (bin/streamgate.mjs), so it is added then.
 */
function workerModule(): { filename: string; execArgv?: string[] } {
  const ext = path.extname(fileURLToPath(import.meta.url));
  const filename = new URL(`./compile-worker${ext}`, import.meta.url).href;
  if (ext !== '.ts' || process.execArgv.some((a) => a.includes('tsx'))) return { filename };
  return { filename, execArgv: [...process.execArgv, '--import', import.meta.resolve('tsx')] };
}

interface Batch {
  patterns: string[];
  waiters: Array<{ resolve: (problem: string | null) => void; reject: (e: unknown) => void }>;
}

export class PatternChecks {
  private pool?: Piscina<string[], Array<string | null>>;
  /** Batches handed to the pool and not yet answered. */
  private pending = 0;
  private next?: Batch;
  private closed = false;

  constructor(
    private readonly options: PatternCheckOptions,
    private readonly logger?: Logger,
  ) {
    // The cost model builds its case-folding table, a noticeable stall, on the first (?i) it costs:
    // at start, not inside the first write or background compile that carries one.
    patternCostProblem('(?i:k)');
  }

  /**
   * A pattern's problem, or null: the cost check at once, then RE2's compile on a worker. The
   * compiles asked for within one turn of the event loop (one request's patterns, as zod walks the
   * body) travel as one batch. Rejects with a 503 ApiError when the queue is full or a worker failed.
   */
  problem(pattern: string): string | Promise<string | null> {
    return patternCostProblem(pattern) ?? this.compileProblem(pattern);
  }

  /** RE2's verdict on one pattern, batched with the others asked for in the same turn. */
  compileProblem(pattern: string): Promise<string | null> {
    return new Promise((resolve, reject) => {
      if (!this.next) {
        const batch: Batch = { patterns: [], waiters: [] };
        this.next = batch;
        queueMicrotask(() => {
          this.next = undefined;
          this.compileProblems(batch.patterns).then(
            (problems) => {
              for (const [i, w] of batch.waiters.entries()) w.resolve(problems[i]);
            },
            (e: unknown) => {
              for (const w of batch.waiters) w.reject(e);
            },
          );
        });
      }
      this.next.patterns.push(pattern);
      this.next.waiters.push({ resolve, reject });
    });
  }

  /** RE2's verdict on each pattern of a batch, compiled on a worker thread. */
  async compileProblems(patterns: string[]): Promise<Array<string | null>> {
    if (patterns.length === 0) return [];
    if (this.closed) throw unavailable();
    // The bound is on batches, not patterns: a request carries at most a few hundred patterns, and
    // refusing a whole request keeps a refused write from leaving half its work queued.
    if (this.pending >= this.options.queue) throw busy();
    this.pending++;
    try {
      return await this.workers().run(patterns);
    } catch (e) {
      this.logger?.warn({ err: (e as Error).message, patterns: patterns.length }, 'stream patterns: a compile worker failed; it is replaced');
      throw unavailable();
    } finally {
      this.pending--;
    }
  }

  /** Threads of the pool (none before the first compile). */
  get threads(): readonly import('node:worker_threads').Worker[] {
    return this.pool?.threads ?? [];
  }

  /** Stops the workers; patterns asked for afterwards get the 503. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  /** Started on first use: most processes (the CLI, most tests) never compile a pattern for a write. */
  private workers(): Piscina<string[], Array<string | null>> {
    if (!this.pool) {
      const { filename, execArgv } = workerModule();
      this.pool = new Piscina({
        filename,
        execArgv,
        minThreads: this.options.workers,
        maxThreads: this.options.workers,
        concurrentTasksPerWorker: 1,
        idleTimeout: 60_000,
        // On a box with as many cores as the service has busy threads, compiles give way to the
        // event loop (effective where the optional @napi-rs/nice module is installed).
        niceIncrement: 10,
      });
      // A thread dying between tasks is replaced by the pool; it must not become an unhandled 'error'.
      this.pool.on('error', (e: Error) => this.logger?.warn({ err: e.message }, 'stream patterns: compile worker error'));
    }
    return this.pool;
  }
}
