// npm run bench: Streamgate's decision endpoints against the floors of its platform, measured in
// one run on one machine. Each server is its own process pinned to the same core; autocannon
// drives them from this process, pinned to the other core. Results: a table and bench/results/*.json.
//   BENCH_DURATION (s, default 5)  BENCH_CONNECTIONS (default 32)  BENCH_SIZES (default 1000,100000,1000000)
//   BENCH_SKIP_SCALE=1 (only the endpoint comparison)  BENCH_ONLY_SCALE=1  BENCH_BACKENDS=sqlite,redis (scale run)  BENCH_REDIS_CPU (default 0, the load generator's)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { Redis } from 'ioredis';
import { startRedis, freePort, type TestRedis } from '../test/helpers/redis.js';
import { seedRedis, seedSqlite } from './seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SIZES = (process.env.BENCH_SIZES ?? '1000,100000,1000000').split(',').map(Number).filter((n) => n > 0);
const SERVER_CPU = '1';
const LOAD_CPU = '0';
const taskset = (args: string[]) => (spawnSync('taskset', ['--version']).error ? args : ['taskset', '-c', SERVER_CPU, ...args]);

interface Target {
  name: string;
  base: string;
  proc: ChildProcess;
}

async function startProcess(name: string, args: string[], env: Record<string, string>): Promise<Target> {
  const port = await freePort();
  const [cmd, ...rest] = taskset(args.map((a) => a.replace('$PORT', String(port))));
  const proc = spawn(cmd, rest, { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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

interface Case {
  name: string;
  /** The route pattern Streamgate labels it with (its server-side latency histogram). */
  route?: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  expect: number;
}

interface Result {
  target: string;
  case: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  unexpected: number;
  /** Server CPU time (user + system) per request, µs: steadier than req/s on a shared machine. */
  cpuUs?: number;
  /** p99 as Streamgate's own request histogram saw it (upper bound of the bucket, ms). */
  serverP99?: number;
}

/** Cumulative bucket counts of streamgate_http_request_duration_seconds for one route. */
async function serverBuckets(base: string, route: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<number, number>();
  const re = /^streamgate_http_request_duration_seconds_bucket\{le="([^"]+)",route="([^"]+)"\} (\d+)/gm;
  for (const m of text.matchAll(re)) if (m[2] === route) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[3]));
  if (out.size === 0) {
    const re2 = /^streamgate_http_request_duration_seconds_bucket\{route="([^"]+)",le="([^"]+)"\} (\d+)/gm;
    for (const m of text.matchAll(re2)) if (m[1] === route) out.set(m[2] === '+Inf' ? Infinity : Number(m[2]), Number(m[3]));
  }
  return out;
}

/** The upper bound (ms) of the bucket holding the 99th percentile of the requests between two scrapes. */
function p99Between(before: Map<number, number>, after: Map<number, number>): number | undefined {
  const les = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return undefined;
  for (const le of les) if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= 0.99 * total) return le * 1000;
  return undefined;
}

