// The processes under test: the floors and Streamgate (dist/main.js), each pinned to the servers' core;
// and a private Redis for the Redis-backed runs (the benchmark imports nothing from the tests but
// what the time to cut runs: the end-to-end nginx helper and the media-server API stand-ins).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { ROOT, STREAMGATE_ENV, STREAMGATE_NODE_FLAGS, taskset } from './config.js';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface Target {
  name: string;
  base: string;
  proc: ChildProcess;
}

/** `args` on the servers' core, run in `cwd` (this checkout by default), ready once /healthz answers. */
export async function startProcess(name: string, args: string[], env: Record<string, string>, cwd = ROOT): Promise<Target> {
  const port = await freePort();
  const [cmd, ...rest] = taskset(args.map((a) => a.replace('$PORT', String(port))));
  const proc = spawn(cmd, rest, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  // Ready when /healthz answers (the floors answer every path): independent of log levels.
  const deadline = Date.now() + 30000;
  let exited = false;
  proc.once('exit', () => (exited = true));
  for (;;) {
    if (exited) throw new Error(`${name} exited before it was ready`);
    if (Date.now() > deadline) throw new Error(`${name} did not start`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  createInterface({ input: proc.stdout! }).on('line', () => {}); // drain
  return { name, base: `http://127.0.0.1:${port}`, proc };
}

/** user + system CPU time of a process so far, in µs (Linux /proc; NaN elsewhere). */
export function cpuUsOf(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * Streamgate (dist/main.js of the checkout at `root`, this one by default) with the bench's settings
 * (STREAMGATE_ENV) and `env`, on a data directory of its own unless `env` names one.
 */
export async function streamgate(name: string, env: Record<string, string>, root = ROOT): Promise<{ t: Target; secret: string; dir: string }> {
  const dir = env.STREAMGATE_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'sg-bench-'));
  const t = await startProcess(name, [process.execPath, ...STREAMGATE_NODE_FLAGS, 'dist/main.js'], { ...STREAMGATE_ENV, ...env, STREAMGATE_DATA_DIR: dir }, root);
  const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
  return { t, secret, dir };
}

export interface BenchRedis {
  url: string;
  pid?: number;
  stop(): Promise<void>;
}

/** A private redis-server on a free port, no persistence: the benchmark may flush it. */
export async function startRedis(): Promise<BenchRedis> {
  if (spawnSync('redis-server', ['--version']).error) throw new Error('redis-server is not installed: apt-get install -y redis-server');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-bench-redis-'));
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10000;
  for (;;) {
    const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      c.disconnect();
      break;
    } catch (e) {
      c.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer: ${String(e)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    pid: proc.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      }),
  };
}

export async function usedMemory(url: string): Promise<number> {
  const c = new Redis(url);
  const info = await c.info('memory');
  c.disconnect();
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

/** The bench's private Redis holds nothing else: start the next size from empty. */
export async function flushAll(url: string): Promise<void> {
  const c = new Redis(url);
  await c.flushall();
  c.disconnect();
}

/** SIGTERM, then the process's exit (at once if it has already exited). */
export async function stopTarget(t: Target): Promise<void> {
  if (t.proc.exitCode !== null || t.proc.signalCode !== null) return;
  const exited = new Promise((r) => t.proc.once('exit', r));
  t.proc.kill('SIGTERM');
  await exited;
}
