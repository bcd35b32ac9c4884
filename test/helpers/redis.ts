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
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-redis-'));
  const url = `redis://127.0.0.1:${port}`;
  const pass = opts.requirePass;
  let proc: ChildProcess | undefined;
  const start = async () => {
    const aof = opts.persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    const auth = pass === undefined ? [] : ['--requirepass', pass];
    proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...aof, ...auth, '--dir', dir], {
      stdio: 'ignore',
    });
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
  await start();
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