/** user + system CPU time of a process so far, in µs (Linux /proc; NaN elsewhere). */
function cpuUsOf(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100; // clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

/** wrk, when installed (Debian's package): a C load generator, far lighter than one in Node on the shared core. */
const WRK = !process.env.BENCH_AUTOCANNON && !spawnSync('wrk', ['--version']).error;
const luaString = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;

/** ms from wrk's "665.00us" / "1.31ms" / "1.02s". */
function wrkMs(v: string): number {
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
  writeFileSync(script, lua.join('\n') + '\n');
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

async function load(t: Target, c: Case, opts: { duration?: number; warmup?: number } = {}): Promise<Result> {
  if (WRK) {
    await runWrk(t.base + c.path, c, opts.warmup ?? 1); // JIT warm-up, not measured
    const cpu0 = cpuUsOf(t.proc.pid);
    const w = await runWrk(t.base + c.path, c, opts.duration ?? DURATION);
    return { ...fromWrk(t, c, w), cpuUs: w.total > 0 ? Math.round((cpuUsOf(t.proc.pid) - cpu0) / w.total) : undefined };
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
    cpuUs: r.requests.total > 0 ? Math.round((cpuUsOf(t.proc.pid) - cpu0) / r.requests.total) : undefined,
  };
}

async function api(base: string, secret: string, method: string, p: string, body?: unknown) {
  const r = await fetch(base + p, { method, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return (await r.json()) as { data: Record<string, unknown> & { id: number; token: string } };
}

/**
 * Latency at a fixed request rate, spread evenly in time (autocannon's rate limits fire in bursts,
 * which measures its own queueing): one request every 1/rate s, each timed on its own.
 */
async function paced(t: Target, c: Case, rate: number, seconds: number): Promise<Result> {
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

/** The item with the median value of `by` (the middle one of an odd count). */
function medianBy<T>(items: T[], by: (x: T) => number): T {
  return [...items].sort((a, b) => by(a) - by(b))[Math.floor(items.length / 2)];
}

/** Three paced runs; the one with the median p99 (its server-side p99 with it), all three p99s kept. */
async function pacedMedian(t: Target, c: Case, rate: number, seconds: number): Promise<Result & { p99Runs: number[] }> {
  const runs: Result[] = [];
  for (let i = 0; i < 3; i++) runs.push(await paced(t, c, rate, seconds));
  return { ...medianBy(runs, (r) => r.p99), p99Runs: runs.map((r) => r.p99) };
}

/** The request shapes, with the tokens of the Streamgate under test. */
async function cases(sg: Target, secret: string): Promise<Case[] & { subscribeTokenId?: number }> {
  const sub = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'bench', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'bench' } })).data;
  const bind = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'bind', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 1 })).data;
  const json = { 'content-type': 'application/json' };
  const authorize = (token: string, streamName = 'cam1') => JSON.stringify({ action: 'subscribe', token, streamName, clientIp: '203.0.113.7', protocol: 'hls' });
  await fetch(`${sg.base}/hooks/authorize`, { method: 'POST', headers: json, body: authorize(bind.token) }); // binds 203.0.113.7
  const list: Case[] & { subscribeTokenId?: number } = [
    { name: 'authorize (JSON)', route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers: json, body: authorize(sub.token), expect: 200 },
    { name: 'nginx-rtmp (form)', route: '/hooks/nginx-rtmp', method: 'POST', path: '/hooks/nginx-rtmp', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `app=live&flashver=FMLE%2F3.0&swfurl=&tcurl=rtmp%3A%2F%2Fh%2Flive&pageurl=&addr=203.0.113.7&call=play&name=cam1&start=0&duration=0&reset=0&token=${sub.token}`, expect: 200 },
    { name: 'mediamtx auth', route: '/hooks/mediamtx/auth', method: 'POST', path: '/hooks/mediamtx/auth', headers: json, body: JSON.stringify({ ip: '203.0.113.7', user: '', password: '', token: sub.token, action: 'read', path: 'cam1', protocol: 'hls', id: null, query: '' }), expect: 200 },
    { name: 'auth-request', route: '/hooks/auth-request', method: 'GET', path: '/hooks/auth-request', headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${sub.token}`, 'x-real-ip': '203.0.113.7' }, expect: 200 },
    { name: 'director subscribe', route: '/api/director/subscribe', method: 'POST', path: '/api/director/subscribe', headers: { ...json, authorization: `Bearer ${sub.token}` }, body: JSON.stringify({ streamName: 'cam1' }), expect: 200 },
    { name: 'deny (stream)', route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers: json, body: authorize(sub.token, 'nope'), expect: 403 },
    { name: 'bind, already bound', route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers: json, body: authorize(bind.token), expect: 200 },
  ];
  list.subscribeTokenId = sub.id;
  return list;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function streamgate(name: string, env: Record<string, string>): Promise<{ t: Target; secret: string; dir: string }> {
  const dir = env.STREAMGATE_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'sg-bench-'));
  const t = await startProcess(name, [process.execPath, 'dist/main.js'], { STREAMGATE_LOG_LEVEL: 'warn', ...env, STREAMGATE_DATA_DIR: dir });
  const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
  return { t, secret, dir };
}

async function main(): Promise<void> {
  // The load generator (this process) and Redis stay off the servers' core.
  const pin = (pid: number) => spawnSync('taskset', ['-cp', LOAD_CPU, String(pid)], { stdio: 'ignore' });
  pin(process.pid);
  if (!process.env.BENCH_NO_BUILD) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, memGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
  console.log(`machine: ${JSON.stringify(machine)}; duration ${DURATION}s, ${CONNECTIONS} connections, servers pinned to CPU ${SERVER_CPU}, load and Redis to CPU ${LOAD_CPU}`);
  const redis: TestRedis = await startRedis();
  const redisPid = Number(spawnSync('redis-cli', ['-p', String(redis.port), 'info', 'server'], { encoding: 'utf8' }).stdout.match(/process_id:(\d+)/)?.[1]);
  // BENCH_REDIS_CPU: where Redis runs (default: with the load generator, off the servers' core).
  if (redisPid) spawnSync('taskset', ['-cp', process.env.BENCH_REDIS_CPU ?? LOAD_CPU, String(redisPid)], { stdio: 'ignore' });
  const procs: ChildProcess[] = [];
  const results: Result[] = [];
  const out: Record<string, unknown> = { machine, duration: DURATION, connections: CONNECTIONS, at: new Date().toISOString() };
  try {
    if (!process.env.BENCH_ONLY_SCALE) {
      const nodeFloor = await startProcess('node:http floor', [process.execPath, 'bench/servers/floor-node.mjs', '$PORT'], {});
      const expressFloor = await startProcess('express floor', [process.execPath, 'bench/servers/floor-express.mjs', '$PORT'], {});
      // The same express app served the way Streamgate serves its own (src/http/server.ts).
      const bornFloor = await startProcess('express floor, born', [process.execPath, 'bench/servers/floor-express.mjs', '$PORT', '--born'], {});
      const sqlite = await streamgate('streamgate sqlite', {});
      const onRedis = await streamgate('streamgate redis', { REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: 'bench:' });
      procs.push(nodeFloor.proc, expressFloor.proc, bornFloor.proc, sqlite.t.proc, onRedis.t.proc);

      const sqliteCases = await cases(sqlite.t, sqlite.secret);
      const redisCases = await cases(onRedis.t, onRedis.secret);
      const half: Result[] = [];
      for (let i = 0; i < sqliteCases.length; i++) {
        const floorCase = { ...sqliteCases[i], expect: 200 };
        const nf = await load(nodeFloor, floorCase);
        const ef = await load(expressFloor, floorCase);
        const bf = await load(bornFloor, floorCase);
        const s = await load(sqlite.t, sqliteCases[i]);
        const r = await load(onRedis.t, redisCases[i]);
        results.push(nf, ef, bf, s, r);
        // p99 at half of the measured maximum throughput: the median of three runs, as one run's
        // p99 on this shared box moves with whatever else the host does for a second.
        half.push(await pacedMedian(sqlite.t, sqliteCases[i], Math.max(1, Math.floor(s.rps / 2)), DURATION));
        half.push(await pacedMedian(onRedis.t, redisCases[i], Math.max(1, Math.floor(r.rps / 2)), DURATION));
      }
      console.log(`\nload: ${WRK ? 'wrk' : 'autocannon'}; p99 at half max: ${WRK ? 'wrk, requests spread at half the measured rate' : 'undici, paced'}`);
      console.log('\n| case | target | req/s | p50 ms | p99 ms | vs express | vs node | CPU µs/req | CPU vs express | CPU vs express born | p99 at half max | server p99 at half max | errors |');
      console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      const rows: unknown[] = [];
      for (const c of sqliteCases) {
        const of = (t: string) => results.find((x) => x.case === c.name && x.target === t)!;
        const nf = of('node:http floor');
        const ef = of('express floor');
        const bf = of('express floor, born');
        for (const r of [nf, ef, bf, of('streamgate sqlite'), of('streamgate redis')]) {
          const h = half.find((x) => x.case === c.name && x.target === r.target);
          const row = {
            case: c.name,
            target: r.target,
            rps: r.rps,
            p50: r.p50,
            p99: r.p99,
            vsExpress: r.rps / ef.rps,
            vsNode: r.rps / nf.rps,
            cpuUs: r.cpuUs,
            cpuVsExpress: r.cpuUs && ef.cpuUs ? ef.cpuUs / r.cpuUs : undefined,
            cpuVsExpressBorn: r.cpuUs && bf.cpuUs ? bf.cpuUs / r.cpuUs : undefined,
            p99AtHalf: h?.p99,
            p99AtHalfRuns: (h as { p99Runs?: number[] } | undefined)?.p99Runs,
            serverP99AtHalf: h?.serverP99,
            errors: r.errors + r.unexpected,
          };
          rows.push(row);
          console.log(
            `| ${c.name} | ${r.target} | ${r.rps} | ${r.p50} | ${r.p99} | ${(row.vsExpress * 100).toFixed(0)}% | ${(row.vsNode * 100).toFixed(0)}% | ${r.cpuUs ?? '–'} | ${row.cpuVsExpress ? `${(row.cpuVsExpress * 100).toFixed(0)}%` : '–'} | ${row.cpuVsExpressBorn ? `${(row.cpuVsExpressBorn * 100).toFixed(0)}%` : '–'} | ${h ? h.p99 : '–'} | ${h?.serverP99 !== undefined ? `≤ ${h.serverP99}` : '–'} | ${row.errors} |`,
          );
        }
      }
      out.endpoints = rows;
      out.rss = { sqliteMb: rssMb(sqlite.t.proc.pid!), redisMb: rssMb(onRedis.t.proc.pid!) };
      for (const p of [nodeFloor.proc, expressFloor.proc, bornFloor.proc, sqlite.t.proc, onRedis.t.proc]) p.kill('SIGTERM');
    }

    if (!process.env.BENCH_SKIP_SCALE) out.scale = await scaleRun(redis);
  } finally {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    await redis.stop();
  }
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  const file = path.join(ROOT, `bench/results/${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`\nwritten: ${path.relative(ROOT, file)}`);
}

interface Figure {
  rps: number;
  p99: number;
}
interface ScaleRow {
  backend: 'sqlite' | 'redis';
  tokens: number;
  seedSeconds: number;
  decision: Figure;
  /** Client p99 (ms) with requests spread at half the measured decision rate. */
  decisionP99AtHalf: number;
  /** The same run's p99 from Streamgate's own request histogram (bucket upper bound, ms). */
  decisionServerP99AtHalf?: number;
  /** Each round's figures (the decision columns are their medians). */
  decisionRounds: { rps: number[]; p99: number[]; p99AtHalf: number[] };
  openStream: Figure;
  create: Figure;
  read: Figure;
  listPage1: Figure;
  listPage1000: Figure;
  rssMb: number;
  redisBytesPerToken?: number;
}

/** The decision and management figures at each size, on both stores, and memory per token. */
async function scaleRun(redis: TestRedis): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  const backends = (process.env.BENCH_BACKENDS ?? 'sqlite,redis').split(',') as Array<'sqlite' | 'redis'>;
  for (const backend of backends) {
    // Every size is seeded and started first, then the decision figures are taken in rounds that
    // visit each size in turn (1k, 100k, 1M, 1k, ...): noise on a shared machine comes in spells
    // of a minute or so, and sizes measured minutes apart compared the spells, not the sizes.
    const procs: Array<{ n: number; sg: Target; c: Awaited<ReturnType<typeof cases>>; secret: string; accountId: string; seedS: number; bytesPerToken?: number }> = [];
    for (const n of SIZES) {
      const dir = mkdtempSync(path.join(tmpdir(), 'sg-scale-'));
      const prefix = `scale${n}:`;
      const env: Record<string, string> = { STREAMGATE_DATA_DIR: dir, STREAMGATE_LOG_LEVEL: 'warn' };
      let usedBefore = 0;
      if (backend === 'redis') {
        env.REDIS_URL = redis.url;
        env.STREAMGATE_REDIS_KEYPREFIX = prefix;
        usedBefore = await usedMemory(redis.url);
      }
      // Start once to create the account, seed behind its back, then start for real.
      const first = await streamgate(`seed ${backend}`, env);
      const accountId = await accountOf(first.t.base, first.secret);
      first.t.proc.kill('SIGTERM');
      await new Promise((r) => first.t.proc.once('exit', r));
      const t0 = Date.now();
      if (backend === 'sqlite') await seedSqlite(path.join(first.dir, 'streamgate.db'), accountId, n);
      else await seedRedis(redis.url, prefix, accountId, n);
      const seedS = (Date.now() - t0) / 1000;
      const bytesPerToken = backend === 'redis' ? ((await usedMemory(redis.url)) - usedBefore) / n : undefined;
      const sg = await startProcess(`streamgate ${backend} ${n}`, [process.execPath, 'dist/main.js'], { ...env, STREAMGATE_DATA_DIR: first.dir });
      const c = await cases(sg, first.secret);
      procs.push({ n, sg, c, secret: first.secret, accountId, seedS, bytesPerToken });
    }
    // Three rounds: throughput and p99 under that load, then p99 with requests spread at half
    // that rate; each figure is the median of its three rounds. The first visit of a process
    // started right after a large seed gets a 3 s warm-up to settle.
    const loads = new Map<number, Result[]>();
    const halves = new Map<number, Result[]>();
    for (let round = 0; round < 3; round++) {
      for (const p of procs) {
        const l = await load(p.sg, p.c[0], { warmup: round === 0 ? 3 : 1 });
        const h = await paced(p.sg, p.c[0], Math.max(1, Math.floor(l.rps / 2)), DURATION);
        loads.set(p.n, [...(loads.get(p.n) ?? []), l]);
        halves.set(p.n, [...(halves.get(p.n) ?? []), h]);
      }
    }
    const median = (xs: number[]) => medianBy(xs, (x) => x);
    for (const p of procs) {
      const { sg, c, accountId } = p;
      const ls = loads.get(p.n)!;
      const hs = halves.get(p.n)!;
      const halfMid = medianBy(hs, (r) => r.p99);
      const open = await load(sg, { name: 'open stream (secured index)', method: 'POST', path: '/hooks/authorize', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'subscribe', streamName: 'not-secured', accountId }), expect: 200 });
      const auth = { authorization: `Bearer ${p.secret}`, 'content-type': 'application/json' };
      const mgmt = async (name: string, method: 'GET' | 'POST', u: string, body?: string) => load(sg, { name, method, path: u, headers: auth, body, expect: 200 }, { duration: Math.max(2, Math.floor(DURATION / 2)) });
      const read = await mgmt('read', 'GET', `/api/subscribe_token/${c.subscribeTokenId}`);
      const page1 = await mgmt('list page 1', 'GET', '/api/subscribe_token/list?page=1&itemsOnPage=25');
      const page1000 = await mgmt('list page 1000', 'GET', '/api/subscribe_token/list?page=1000&itemsOnPage=25');
      const create = await load(sg, { name: 'create', method: 'POST', path: '/api/subscribe_token', headers: auth, body: JSON.stringify({ label: 'bench-create', streams: [{ streamName: 'cam1' }] }), expect: 201 }, { duration: 2 });
      const row: ScaleRow = {
        backend,
        tokens: p.n,
        seedSeconds: p.seedS,
        decision: { rps: median(ls.map((r) => r.rps)), p99: median(ls.map((r) => r.p99)) },
        decisionP99AtHalf: halfMid.p99,
        decisionServerP99AtHalf: halfMid.serverP99,
        decisionRounds: { rps: ls.map((r) => r.rps), p99: ls.map((r) => r.p99), p99AtHalf: hs.map((r) => r.p99) },
        openStream: { rps: open.rps, p99: open.p99 },
        create: { rps: create.rps, p99: create.p99 },
        read: { rps: read.rps, p99: read.p99 },
        listPage1: { rps: page1.rps, p99: page1.p99 },
        listPage1000: { rps: page1000.rps, p99: page1000.p99 },
        rssMb: rssMb(sg.proc.pid!),
        redisBytesPerToken: p.bytesPerToken,
      };
      rows.push(row);
      console.log(`scale ${backend} ${p.n}: ${JSON.stringify(row)}`);
    }
    for (const p of procs) {
      p.sg.proc.kill('SIGTERM');
      await new Promise((r) => p.sg.proc.once('exit', r));
    }
    if (backend === 'redis') await flushPrefix(redis.url);
  }
  console.log('\n| store | tokens | decision req/s | p99 ms | p99 at half ms | open stream req/s | create | read | list p1 | list p1000 | RSS MB | Redis B/token |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.backend} | ${r.tokens} | ${r.decision.rps} | ${r.decision.p99} | ${r.decisionP99AtHalf} | ${r.openStream.rps} | ${r.create.rps} | ${r.read.rps} | ${r.listPage1.rps} | ${r.listPage1000.rps} | ${r.rssMb.toFixed(0)} | ${r.redisBytesPerToken !== undefined ? r.redisBytesPerToken.toFixed(0) : '–'} |`);
  }
  for (const backend of ['sqlite', 'redis']) {
    const small = rows.find((r) => r.backend === backend && r.tokens === SIZES[0]);
    const big = rows.find((r) => r.backend === backend && r.tokens === SIZES[SIZES.length - 1]);
    if (small && big) {
      console.log(
        `${backend}: decision throughput at ${SIZES[SIZES.length - 1]} tokens = ${((big.decision.rps / small.decision.rps) * 100).toFixed(0)}% of ${SIZES[0]}; ` +
          `p99 ratio ${(big.decision.p99 / small.decision.p99).toFixed(2)}, p99 at half ratio ${(big.decisionP99AtHalf / small.decisionP99AtHalf).toFixed(2)}`,
      );
    }
  }
  return rows;
}

/** The account of the first-start secret: what a decision on one of its tokens names. */
async function accountOf(base: string, secret: string): Promise<string> {
  const t = (await api(base, secret, 'POST', '/api/publish_token', { label: 'probe', streams: [{ streamName: 'x' }] })).data;
  const d = await fetch(`${base}/hooks/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'publish', token: t.token, streamName: 'x' }) });
  return ((await d.json()) as { accountId: string }).accountId;
}

async function usedMemory(url: string): Promise<number> {
  const c = new Redis(url);
  const info = await c.info('memory');
  c.disconnect();
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

/** The bench's private Redis holds nothing else: start the next size from empty. */
async function flushPrefix(url: string): Promise<void> {
  const c = new Redis(url);
  await c.flushall();
  c.disconnect();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
