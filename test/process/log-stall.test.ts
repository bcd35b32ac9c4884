// Logging never blocks and never hangs the real server: with stdout a pipe nobody reads, or a pipe
// whose reader went away, decisions are all answered, memory stays bounded, the lost log lines are
// counted on /metrics and SIGTERM still ends the process within server.shutdownGraceMs + 1 s. With a
// reader that keeps up nothing is lost.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request as httpRequest, Agent } from 'node:http';
import { ROOT, cleanEnv } from '../helpers/process.js';

const GRACE_MS = 5000;
const DECISIONS = 5000;

interface Server {
  proc: ChildProcess;
  port: number;
  base: string;
  dir: string;
  /** Every stdout line read so far (until stopReading/closeReader). */
  lines: string[];
  exited: Promise<number | string>;
  /** Resolves when stdout has ended (every line written by the process has been read). */
  stdoutEnded: Promise<void>;
  stopReading(): void;
  closeReader(): void;
}

const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL'); // a failed case leaves none behind
});

/** Starts `src/main.ts` as a child with stdout on a pipe this test controls. */
function start(): Promise<Server> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-logstall-'));
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', STREAMGATE_DATA_DIR: dir, STREAMGATE_SERVER_SHUTDOWNGRACEMS: String(GRACE_MS) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  const lines: string[] = [];
  let stderr = '';
  proc.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | string>((resolve) => proc.on('exit', (code, sig) => resolve(code ?? sig ?? -1)));
  const stdoutEnded = new Promise<void>((resolve) => {
    proc.stdout!.on('end', resolve);
    proc.stdout!.on('close', resolve);
  });
  let rest = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${lines.join('\n')}\n${stderr}`)), 30_000);
    const onData = (b: Buffer) => {
      const parts = (rest + b.toString()).split('\n');
      rest = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        let j: { msg?: string; port?: number } = {};
        try {
          j = JSON.parse(line) as typeof j;
        } catch {
          /* asserted on later: every line is JSON */
        }
        if (j.msg === 'listening' && j.port) {
          clearTimeout(timer);
          resolve({
            proc,
            port: j.port,
            base: `http://127.0.0.1:${j.port}`,
            dir,
            lines,
            exited,
            stdoutEnded,
            // The pipe stays open, nobody reads it: the child's writes back up once it is full.
            stopReading: () => {
              proc.stdout!.off('data', onData);
              proc.stdout!.pause();
            },
            // The reader goes away: the child's writes fail (EPIPE).
            closeReader: () => {
              proc.stdout!.off('data', onData);
              proc.stdout!.destroy();
            },
          });
        }
      }
    };
    proc.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${lines.join('\n')}\n${stderr}`));
    });
  });
}

function post(port: number, agent: Agent, body: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/hooks/authorize', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? -1));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    req.end(body);
  });
}

/** A subscribe token of the default account, and the body of a decision it passes. */
async function decisionBody(s: Server): Promise<string> {
  const secret = readFileSync(path.join(s.dir, 'default-api-secret'), 'utf8').trim();
  const res = await fetch(`${s.base}/api/subscribe_token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ label: 'l', streams: [{ streamName: 'cam1' }] }),
  });
  assert.equal(res.status, 200);
  const { token } = ((await res.json()) as { data: { token: string } }).data;
  return JSON.stringify({ action: 'subscribe', token, streamName: 'cam1' });
}

/** `n` decisions over 16 keep-alive connections; the count of each answer. */
async function decide(s: Server, body: string, n: number): Promise<Record<string, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const counts: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        next++;
        const r = String(await post(s.port, agent, body));
        counts[r] = (counts[r] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return counts;
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, 'VmRSS readable');
  return Number(m[1]) * 1024;
}

async function droppedOnMetrics(s: Server): Promise<number> {
  const res = await fetch(`${s.base}/metrics`);
  assert.equal(res.status, 200);
  const m = /^streamgate_log_lines_dropped_total (\d+)$/m.exec(await res.text());
  assert.ok(m, 'streamgate_log_lines_dropped_total is exposed');
  return Number(m[1]);
}

/** SIGTERM: the exit code and how long the process took to go. */
async function terminate(s: Server): Promise<{ code: number | string; ms: number }> {
  const t0 = Date.now();
  s.proc.kill('SIGTERM');
  const code = await Promise.race([s.exited, new Promise<string>((r) => setTimeout(() => r('still running'), GRACE_MS + 10_000))]);
  const ms = Date.now() - t0;
  if (code === 'still running') s.proc.kill('SIGKILL');
  return { code, ms };
}

async function stalledRun(s: Server, note: (msg: string) => void): Promise<void> {
  const body = await decisionBody(s);
  assert.deepEqual(await decide(s, body, 200), { 200: 200 }, 'warm-up');
  const before = rssBytes(s.proc.pid!);
  const t0 = Date.now();
  assert.deepEqual(await decide(s, body, DECISIONS), { 200: DECISIONS }, 'every decision answered');
  const grown = rssBytes(s.proc.pid!) - before;
  note(`${DECISIONS} decisions in ${Date.now() - t0} ms; RSS ${(grown / 1048576).toFixed(1)} MB more`);
  assert.ok(grown < 50 * 1024 * 1024, `RSS grew by ${(grown / 1048576).toFixed(1)} MB`);
  const dropped = await droppedOnMetrics(s);
  assert.ok(dropped > 0, `dropped ${dropped}`);
  const { code, ms } = await terminate(s);
  note(`${dropped} log lines dropped; exited ${code} ${ms} ms after SIGTERM`);
  assert.equal(code, 0);
  assert.ok(ms < GRACE_MS + 1000, `exited after ${ms} ms`);
}

describe('logging with a stalled or vanished stdout', { timeout: 180_000 }, () => {
  it('stdout held open but never read: decisions answered, memory bounded, losses counted, SIGTERM exits 0 in time', async (t) => {
    const s = await start();
    s.stopReading();
    await stalledRun(s, (m) => t.diagnostic(m));
  });

  it('stdout reader gone: decisions answered, memory bounded, losses counted, SIGTERM exits 0 in time', async (t) => {
    const s = await start();
    s.closeReader();
    await stalledRun(s, (m) => t.diagnostic(m));
  });

  it('a reader that keeps up: nothing dropped, every decision and request line present', async (t) => {
    const s = await start();
    const body = await decisionBody(s);
    const t0 = Date.now();
    assert.deepEqual(await decide(s, body, DECISIONS), { 200: DECISIONS });
    t.diagnostic(`${DECISIONS} decisions in ${Date.now() - t0} ms`);
    assert.equal(await droppedOnMetrics(s), 0);
    const { code, ms } = await terminate(s);
    assert.equal(code, 0);
    assert.ok(ms < GRACE_MS + 1000, `exited after ${ms} ms`);
    await s.stdoutEnded;
    const records = s.lines.map((l) => JSON.parse(l) as { msg?: string; path?: string; allowed?: boolean });
    assert.equal(records.filter((r) => r.msg === 'decision' && r.allowed === true).length, DECISIONS);
    assert.equal(records.filter((r) => r.msg === 'request' && r.path === '/hooks/authorize').length, DECISIONS);
    assert.equal(records.filter((r) => r.msg?.includes('log lines dropped')).length, 0);
    assert.equal(records.at(-1)?.msg, 'stopped');
  });
});
