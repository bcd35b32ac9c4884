// Load generation: wrk when installed (a C generator, far lighter on the shared core), else
// autocannon; full-speed runs and runs paced at a fixed rate.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { CONNECTIONS, DURATION, LOAD_CPU } from './config.js';
import { medianBy, p99Between, serverBuckets } from './stats.js';
import { cpuUsOf, type Target } from './targets.js';

export interface Case {
  name: string;
  /** The route pattern Streamgate labels it with (its server-side latency histogram). */
  route?: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect: number;
  /** Every request writes to the store (a session admission): on Redis its floor makes a round trip too. */
  storeWrite?: true;
}

export interface Result {
  target: string;
  case: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  unexpected: number;
  /** Server CPU time (user + system) per request, µs: steadier than req/s on a shared machine. */
  cpuUs?: number;
  /** cpuUs before rounding: comparing two builds (bench/compare.ts) tells apart less than 1 µs. */
  cpuUsExact?: number;
  /** p99 as Streamgate's own request histogram saw it (upper bound of the bucket, ms). */
  serverP99?: number;
  /** req/s of each round, when the figure is the median of several (throughput targets). */
  rounds?: number[];
}

/** wrk, when installed (Debian's package): a C load generator, far lighter than one in Node on the shared core. */
export const WRK = !process.env.BENCH_AUTOCANNON && !spawnSync('wrk', ['--version']).error;
const luaString = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;

/** ms from wrk's "665.00us" / "1.31ms" / "1.02s". */
export function wrkMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60000;
}

interface WrkRun {
  total: number;
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx/3xx, and connect/read/write/timeout errors. */
  non2xx: number;
  errors: number;
}

/**
 * One wrk run pinned to the load core. With `rate`, each connection waits a random 0.5–1.5× of
 * connections/rate between its requests (wrk's delay()), so requests arrive spread out at that
 * rate on average and wrk times each from its send to its answer.
 */
