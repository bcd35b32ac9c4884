// What a benchmark run does before it measures: this process (the load generator's parent) onto
// the load core, the current checkout built, the machine described, and a private Redis off the
// servers' core. npm run bench (run.ts) and npm run bench:compare (compare.ts) start the same way.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { CONNECTIONS, DURATION, LOAD_CPU, ROOT, SERVER_CPU } from './config.js';
import { type BenchRedis, startRedis } from './targets.js';

export interface Machine {
  cpus: number;
  cpu: string | undefined;
  memGiB: number;
  node: string;
}

const pin = (pid: number, cpu: string) => spawnSync('taskset', ['-cp', cpu, String(pid)], { stdio: 'ignore' });

/** This process onto the load core: the load generator and Redis stay off the servers' core. */
export function pinToLoadCore(): void {
  pin(process.pid, LOAD_CPU);
}

/**
 * This process, every thread of it, onto `cpus` for `work` (a thread started meanwhile, such as a
 * worker, inherits them), each thread back onto the CPUs it had after: a step that runs no server
 * (seeding through the store) gives the load generator the servers' core as well. What such a step
 * measures is Redis's (its memory, commands and CPU), not the load generator's.
 */
export async function onCores<T>(cpus: string, work: () => Promise<T>): Promise<T> {
  const threads = () => {
    try {
      return readdirSync(`/proc/${process.pid}/task`);
    } catch {
      return [];
    }
  };
  // "pid 123's current affinity list: 0" for each thread
  const before = threads().map((tid) => [tid, /:\s*(\S+)\s*$/.exec(spawnSync('taskset', ['-cp', tid]).stdout?.toString() ?? '')?.[1]] as const);
  spawnSync('taskset', ['-a', '-cp', cpus, String(process.pid)], { stdio: 'ignore' });
  try {
    return await work();
  } finally {
    for (const [tid, list] of before) if (list) spawnSync('taskset', ['-cp', list, tid], { stdio: 'ignore' });
  }
}

/**
 * `npm run build` of this checkout, unless BENCH_NO_BUILD is set: the build's exit status, or
 * undefined when it was skipped.
 */
export function buildCurrent(): number | null | undefined {
  if (process.env.BENCH_NO_BUILD) return undefined;
  return spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' }).status;
}

/** The machine and the run's settings, logged on one line. */
export function describeMachine(): Machine {
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, memGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  console.log(`machine: ${JSON.stringify(machine)}; duration ${DURATION}s, ${CONNECTIONS} connections, servers pinned to CPU ${SERVER_CPU}, load and Redis to CPU ${LOAD_CPU}`);
  return machine;
}

/** A private redis-server, pinned to BENCH_REDIS_CPU (default: with the load generator, off the servers' core). */
export async function startPinnedRedis(): Promise<BenchRedis> {
  const redis = await startRedis();
  if (redis.pid) pin(redis.pid, process.env.BENCH_REDIS_CPU ?? LOAD_CPU);
  return redis;
}
