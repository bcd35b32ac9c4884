// A private redis-server for tests, on a free port, never someone's 6379. TEST_REDIS_URL points
// the tests at a server of your choice instead (each test still uses its own key prefix).
// When Redis cannot be had the calling suite fails with the reason: it never skips.
// TEST_NO_REDIS=1 (set by `npm run test:unit`) makes any start a failure that says so.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { until } from './until.js';

export interface TestRedis {
  /** The server's address, without a password (a client that gives none gets NOAUTH with `requirePass`). */
  url: string;
  port: number;
  /** A fresh key prefix, so tests sharing the server never see each other's keys. */
  prefix(): string;
  stop(): Promise<void>;
  /** Kills the server (for outage tests); start() brings it back on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPing(url: string, ms = 10000): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    const c = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.ping();
      c.disconnect();
      return;
    } catch (e) {
      last = e;
      c.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`redis at ${url} did not answer within ${ms} ms: ${String(last)}`);
}

/** The process id of the Redis server answering on the port, or undefined while none answers. */
async function serverPid(port: number, password?: string): Promise<number | undefined> {
  const c = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  c.on('error', () => {});
  try {
    await c.connect();
    const pid = /process_id:(\d+)/.exec(await c.info('server'))?.[1];
    return pid === undefined ? undefined : Number(pid);
  } catch {
    return undefined;
  } finally {
    c.disconnect();
  }
}

/**
 * Spawns a redis-server (or a sentinel) on a free port and waits until it answers. A port found
 * free can be taken by another process, or by a server this suite spawned and that has not bound
 * yet, before the new one binds it: the new server then exits, and another port is tried. The
 * server answering must be the one spawned (its process id), never another on the same port.
 * `pickPort` chooses the candidate (a cluster node needs its bus port, port + 10000, free too);
 * `password` is the server's --requirepass, if it has one.
 */
export async function spawnRedisOnFreePort(
  what: string,
  args: (port: number) => string[],
  opts: { pickPort?: () => Promise<number>; password?: string } = {},
): Promise<{ port: number; proc: ChildProcess }> {
  const pickPort = opts.pickPort ?? freePort;
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort();
    const proc = spawn('redis-server', args(port), { stdio: 'ignore' });
    let exited = false;
    proc.once('exit', () => (exited = true));
    proc.once('error', () => (exited = true));
    // up when the server answering is this one; a port taken makes it exit (then another is tried)
    let up = false;
    try {
      await until(
        async () => {
          if (exited) return true;
          up = (await serverPid(port, opts.password)) === proc.pid;
          return up;
        },
        10000,
        `${what} on port ${port}`,
      );
    } catch (e) {
      proc.kill('SIGKILL');
      throw e;
    }
    if (up) return { port, proc };
    if (attempt === 5) throw new Error(`${what} could not start: the port was taken ${attempt} times`);
  }
}

const newPrefix = () => `t${randomBytes(4).toString('hex')}:`;

/** Throws when the running suite must not need Redis (TEST_NO_REDIS=1, as test:unit runs). */
export function assertRedisAllowed(): void {
  if (process.env.TEST_NO_REDIS === '1') {
    throw new Error('this test needs Redis, but it runs under TEST_NO_REDIS=1 (npm run test:unit): put it under test/unit-redis');
  }
}

/**
 * `persistent`: an append-only file (fsync always), so data survives kill() and start().
 * `requirePass`: the server requires this password (--requirepass); always a private redis-server,
 * since the password of a TEST_REDIS_URL server cannot be chosen.
 */
export async function startRedis(opts: { persistent?: boolean; requirePass?: string } = {}): Promise<TestRedis> {
  assertRedisAllowed();
  const external = process.env.TEST_REDIS_URL;
  if (external && opts.requirePass === undefined) {
    await waitForPing(external);
    return {
      url: external,
      port: Number(new URL(external).port || 6379),
      prefix: newPrefix,
      stop: async () => {},
      kill: async () => {
        throw new Error('cannot kill an external TEST_REDIS_URL server');
      },
      start: async () => {},
    };
  }
  const which = spawnSync('redis-server', ['--version']);
  if (which.error || which.status !== 0) {
    throw new Error('redis-server is not installed: install it (apt-get install -y redis-server) or set TEST_REDIS_URL');
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-redis-'));
  const pass = opts.requirePass;
  const aof = opts.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const auth = pass === undefined ? [] : ['--requirepass', pass];
  const args = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...aof, ...auth, '--dir', dir];
  const first = await spawnRedisOnFreePort('redis-server', args, { password: pass });
  const port = first.port;
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined = first.proc;
  // after kill(): the same port again, so clients configured with the url reconnect to it
  const start = async () => {
    proc = spawn('redis-server', args(port), { stdio: 'ignore' });
    await waitForPing(pass === undefined ? url : `redis://:${encodeURIComponent(pass)}@127.0.0.1:${port}`);
  };
  const kill = async () => {
    const p = proc;
    // ended already: by itself (exitCode) or by a signal (signalCode; exitCode stays null then)
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    });
  };
  return {
    url,
    port,
    prefix: newPrefix,
    start,
    kill,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