async function runWrk(url: string, c: Case, seconds: number, rate?: number): Promise<WrkRun> {
  const lua = [`wrk.method = ${luaString(c.method)}`];
  if (c.body !== undefined) lua.push(`wrk.body = ${luaString(c.body)}`);
  for (const [k, v] of Object.entries(c.headers)) lua.push(`wrk.headers[${luaString(k)}] = ${luaString(v)}`);
  if (rate) lua.push(`local d = ${(CONNECTIONS * 1000) / rate}`, 'function delay() return d * (0.5 + math.random()) end');
  const script = path.join(mkdtempSync(path.join(tmpdir(), 'sg-wrk-')), 'case.lua');
  writeFileSync(script, `${lua.join('\n')}\n`);
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, url];
  // Not spawnSync: this process's own keep-alive sockets (the metrics scrapes) must see the
  // server close them meanwhile, or the next scrape reuses a dead one.
  const child = spawn('taskset', ['-c', LOAD_CPU, 'wrk', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  await new Promise((r) => child.once('close', r));
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const total = num(/(\d+) requests in/);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    total,
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/) || 0,
    errors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

/** A wrk run as a Result: answers of the expected class count as expected (wrk only tells 2xx/3xx from the rest). */
function fromWrk(t: Target, c: Case, w: WrkRun): Result {
  const ok = c.expect >= 400 ? w.non2xx : w.total - w.non2xx;
  const ms = (v: number) => Math.round(v * 100) / 100;
  return { target: t.name, case: c.name, rps: Math.round(w.rps), p50: ms(w.p50), p99: ms(w.p99), errors: w.errors, unexpected: w.total - ok };
}

/** The server's CPU time per request since `cpu0` (cpuUsOf), rounded and not. */
function cpuPerRequest(t: Target, cpu0: number, requests: number): Pick<Result, 'cpuUs' | 'cpuUsExact'> {
  if (requests <= 0) return { cpuUs: undefined, cpuUsExact: undefined };
  const exact = (cpuUsOf(t.proc.pid) - cpu0) / requests;
  return { cpuUs: Math.round(exact), cpuUsExact: exact };
}

export async function load(t: Target, c: Case, opts: { duration?: number; warmup?: number } = {}): Promise<Result> {
  if (WRK) {
    await runWrk(t.base + c.path, c, opts.warmup ?? 1); // JIT warm-up, not measured
    const cpu0 = cpuUsOf(t.proc.pid);
    const w = await runWrk(t.base + c.path, c, opts.duration ?? DURATION);
    return { ...fromWrk(t, c, w), ...cpuPerRequest(t, cpu0, w.total) };
  }
  // JIT warm-up, not measured
  await autocannon({ url: t.base + c.path, method: c.method, headers: c.headers, body: c.body, connections: CONNECTIONS, duration: opts.warmup ?? 1 });
  const cpu0 = cpuUsOf(t.proc.pid);
  const r = await autocannon({
    url: t.base + c.path,
    method: c.method,
    headers: c.headers,
    body: c.body,
    connections: CONNECTIONS,
    duration: opts.duration ?? DURATION,
    expectBody: undefined,
  });
  const statusOk = c.expect === 200 ? r['2xx'] : c.expect >= 400 && c.expect < 500 ? r['4xx'] : 0;
  return {
    target: t.name,
    case: c.name,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    unexpected: r.requests.total > 0 ? r.requests.total - statusOk - r.errors : 0,
    ...cpuPerRequest(t, cpu0, r.requests.total),
  };
}

/**
 * Latency at a fixed request rate, spread evenly in time (autocannon's rate limits fire in bursts,
 * which measures its own queueing): one request every 1/rate s, each timed on its own.
 */
export async function paced(t: Target, c: Case, rate: number, seconds: number): Promise<Result> {
  if (WRK) {
    const before = c.route ? await serverBuckets(t.base, c.route) : undefined;
    const w = await runWrk(t.base + c.path, c, seconds, rate);
    const serverP99 = c.route && before ? p99Between(before, await serverBuckets(t.base, c.route)) : undefined;
    return { ...fromWrk(t, c, w), serverP99 };
  }
  const pool = new Pool(t.base, { connections: CONNECTIONS, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let unexpected = 0;
  const total = Math.floor(rate * seconds);
  const before = c.route ? await serverBuckets(t.base, c.route) : undefined;
  const start = performance.now();
  const inflight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    inflight.push(
      pool
        .request({ path: c.path, method: c.method, headers: c.headers, body: c.body })
        .then(async (res) => {
          await res.body.dump();
          latencies.push(performance.now() - t0);
          if (res.statusCode !== c.expect) unexpected++;
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(inflight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 100) / 100;
  const serverP99 = c.route && before ? p99Between(before, await serverBuckets(t.base, c.route)) : undefined;
  return { target: t.name, case: c.name, rps: Math.round(latencies.length / seconds), p50: q(0.5), p99: q(0.99), errors, unexpected, serverP99 };
}

/**
 * Three paced runs: the client p99 is the run with the median p99 (its figures with it); the
 * server-side p99 is the median of the three runs' own histogram p99s (a run without histogram
 * figures counts as unknown). All three of each are kept.
 */
export async function pacedMedian(t: Target, c: Case, rate: number, seconds: number): Promise<Result & { p99Runs: number[]; serverP99Runs: Array<number | undefined> }> {
  const runs: Result[] = [];
  for (let i = 0; i < 3; i++) runs.push(await paced(t, c, rate, seconds));
  const server = runs.map((r) => r.serverP99);
  const known = server.filter((v): v is number => v !== undefined);
  const serverP99 = known.length === runs.length ? medianBy(known, (v) => v) : undefined;
  return { ...medianBy(runs, (r) => r.p99), serverP99, p99Runs: runs.map((r) => r.p99), serverP99Runs: server };
}
