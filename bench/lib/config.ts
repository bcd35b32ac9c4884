// The benchmark's settings (environment) and where its processes run.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DURATION = Number(process.env.BENCH_DURATION ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
export const SIZES = (process.env.BENCH_SIZES ?? '1000,100000,1000000').split(',').map(Number).filter((n) => n > 0);
/** Servers run on this core; the load generator, this process and Redis on the other. */
export const SERVER_CPU = '1';
export const LOAD_CPU = '0';
export const taskset = (args: string[]) => (spawnSync('taskset', ['--version']).error ? args : ['taskset', '-c', SERVER_CPU, ...args]);
