// npm run bench:capacity: what Streamgate costs per unit of load, the input of a capacity model
// (concurrent HLS viewers, publishers, tokens). It measures costs, not throughput: the instances,
// Redis and this load generator share the machine, so every figure is a counter's change divided by
// the units that moved it:
// - Redis bytes per token, per bound address, per registry session (an nginx-rtmp viewer) and per
//   HTTP viewer session: INFO used_memory summed over the primaries, and MEMORY USAGE of each key
//   family (src/store/redis/keys.ts) to say which keys the bytes are;
// - Redis commands (INFO commandstats, summed over the primaries) and Redis CPU per decision,
//   admission, re-ask, HTTP viewer-minute and management write, with 1, 2 and 4 instances;
// - each Streamgate process's CPU (/proc, every thread's schedstat) per decision, per credential
//   check and per write.
// Every step runs on one Redis and on a local 3-primary Redis Cluster. What the running processes
// do while nothing is asked (the version watch's pings, the viewer sessions' rounds, Redis's own
// timers) is measured before each step, for the processes then running, and subtracted.
//   BENCH_CAPACITY_TOKENS (default 1000000)   tokens seeded straight through the store
//   BENCH_CAPACITY_SESSIONS (default 20000)   nginx-rtmp viewers, and HTTP viewers, admitted
//   BENCH_CAPACITY_BINDS (default 20000)      addresses bound (each of two layouts)
//   BENCH_CAPACITY_DECISIONS (default 30000)  decisions per instance count
//   BENCH_CAPACITY_WRITES (default 200)       management writes per instance count (25 at most of those followed by decisions)
//   BENCH_CAPACITY_VIEWERS (default 1000)     HTTP viewers held at steady state
//   BENCH_CAPACITY_STEADY_SECONDS (default 20)  how long each steady state is measured (whole revalidation periods)
//   BENCH_CAPACITY_REVALIDATE_SECONDS (default 2)  sessions.http.revalidateSeconds
//   BENCH_CAPACITY_REDIS (default single,cluster)  BENCH_NO_BUILD=1 (run dist/ as it is)
// Then the confirmation, on the topologies BENCH_CAPACITY_CONFIRM names (default cluster; none: off):
// BENCH_CAPACITY_CONFIRM_VIEWERS (default 100000) HTTP viewers admitted over two instances, each
// sticky to one, held at steady state at BENCH_CAPACITY_CONFIRM_REVALIDATE_SECONDS (default 80; a
// request every half period, as the unit step's), and the per-viewer figures held to what the unit
// steps above predict (within 20%; the CPU figures from the unit steps with the confirmation's own
// arrangement, two instances on the servers' core, each viewer sticky to one); and cached decisions
// with those sessions registered against
// none (within 10%), each time as a ratio to a third instance that decides beside the two and holds
// no viewer (the machine's own drift cancels out).
// The seeding runs before any Streamgate does: two seeding workers, on both cores.
// Results: tables on stdout and bench/results/capacity-<time>.json.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { newSecret } from '../src/domain/secrets.js';
import { type CreateTokenInput, newTokenRecord, type TokenRecord } from '../src/domain/tokens.js';
import { keys } from '../src/store/redis/keys.js';
import { RedisStore } from '../src/store/redis/redis-store.js';
import { accountOf } from './cases.js';
import { clusterRedis, commandDelta, type Deployment, familyDelta, Meter, type Reading, SCRIPT_COMMANDS, singleRedis, type Topology } from './lib/capacity-redis.js';
import { LOAD_CPU, SERVER_CPU, STREAMGATE_ENV, STREAMGATE_NODE_FLAGS } from './lib/config.js';
import { writeResults } from './lib/report.js';
import { median } from './lib/stats.js';
import { buildCurrent, describeMachine, onCores, pinToLoadCore } from './lib/setup.js';
import { cpuUsOf, startProcess, stopTarget, streamgate } from './lib/targets.js';
import { type SeedTarget, seedRedisInWorkers } from './seed.js';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const v = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name}: expected a positive number, got ${raw}`);
  return Math.round(v);
}

const TOKENS = setting('BENCH_CAPACITY_TOKENS', 1_000_000);
const SESSIONS = setting('BENCH_CAPACITY_SESSIONS', 20_000);
const BINDS = setting('BENCH_CAPACITY_BINDS', 20_000);
const DECISIONS = setting('BENCH_CAPACITY_DECISIONS', 30_000);
const WRITES = setting('BENCH_CAPACITY_WRITES', 200);
const VIEWERS = setting('BENCH_CAPACITY_VIEWERS', 1_000);
const STEADY_SECONDS = setting('BENCH_CAPACITY_STEADY_SECONDS', 20);
const REVALIDATE_SECONDS = setting('BENCH_CAPACITY_REVALIDATE_SECONDS', 2);
/** A comma list of topologies from `name` (`none` or empty: none); a name that is neither stops the run. */
function topologies(name: string, fallback: string): Topology[] {
  const out = (process.env[name] || fallback).split(',').map((t) => t.trim()).filter((t) => t !== '' && t !== 'none');
  for (const t of out) if (t !== 'single' && t !== 'cluster') throw new Error(`${name}: "${t}" is neither single nor cluster (nor none)`);
  return out as Topology[];
}

const TOPOLOGIES = topologies('BENCH_CAPACITY_REDIS', 'single,cluster');
/** Instance counts the decisions and writes are measured with. */
const INSTANCE_COUNTS = [1, 2, 4];
/** How long the idle rates are measured before a step. */
const IDLE_SECONDS = 5;
/** nginx-rtmp re-asks and play_done calls measured (of the admitted viewers). */
const REASKS = Math.min(SESSIONS, 10_000);
const ENDS = Math.min(SESSIONS, 2_000);
/** Viewers per stream: 1M viewers of 100k publishers. */
const VIEWERS_PER_STREAM = 10;
/** Tokens the decisions go round (each decided once on every instance first: cached). */
const HOT_TOKENS = 64;
/**
 * Cached tokens every instance decides again after each write (what a write's version move costs
 * decisions), after that many writes: each such write makes every instance read the account's
 * viewer-rule tokens again, thousands at 1M seeded tokens.
 */
const REDECIDED = 4;
const REDECIDE_WRITES = Math.min(WRITES, 25);
/**
 * Requests a newly started instance is sent before it is first measured: its cost per request falls
 * by half over its first ten thousand or so (its code optimised, its young generation grown), and
 * an instance in service is long past that.
 */
const WARM_REQUESTS = 20_000;
/** Requests in flight at once from this process. */
const CONCURRENCY = 16;
/** Decisions in flight per instance: the same load on each, whatever the instance count. */
const DECISIONS_IN_FLIGHT = 8;
/** An HTTP viewer's requests: two per revalidation period, so every period sees each viewer. */
const PRESENT_MS = (REVALIDATE_SECONDS * 1000) / 2;
/**
 * A steady window is whole revalidation periods: each instance's round (its registry touches) then
 * falls into it as many times as the window holds periods, wherever the window starts.
 */
const STEADY_PERIODS = Math.max(1, Math.round(STEADY_SECONDS / REVALIDATE_SECONDS));
const PREFIX = 'cap:';
/**
 * Streamgate's settings besides the bench's (STREAMGATE_ENV) and the Redis address: the viewer
 * sessions' period, and nginx's X-Real-IP believed from this host (each viewer its own address).
 */
const CAPACITY_ENV: Record<string, string> = {
  STREAMGATE_REDIS_KEYPREFIX: PREFIX,
  STREAMGATE_HOOKS_TRUSTEDPROXIES: '["127.0.0.1"]',
  STREAMGATE_HOOKS_REALIPHEADER: 'X-Real-IP',
  STREAMGATE_SESSIONS_HTTP_REVALIDATESECONDS: String(REVALIDATE_SECONDS),
};

const CONFIRM_VIEWERS = setting('BENCH_CAPACITY_CONFIRM_VIEWERS', 100_000);
const CONFIRM_REVALIDATE_SECONDS = setting('BENCH_CAPACITY_CONFIRM_REVALIDATE_SECONDS', 80);
// the decisions with sessions registered come up to a period and 20 s after the last presentation
if (CONFIRM_REVALIDATE_SECONDS < 12) throw new Error(`BENCH_CAPACITY_CONFIRM_REVALIDATE_SECONDS: at least 12 (the sessions must outlive the measurement after the last presentation), got ${CONFIRM_REVALIDATE_SECONDS}`);
const CONFIRM_ON = topologies('BENCH_CAPACITY_CONFIRM', 'cluster');
/** The confirmation's viewers present twice per period, as the unit step's do: the same checks per touch. */
const CONFIRM_PRESENT_MS = (CONFIRM_REVALIDATE_SECONDS * 1000) / 2;
/** Whole periods the confirmation's steady state is measured over. */
const CONFIRM_PERIODS = 1;
/**
 * Requests in flight while the confirmation's viewers present (checks in memory); they are
 * admitted CONCURRENCY at a time, as in the unit step (each admission a store read under the store
 * deadline).
 */
const CONFIRM_CONCURRENCY = 64;
/**
 * The confirmation instances' viewer settings: its period; idle at three periods (a round every
 * period: min(revalidateSeconds, idleSeconds / 3)); credentials that outlive the run, so no
 * presentation is a refresh the unit step did not have.
 */
const CONFIRM_ENV: Record<string, string> = {
  STREAMGATE_SESSIONS_HTTP_REVALIDATESECONDS: String(CONFIRM_REVALIDATE_SECONDS),
  STREAMGATE_SESSIONS_HTTP_IDLESECONDS: String(CONFIRM_REVALIDATE_SECONDS * 3),
  STREAMGATE_SESSIONS_HTTP_CREDENTIALSECONDS: '3600',
};
/** A per-viewer figure at scale within this share of the unit steps' prediction; decisions with sessions within FLAT_MAX of none. */
const CONFIRM_WITHIN = 0.2;
const FLAT_MAX = 1.1;
const FLAT_ROUNDS = 5;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A process's CPU time so far, µs: every thread's time on a CPU (/proc/<pid>/task/<tid>/schedstat,
 * in ns). /proc/<pid>/stat (cpuUsOf) counts 10 ms ticks, coarser than what an instance that only
 * hears a write's version message spends over a step. Streamgate's threads live as long as it does
 * (its worker pools keep their minimum), so no thread takes its time away during a step.
 */
function cpuOf(pid: number | undefined): number {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpuUsOf(pid); // no /proc/<pid>/task: the ticks, or NaN off Linux
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns / 1000;
}

/**
 * An instance's garbage-collection time so far (µs, every kind) and V8 heap in use (MB), from its
 * GET /metrics (prom-client's default metrics: nodejs_gc_duration_seconds, nodejs_heap_size_used_bytes).
 */
async function runtimeOf(inst: Instance): Promise<{ gcUs: number; heapMb: number }> {
  const r = await inst.pool.request({ method: 'GET', path: '/metrics' });
  const text = await r.body.text();
  let gc = 0;
  let heap = Number.NaN;
  for (const line of text.split('\n')) {
    if (line.startsWith('nodejs_gc_duration_seconds_sum{')) gc += Number(line.slice(line.lastIndexOf(' ') + 1));
    else if (line.startsWith('nodejs_heap_size_used_bytes ')) heap = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return { gcUs: gc * 1e6, heapMb: heap / 2 ** 20 };
}

interface Instance {
  name: string;
  proc: ChildProcess;
  pool: Pool;
  /** Sent WARM_REQUESTS already. */
  warm?: boolean;
}

/** What the running processes do while nothing is asked, per second. */
interface Idle {
  instances: string[];
  seconds: number;
  commandsPerSecond: Record<string, number>;
  redisCpuUsPerSecond: number;
  instanceCpuUsPerSecond: number[];
}

/** What one step cost per unit. */
interface Cost {
  topology: Topology;
  step: string;
  /** Instances serving the step (of those running). */
  instances: number;
  units: number;
  unit: string;
  seconds: number;
  commandsPerUnit: number;
  /** Script runs (EVALSHA and the like) per unit: each also counts, under its own name, every command it runs. */
  scriptRunsPerUnit: number;
  byCommand: Record<string, number>;
  redisCpuUsPerUnit: number;
  /**
   * Each running instance's CPU µs per `cpuUnit` it served (null: it served none), the part of it
   * spent in garbage collection (nodejs_gc_duration_seconds, not less idle) and its V8 heap in use
   * after the step (MB).
   */
  instanceCpuUs: Array<{ instance: string; us: number | null; served: number; gcUs: number | null; heapMb: number }>;
  cpuUnit: string;
  /** Redis memory per unit: used_memory; the keys alone (Reading.dataMemory); the keyspace's hashtables (Reading.tableMemory). */
  usedMemoryPerUnit?: number;
  dataBytesPerUnit?: number;
  tableBytesPerUnit?: number;
  /** MEMORY USAGE of each key family that changed: keys and bytes per unit. */
  families?: Array<{ family: string; keysPerUnit: number; bytesPerUnit: number }>;
  /**
   * On a Cluster, each primary's share of the step's commands and, in a memory step, of its
   * used_memory change (raw deltas, idle not subtracted): one account's keys share its hash tag, so
   * they sit on one primary.
   */
  primaryShares?: Array<{ primary: string; memory?: number; commands: number }>;
  /** Answers that were not the one expected, in a step that lets them through (Work.refused). */
  refused?: number;
  /** In an admission step: the sessions the registry gained (each admission should register one). */
  registered?: number;
}

/**
 * What a step did: `units` divide the Redis figures, `served` (one per running instance) the CPU,
 * else `units`; `refused`: answers a step lets through that were not the one expected.
 */
interface Work {
  units: number;
  served?: number[];
  refused?: number;
}

/** One topology's run: its Redis, the processes up and what is measured of them. */
class Run {
  readonly meter: Meter;
  readonly running: Instance[] = [];
  readonly idles: Idle[] = [];
  readonly costs: Cost[] = [];
  /** The idle rates of `running` as it is now; undefined once it changed. */
  private idle?: Idle;
  accountId = '';
  secret = '';
  viewerRuleTokens = 0;
  confirmation?: Confirmation;

  constructor(
    readonly dep: Deployment,
    /** The store, written straight through (seeding) and read for the registry's count. */
    readonly store: RedisStore,
  ) {
    this.meter = new Meter(dep.primaries);
  }

  /** The account's sessions live in the registry: the index's members whose expiry is still ahead. */
  live(): Promise<number> {
    return this.store.client.zcount(keys.sessionsLive(this.accountId), Date.now(), '+inf');
  }

  /** Streamgate's settings on this deployment. */
  get env(): Record<string, string> {
    return { ...STREAMGATE_ENV, ...this.dep.env, ...CAPACITY_ENV };
  }

  /** The first Streamgate on this Redis creates the account; stopped, so seeding has the machine to itself. */
  async bootstrap(): Promise<void> {
    const first = await streamgate(`${this.dep.topology} bootstrap`, this.env);
    try {
      this.secret = first.secret;
      this.accountId = await accountOf(first.t.base, first.secret);
    } finally {
      await stopTarget(first.t);
    }
  }

  async start(name: string, env: Record<string, string> = {}, connections = CONCURRENCY): Promise<Instance> {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-capacity-'));
    const t = await startProcess(`${this.dep.topology} ${name}`, [process.execPath, ...STREAMGATE_NODE_FLAGS, 'dist/main.js'], { ...this.env, ...env, STREAMGATE_DATA_DIR: dir });
    const inst = { name, proc: t.proc, pool: new Pool(t.base, { connections }) };
    this.running.push(inst);
    this.idle = undefined;
    return inst;
  }

  /** SIGTERM, and SIGKILL when it has not exited 10 s later. */
  async stop(inst: Instance): Promise<void> {
    this.running.splice(this.running.indexOf(inst), 1);
    this.idle = undefined;
    await inst.pool.close();
    const kill = setTimeout(() => inst.proc.kill('SIGKILL'), 10_000);
    await stopTarget({ name: inst.name, base: '', proc: inst.proc });
    clearTimeout(kill);
  }

  async stopAll(): Promise<void> {
    for (const inst of [...this.running]) await this.stop(inst).catch(() => inst.proc.kill('SIGKILL'));
  }

  /** The processes' idle rates changed without a process starting or stopping (the viewer states they hold). */
  forgetIdle(): void {
    this.idle = undefined;
  }

  /** The idle rates of the processes running now, measured over IDLE_SECONDS (once per set of processes). */
  async idleRates(): Promise<Idle> {
    if (this.idle) return this.idle;
    // what the last step left queued is written first (the decision history is flushed every second)
    await sleep(2000);
    const r0 = await this.meter.read();
    const cpu0 = this.running.map((i) => cpuOf(i.proc.pid));
    await sleep(IDLE_SECONDS * 1000);
    const r1 = await this.meter.read();
    const seconds = (r1.at - r0.at) / 1000;
    const commandsPerSecond: Record<string, number> = {};
    for (const [name, d] of commandDelta(r0, r1)) commandsPerSecond[name] = d.calls / seconds;
    this.idle = {
      instances: this.running.map((i) => i.name),
      seconds,
      commandsPerSecond,
      redisCpuUsPerSecond: (r1.cpuUs - r0.cpuUs) / seconds,
      instanceCpuUsPerSecond: this.running.map((inst, i) => (cpuOf(inst.proc.pid) - cpu0[i]) / seconds),
    };
    this.idles.push(this.idle);
    return this.idle;
  }

  /**
   * Until Redis hears no more than the idle rate for a second: what an answer leaves to be done
   * after it (a session registered after the admission's answer) is done.
   */
  async settle(): Promise<void> {
    const idle = sum(Object.values((await this.idleRates()).commandsPerSecond));
    let prev = await this.meter.read();
    const deadline = performance.now() + 60_000;
    for (let quiet = 0; quiet < 4 && performance.now() < deadline; ) {
      await sleep(250);
      const now = await this.meter.read();
      const extra = sum([...commandDelta(prev, now).values()].map((d) => d.calls)) - idle * ((now.at - prev.at) / 1000);
      quiet = extra <= 3 + idle * 0.25 ? quiet + 1 : 0;
      prev = now;
    }
  }

  /**
   * One step: the counters before and after `work` (and, with `memory`, every key family), less
   * what the running processes do idle over as long, per unit.
   */
  async measure(step: string, opts: { unit: string; cpuUnit?: string; instances: number; memory?: boolean; settle?: boolean; registry?: boolean }, work: () => Promise<Work>): Promise<Cost> {
    const idle = await this.idleRates();
    // registry: the sessions the step left in the registry are counted (Cost.registered)
    const live0 = opts.registry ? await this.live() : undefined;
    const families0 = opts.memory ? await this.meter.families(PREFIX) : undefined;
    const r0 = await this.meter.read();
    const gc0 = await Promise.all(this.running.map(runtimeOf));
    const cpu0 = this.running.map((i) => cpuOf(i.proc.pid));
    const w = await work();
    if (opts.settle) await this.settle();
    const r1 = await this.meter.read();
    const cpu1 = this.running.map((i) => cpuOf(i.proc.pid));
    const gc1 = await Promise.all(this.running.map(runtimeOf));
    const families1 = opts.memory ? await this.meter.families(PREFIX) : undefined;
    const seconds = (r1.at - r0.at) / 1000;
    const cost: Cost = {
      topology: this.dep.topology,
      step,
      instances: opts.instances,
      units: w.units,
      unit: opts.unit,
      seconds,
      ...perUnitCommands(r0, r1, idle, seconds, w.units),
      redisCpuUsPerUnit: (r1.cpuUs - r0.cpuUs - idle.redisCpuUsPerSecond * seconds) / w.units,
      instanceCpuUs: this.running.map((inst, i) => {
        const served = w.served?.[i] ?? w.units;
        const perServed = (x: number) => (served > 0 ? x / served : null);
        return { instance: inst.name, served, us: perServed(cpu1[i] - cpu0[i] - idle.instanceCpuUsPerSecond[i] * seconds), gcUs: perServed(gc1[i].gcUs - gc0[i].gcUs), heapMb: gc1[i].heapMb };
      }),
      cpuUnit: opts.cpuUnit ?? opts.unit,
    };
    if (w.refused) cost.refused = w.refused;
    if (live0 !== undefined) cost.registered = (await this.live()) - live0;
    if (this.dep.primaries.length > 1) cost.primaryShares = primaryShares(this.dep.primaries, r0, r1, opts.memory === true);
    if (families0 && families1) {
      cost.usedMemoryPerUnit = (r1.usedMemory - r0.usedMemory) / w.units;
      cost.dataBytesPerUnit = (r1.dataMemory - r0.dataMemory) / w.units;
      cost.tableBytesPerUnit = (r1.tableMemory - r0.tableMemory) / w.units;
      cost.families = [...familyDelta(families0, families1)]
        .map(([family, d]) => ({ family, keysPerUnit: d.keys / w.units, bytesPerUnit: d.bytes / w.units }))
        .sort((a, b) => b.bytesPerUnit - a.bytesPerUnit);
    }
    this.costs.push(cost);
    console.log(`${this.dep.topology}: ${step}: ${describeCost(cost)}`);
    return cost;
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function primaryShares(primaries: string[], r0: Reading, r1: Reading, memory: boolean): NonNullable<Cost['primaryShares']> {
  const mem = primaries.map((_, k) => r1.byPrimary[k].usedMemory - r0.byPrimary[k].usedMemory);
  const calls = primaries.map((_, k) => r1.byPrimary[k].calls - r0.byPrimary[k].calls);
  return primaries.map((primary, k) => ({ primary, memory: memory ? mem[k] / sum(mem) : undefined, commands: calls[k] / sum(calls) }));
}

/** Commands per unit between two readings, less the idle rate over the same time, by command and in all. */
function perUnitCommands(r0: Reading, r1: Reading, idle: Idle, seconds: number, units: number): Pick<Cost, 'commandsPerUnit' | 'scriptRunsPerUnit' | 'byCommand'> {
  const delta = commandDelta(r0, r1);
  const byCommand: Record<string, number> = {};
  for (const name of new Set([...delta.keys(), ...Object.keys(idle.commandsPerSecond)])) {
    const v = ((delta.get(name)?.calls ?? 0) - (idle.commandsPerSecond[name] ?? 0) * seconds) / units;
    if (Math.abs(v) >= 1e-4) byCommand[name] = v;
  }
  const scriptRuns = sum(Object.entries(byCommand).flatMap(([n, v]) => (SCRIPT_COMMANDS.has(n) ? [v] : [])));
  return { commandsPerUnit: sum(Object.values(byCommand)), scriptRunsPerUnit: scriptRuns, byCommand };
}

/** A unit's name for many of it. */
const plural = (unit: string) => (unit.endsWith('s') ? `${unit}es` : `${unit}s`);

const fmt = (v: number | null | undefined, digits = 2) => (v === null || v === undefined || Number.isNaN(v) ? '–' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 }));

/** The commands of a step, most per unit first (those under 0.01 per unit left out). */
const topCommands = (c: Cost) =>
  Object.entries(c.byCommand)
    .filter(([, v]) => Math.abs(v) >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([n, v]) => `${n} ${fmt(v)}`)
    .join(', ');

function describeCost(c: Cost): string {
  const cpu = c.instanceCpuUs.filter((x) => x.us !== null).map((x) => `${x.instance} ${fmt(x.us, 1)} (GC ${fmt(x.gcUs, 1)}, heap ${fmt(x.heapMb, 0)} MB)`);
  return [
    `${fmt(c.units, 1)} ${plural(c.unit)} in ${fmt(c.seconds, 1)} s`,
    c.usedMemoryPerUnit !== undefined ? `${fmt(c.dataBytesPerUnit, 1)} B/${c.unit} of keys, ${fmt(c.tableBytesPerUnit, 1)} of hashtables (used_memory ${fmt(c.usedMemoryPerUnit, 1)})` : '',
    `${fmt(c.commandsPerUnit, 3)} commands/${c.unit} (${topCommands(c) || 'none'})`,
    `Redis CPU ${fmt(c.redisCpuUsPerUnit, 1)} µs/${c.unit}`,
    cpu.length ? `instance CPU µs/${c.cpuUnit}: ${cpu.join(', ')}` : '',
    c.refused ? `${c.refused} answers refused (503: the store deadline, enforcement.storeTimeoutMs)` : '',
    c.registered !== undefined ? `${fmt(c.registered, 0)} sessions registered${c.registered < c.units ? ` (${fmt(c.units - c.registered, 0)} admissions left no session in the registry)` : ''}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

// --- HTTP to the instances -------------------------------------------------------------------

interface Answer {
  status: number;
  setCookie: string[];
  text: string;
}

async function ask(inst: Instance, method: 'GET' | 'POST' | 'PUT', p: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const r = await inst.pool.request({ method, path: p, headers, body });
  const text = await r.body.text();
  const sc = r.headers['set-cookie'];
  return { status: r.statusCode, setCookie: sc === undefined ? [] : Array.isArray(sc) ? sc : [sc], text };
}

/** `one(i)` for i in 0..n-1, `concurrency` at a time. */
async function inParallel(n: number, one: (i: number) => Promise<void>, concurrency = CONCURRENCY): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

/** Throws unless the answer is `expect`: a figure over refusals would measure the wrong thing. */
function expectStatus(a: Answer, expect: number, what: string): void {
  if (a.status !== expect) throw new Error(`${what}: answered ${a.status}, not ${expect}: ${a.text.slice(0, 300)}`);
}

const json = { 'content-type': 'application/json' };
const form = { 'content-type': 'application/x-www-form-urlencoded' };
/** A distinct client address per viewer: `group` tells the kinds of viewers apart. */
const addressOf = (group: number, i: number) => `${group}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

/** nginx-rtmp's notify form for one viewer (test/hooks/nginx-rtmp.test.ts): its own clientid and address. */
function rtmpForm(call: 'play' | 'update_play' | 'play_done', i: number, t: TokenRecord): string {
  const stream = t.streams[0].streamName;
  const extra = call === 'update_play' ? '&time=30' : call === 'play' ? '&start=0&duration=0&reset=0' : '';
  return `app=live&flashver=LNX%209%2C0%2C124%2C2&swfurl=&tcurl=rtmp%3A%2F%2F127.0.0.1%2Flive&pageurl=&addr=${addressOf(10, i)}&clientid=${i + 1}&call=${call}&name=${stream}${extra}&token=${t.token}`;
}

const decisionBody = (t: TokenRecord) => JSON.stringify({ action: 'subscribe', token: t.token, streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'hls' });

async function decide(inst: Instance, t: TokenRecord): Promise<void> {
  expectStatus(await ask(inst, 'POST', '/hooks/authorize', json, decisionBody(t)), 200, `${inst.name}: a decision`);
}

/**
 * A decision outside a measured window that may first wait on its instance reading the account's
 * viewer-rule tokens (a newly started instance, or one whose account version moved): with thousands
 * of them (1M seeded tokens) that read can overrun the store deadline (enforcement.storeTimeoutMs)
 * while the instance is cold, answered 503. Asked again until answered (30 s at most).
 */
async function decideAgain(inst: Instance, t: TokenRecord): Promise<void> {
  for (let tries = 1; ; tries++) {
    const a = await ask(inst, 'POST', '/hooks/authorize', json, decisionBody(t));
    if (a.status !== 503 || tries >= 300) return expectStatus(a, 200, `${inst.name}: a decision`);
    if (tries === 1) console.log(`${inst.name}: a decision answered 503 while the instance read the account's viewer-rule tokens (the store deadline); asked again`);
    await sleep(100);
  }
}

/** WARM_REQUESTS decisions on a newly started instance (once): its request and decision code optimised before a step measures it. */
async function warm(inst: Instance, hot: TokenRecord[]): Promise<void> {
  if (inst.warm) return;
  await decideAgain(inst, hot[0]);
  await inParallel(WARM_REQUESTS, (i) => decideAgain(inst, hot[i % hot.length]));
  inst.warm = true;
}

/** An HTTP viewer's first request (its token in the playlist URL), answered with its session credential. */
async function admitViewer(inst: Instance, group: number, i: number, t: TokenRecord): Promise<string> {
  const a = await ask(inst, 'GET', '/hooks/auth-request', { 'x-original-uri': `/hls/${t.streams[0].streamName}/index.m3u8?token=${t.token}`, 'x-real-ip': addressOf(group, i) });
  expectStatus(a, 200, `${inst.name}: an HTTP viewer's first request`);
  const cookie = a.setCookie.find((c) => c.startsWith('streamgate_session='));
  if (!cookie) throw new Error(`${inst.name}: an HTTP viewer's first request set no session credential (set-cookie ${JSON.stringify(a.setCookie)})`);
  return cookie.split(';')[0];
}

// --- Tokens straight through the store ---------------------------------------------------------

/** `n` subscribe tokens of the account written through `store`, in order (2000 in flight, as the seed). */
async function createTokens(store: RedisStore, accountId: string, n: number, input: (i: number) => CreateTokenInput): Promise<TokenRecord[]> {
  const out: TokenRecord[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(2000, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await store.createToken(newTokenRecord('subscribe', accountId, input(i), newSecret(), Date.now()));
      }
    }),
  );
  return out;
}

const streamOf = (kind: string, i: number) => [{ streamName: `${kind}-${Math.floor(i / VIEWERS_PER_STREAM)}` }];

/** The tokens the steps after seeding use, each kind its own: so no step's cached state is another's. */
async function stepTokens(store: RedisStore, accountId: string, confirming: boolean) {
  return {
    rtmp: await createTokens(store, accountId, SESSIONS, (i) => ({ label: `rtmp viewer ${i}`, streams: streamOf('rtmp', i) })),
    http: await createTokens(store, accountId, SESSIONS, (i) => ({ label: `http viewer ${i}`, streams: streamOf('hls', i) })),
    // the confirmation's arrangement, only where it runs
    httpPaired: confirming ? await createTokens(store, accountId, SESSIONS, (i) => ({ label: `paired http viewer ${i}`, streams: streamOf('hls2', i) })) : [],
    steady: await createTokens(store, accountId, VIEWERS, (i) => ({ label: `steady viewer ${i}`, streams: streamOf('live', i) })),
    hot: await createTokens(store, accountId, HOT_TOKENS, (i) => ({ label: `decided ${i}`, streams: [{ streamName: 'cam1' }] })),
    written: (await createTokens(store, accountId, 1, () => ({ label: 'written', streams: [{ streamName: 'cam1' }] })))[0],
  };
}

// --- The steps ----------------------------------------------------------------------------------

/** Redis bytes and commands per token, seeded straight through the store (bench/seed.ts's tokens, by seed workers). */
async function tokenStep(run: Run): Promise<void> {
  // no Streamgate runs yet: two seeding workers on both cores (what bounds a seed is the writer's
  // work per command, not Redis)
  const target: SeedTarget = run.dep.topology === 'single' ? { url: run.dep.env.REDIS_URL } : { clusterNodes: run.dep.primaries };
  await run.measure(`${fmt(TOKENS, 0)} tokens seeded through the store`, { unit: 'token', instances: 0, memory: true }, async () => {
    await onCores(`${LOAD_CPU},${SERVER_CPU}`, () => seedRedisInWorkers(target, PREFIX, run.accountId, TOKENS));
    return { units: TOKENS };
  });
}

/** Redis bytes per bound address: tokens binding one address, and tokens binding four. */
async function bindSteps(run: Run, store: RedisStore): Promise<void> {
  for (const perToken of [1, 4]) {
    const tokens = await createTokens(store, run.accountId, Math.ceil(BINDS / perToken), (i) => ({ label: `bound ${i}`, streams: [{ streamName: 'cam1' }], bindIpsOnUsage: perToken }));
    await run.measure(`address bound through the store, ${perToken} per token (bindIpsOnUsage ${perToken})`, { unit: 'address', instances: 0, memory: true }, async () => {
      let n = 0;
      await inParallel(tokens.length * perToken, async (k) => {
        const t = tokens[Math.floor(k / perToken)];
        const r = await store.bindAddress(t, addressOf(20 + perToken, k));
        if (r !== 'bound') throw new Error(`binding an address to token ${t.id} answered ${r}`);
        n++;
      });
      return { units: n };
    });
  }
}

/** Registry sessions of nginx-rtmp viewers: admission (memory and commands), re-ask; the end comes last (endRtmp). */
async function rtmpSteps(run: Run, a: Instance, tokens: TokenRecord[]): Promise<void> {
  const post = async (call: 'play' | 'update_play' | 'play_done', i: number) => expectStatus(await ask(a, 'POST', '/hooks/nginx-rtmp', form, rtmpForm(call, i, tokens[i])), 200, `nginx-rtmp ${call}`);
  await run.measure('nginx-rtmp viewer admitted (call=play), its own token first seen', { unit: 'session', instances: 1, memory: true, settle: true, registry: true }, async () => {
    await inParallel(SESSIONS, (i) => post('play', i));
    return { units: SESSIONS };
  });
  await run.measure('nginx-rtmp re-ask (call=update_play) of a running session', { unit: 're-ask', instances: 1, settle: true }, async () => {
    await inParallel(REASKS, (i) => post('update_play', i));
    return { units: REASKS };
  });
}

async function endRtmp(run: Run, a: Instance, tokens: TokenRecord[]): Promise<void> {
  await run.measure('nginx-rtmp viewer ended (call=play_done)', { unit: 'end', instances: 1, settle: true }, async () => {
    await inParallel(ENDS, async (i) => expectStatus(await ask(a, 'POST', '/hooks/nginx-rtmp', form, rtmpForm('play_done', i, tokens[i])), 200, 'nginx-rtmp play_done'));
    return { units: ENDS };
  });
}

/**
 * Decisions on cached tokens, round-robin over the instances running (all of them decide): Redis
 * commands per decision, and each instance's CPU per decision it served.
 */
async function decisionStep(run: Run, hot: TokenRecord[], beside = ''): Promise<Cost> {
  const n = run.running.length;
  // a newly started instance warm; every token seen by every instance
  for (const inst of run.running) await warm(inst, hot);
  for (const inst of run.running) for (const t of hot) await decideAgain(inst, t);
  return run.measure(`decision, token record cached (POST /hooks/authorize), ${DECISIONS_IN_FLIGHT} in flight per instance${beside}`, { unit: 'decision', instances: n }, async () => {
    const served = new Array(n).fill(0);
    await inParallel(
      DECISIONS,
      async (i) => {
        await decide(run.running[i % n], hot[i % hot.length]);
        served[i % n]++;
      },
      DECISIONS_IN_FLIGHT * n,
    );
    return { units: DECISIONS, served };
  });
}

/**
 * Management writes through the first instance while every running instance holds the account's
 * versions: on idle instances (what the write and its version message cost each), and followed by
 * every instance deciding REDECIDED cached tokens again (what a moved version costs the decisions).
 */
async function writeSteps(run: Run, written: TokenRecord, hot: TokenRecord[], viewerRuleTokens: number): Promise<void> {
  const n = run.running.length;
  const auth = { ...json, authorization: `Bearer ${run.secret}` };
  let seq = 0;
  const write = async () => expectStatus(await ask(run.running[0], 'PUT', `/api/subscribe_token/${written.id}`, auth, JSON.stringify({ label: `written ${++seq}` })), 200, 'PUT /api/subscribe_token/:id');
  await write(); // the route warm
  await run.measure('management write (PUT /api/subscribe_token/:id), instances idle', { unit: 'write', instances: n }, async () => {
    for (let i = 0; i < WRITES; i++) await write();
    return { units: WRITES };
  });
  // Each decision after a write waits on its instance reading the account's viewer-rule tokens
  // again, under the store deadline (enforcement.storeTimeoutMs): one instance at a time, as each
  // would have a core of its own, and a refusal at that deadline is counted, not fatal.
  const step = `management write, then ${REDECIDED} cached tokens decided again on every instance (the account has ${fmt(viewerRuleTokens, 0)} viewer-rule tokens)`;
  await run.measure(step, { unit: 'write', instances: n }, async () => {
    let refused = 0;
    for (let i = 0; i < REDECIDE_WRITES; i++) {
      await write();
      await sleep(10); // the version message reaches the other instances first, as it does long before their next viewer
      for (const inst of run.running) {
        await Promise.all(
          hot.slice(0, REDECIDED).map(async (t) => {
            const a = await ask(inst, 'POST', '/hooks/authorize', json, decisionBody(t));
            if (a.status === 503) refused++;
            else expectStatus(a, 200, `${inst.name}: a decision after a write`);
          }),
        );
      }
    }
    return { units: REDECIDE_WRITES, refused };
  });
}

/**
 * HTTP viewer sessions admitted on a fresh instance: Redis bytes and commands per admission. Then,
 * on a topology the confirmation runs on (`confirming`), as it admits: on two fresh instances at
 * once, each viewer sticky to one. Two
 * instances taking turns on one core each spend more CPU per request than one alone (each finds
 * its caches as the other left them), so the confirmation's CPU figures are predicted from steps
 * with its own arrangement.
 */
async function httpAdmitSteps(run: Run, tokens: TokenRecord[], paired: TokenRecord[], hot: TokenRecord[], confirming: boolean): Promise<void> {
  const h = await run.start('H1');
  try {
    await warm(h, hot);
    const at = run.running.indexOf(h);
    await run.measure('HTTP viewer admitted (GET /hooks/auth-request with its token), its own token first seen', { unit: 'session', instances: 1, memory: true, settle: true, registry: true }, async () => {
      await inParallel(SESSIONS, async (i) => {
        await admitViewer(h, 11, i, tokens[i]);
      });
      return { units: SESSIONS, served: run.running.map((_, k) => (k === at ? SESSIONS : 0)) };
    });
  } finally {
    // its viewers' states would keep their revalidation rounds going beside the steps measured next
    await run.stop(h);
  }
  if (!confirming) return;
  const pair = [await run.start('H4'), await run.start('H5')];
  try {
    for (const inst of pair) await warm(inst, hot);
    await run.measure(`HTTP viewer admitted, each sticky to one of two instances (the confirmation's arrangement), its own token first seen`, { unit: 'session', instances: 2, settle: true, registry: true }, async () => {
      const served = new Map<Instance, number>();
      await inParallel(SESSIONS, async (i) => {
        const inst = pair[i % 2];
        await admitViewer(inst, 14, i, paired[i]);
        served.set(inst, (served.get(inst) ?? 0) + 1);
      });
      return { units: SESSIONS, served: run.running.map((inst) => served.get(inst) ?? 0) };
    });
  } finally {
    for (const inst of pair) await run.stop(inst);
  }
}

/**
 * VIEWERS HTTP viewers at steady state, each presenting its credential every PRESENT_MS (a playlist
 * or segment request): per viewer-minute the Redis commands of the registry touches and the
 * revalidation, and each instance's CPU per credential check. First every request to one instance,
 * then spread round-robin over two (no stickiness: each instance touches every viewer), then, where
 * the confirmation runs (`confirming`), each viewer sticky to one of the two (its arrangement: one
 * touch per viewer per period, two instances taking turns on the core).
 */
async function httpSteadySteps(run: Run, tokens: TokenRecord[], hot: TokenRecord[], confirming: boolean): Promise<void> {
  const h2 = await run.start('H2');
  const h3 = await run.start('H3');
  try {
    await warm(h2, hot);
    await warm(h3, hot);
    const cookies: string[] = new Array(VIEWERS);
    await inParallel(VIEWERS, async (i) => {
      cookies[i] = await admitViewer(h2, 12, i, tokens[i]);
    });
    const present = (inst: Instance, i: number, round: number) => presentCredential(inst, 12, i, tokens[i], cookies, round);
    // Both instances hold every viewer and its token, their credential checks warm; their touches
    // of them are done before the idle rates are taken.
    for (const inst of [h2, h3]) await inParallel(Math.max(VIEWERS, WARM_REQUESTS), (k) => present(inst, k % VIEWERS, Math.floor(k / VIEWERS)));
    await sleep(REVALIDATE_SECONDS * 2000);
    await run.idleRates();
    const steady = async (step: string, instances: number, to: (i: number, round: number) => Instance) => {
      const viewers = presenting(VIEWERS, (i, round) => present(to(i, round), i, round), (i, round) => to(i, round));
      try {
        // one period of the same requests first: the window's first round of touches finds every viewer presented
        await sleep(REVALIDATE_SECONDS * 1000);
        await run.measure(step, { unit: 'viewer-minute', cpuUnit: 'credential check', instances }, async () => {
          viewers.checks.clear();
          const t0 = performance.now();
          await sleep(STEADY_PERIODS * REVALIDATE_SECONDS * 1000);
          return { units: (VIEWERS * (performance.now() - t0)) / 60_000, served: run.running.map((inst) => viewers.checks.get(inst) ?? 0) };
        });
      } finally {
        await viewers.stop();
      }
    };
    await steady(`HTTP viewer at steady state, every request to one instance (revalidateSeconds ${REVALIDATE_SECONDS}, a request every ${PRESENT_MS} ms)`, 1, () => h2);
    await steady(`HTTP viewer at steady state, requests round-robin over two instances (revalidateSeconds ${REVALIDATE_SECONDS}, a request every ${PRESENT_MS} ms)`, 2, (i, round) => ((i + round) % 2 === 0 ? h2 : h3));
    if (confirming) await steady(`HTTP viewer at steady state, each viewer sticky to one of two instances (the confirmation's arrangement; revalidateSeconds ${REVALIDATE_SECONDS}, a request every ${PRESENT_MS} ms)`, 2, (i) => (i % 2 === 0 ? h2 : h3));
  } finally {
    await run.stop(h3);
    await run.stop(h2);
  }
}

/** Viewer i of `group` presents its session credential (a segment request); a refreshed credential replaces it in `cookies`. */
async function presentCredential(inst: Instance, group: number, i: number, t: TokenRecord, cookies: string[], round: number): Promise<void> {
  const a = await ask(inst, 'GET', '/hooks/auth-request', { 'x-original-uri': `/hls/${t.streams[0].streamName}/seg-${round}.ts`, 'x-real-ip': addressOf(group, i), cookie: cookies[i] });
  expectStatus(a, 200, `${inst.name}: a segment request with the session credential`);
  const fresh = a.setCookie.find((c) => c.startsWith('streamgate_session='));
  if (fresh) cookies[i] = fresh.split(';')[0];
}

/**
 * `viewers` viewers presenting in rounds, one round every PRESENT_MS (each viewer once a round),
 * until stopped; `checks` counts the answers by the instance `to` sent them to. stop() ends the
 * rounds and throws what failed in them.
 */
function presenting(viewers: number, one: (i: number, round: number) => Promise<void>, to: (i: number, round: number) => Instance, everyMs = PRESENT_MS, concurrency = CONCURRENCY) {
  const checks = new Map<Instance, number>();
  /** How long each round's requests took (ms): over `everyMs`, the viewers presented less often than meant. */
  const roundMs: number[] = [];
  let stopped = false;
  let failure: unknown;
  const done = (async () => {
    for (let round = 1; !stopped; round++) {
      const start = performance.now();
      await inParallel(
        viewers,
        async (i) => {
          await one(i, round);
          checks.set(to(i, round), (checks.get(to(i, round)) ?? 0) + 1);
        },
        concurrency,
      );
      roundMs.push(performance.now() - start);
      await sleep(Math.max(0, start + everyMs - performance.now()));
    }
  })().catch((e: unknown) => {
    failure = e;
  });
  return {
    checks,
    roundMs,
    stop: async () => {
      stopped = true;
      await done;
      if (failure !== undefined) throw failure;
    },
  };
}

// --- The confirmation at scale -------------------------------------------------------------------

/** A per-viewer figure at scale against the unit steps' prediction. */
interface Check {
  figure: string;
  predicted: number;
  measured: number;
  /** measured / predicted */
  ratio: number;
  bound: string;
  verdict: 'PASS' | 'FAIL';
}

interface Confirmation {
  topology: Topology;
  viewers: number;
  revalidateSeconds: number;
  presentEveryMs: number;
  /** Sessions live in the registry (the account's index, unexpired) after admission, during the steady state and at the decisions. */
  liveSessions: { admitted: number; steady: number; decided: number };
  /** Each presentation round's length, ms (over presentEveryMs: the load generator fell behind). */
  roundMs: { max: number; median: number };
  checks: Check[];
}

/** CPU µs per unit over the instances that served, weighted by what each served (an instance that served more weighs more). */
const meanCpuOf = (xs: Cost['instanceCpuUs']) => {
  const served = xs.filter((x) => x.us !== null && x.served > 0);
  return sum(served.map((x) => x.us! * x.served)) / sum(served.map((x) => x.served));
};
const meanCpu = (c: Cost) => meanCpuOf(c.instanceCpuUs);

/** measured against predicted: within a share of it either way, or at most a multiple of it. */
function check(figure: string, predicted: number, measured: number, bound: { within: number } | { atMost: number }): Check {
  const ratio = measured / predicted;
  const ok = 'within' in bound ? Math.abs(ratio - 1) <= bound.within : ratio <= bound.atMost;
  const says = 'within' in bound ? `within ${bound.within * 100}%` : `at most ${bound.atMost}×`;
  return { figure, predicted, measured, ratio, bound: says, verdict: ok ? 'PASS' : 'FAIL' };
}

/**
 * FLAT_ROUNDS decision steps in a row on every running instance: the median over the steps of the
 * `held` instances' mean CPU µs per decision divided by the `control`'s in the same step. The
 * control decides beside them the whole time but holds no viewer: what the machine's speed does to
 * a step (on a shared VM it moves by a fifth, and by more over minutes) moves both alike.
 */
async function decisionRounds(run: Run, hot: TokenRecord[], beside: string, held: Instance[], control: Instance): Promise<number> {
  const ratios: number[] = [];
  for (let k = 1; k <= FLAT_ROUNDS; k++) {
    const c = await decisionStep(run, hot, `${beside} (${k} of ${FLAT_ROUNDS})`);
    const of = (insts: Instance[]) => meanCpuOf(c.instanceCpuUs.filter((x) => insts.some((i) => i.name === x.instance)));
    ratios.push(of(held) / of([control]));
  }
  return median(ratios);
}

/**
 * CONFIRM_VIEWERS HTTP viewers on two instances, each viewer sticky to one: admitted, then held at
 * steady state at CONFIRM_REVALIDATE_SECONDS, and their per-viewer figures set against what the unit
 * steps measured with VIEWERS viewers (the Redis figures per viewer-minute scaled by the two
 * periods: one touch per viewer per period). Cached decisions are measured on the same two instances
 * before the viewers come and while their sessions are registered (the viewers quiet, their
 * sessions live for idleSeconds), each time against a third instance that holds no viewer and
 * decides beside them: the registry's and the instances' viewer state's weight on a decision.
 */
async function confirmSteps(run: Run, hot: TokenRecord[]): Promise<Confirmation> {
  // the unit steps with the confirmation's arrangement (two instances, each viewer sticky to one);
  // the bytes from the admission on one instance, which read the memory
  const unitSteady = run.costs.find((c) => c.step.startsWith('HTTP viewer at steady state, each viewer sticky to one of two instances'));
  const unitAdmit = run.costs.find((c) => c.step.startsWith('HTTP viewer admitted, each sticky to one of two instances'));
  const unitBytes = run.costs.find((c) => c.step.startsWith('HTTP viewer admitted (GET'));
  if (!unitSteady || !unitAdmit || !unitBytes) throw new Error('the confirmation needs the unit steps of HTTP viewers first');
  const n = CONFIRM_VIEWERS;
  const tokens = await createTokens(run.store, run.accountId, n, (i) => ({ label: `confirmation viewer ${i}`, streams: streamOf('confirm', i) }));
  const vs = [await run.start('V1', CONFIRM_ENV, CONFIRM_CONCURRENCY), await run.start('V2', CONFIRM_ENV, CONFIRM_CONCURRENCY)];
  const control = await run.start('C', CONFIRM_ENV);
  if (run.running.length !== 3) throw new Error(`the confirmation runs on its three instances alone, not ${run.running.map((i) => i.name).join(', ')}`);
  const sticky = (i: number) => vs[i % 2];
  const servedBy = (counts: number[]) => run.running.map((inst) => counts[vs.indexOf(inst)] ?? 0);
  try {
    const none = await decisionRounds(run, hot, ', no viewer session registered', vs, control);
    const live0 = await run.live();
    const cookies: string[] = new Array(n);
    const admit = await run.measure(`HTTP viewer admitted, ${fmt(n, 0)} viewers, each sticky to one of two instances`, { unit: 'session', instances: 2, memory: true, settle: true, registry: true }, async () => {
      const served = [0, 0];
      await inParallel(
        n,
        async (i) => {
          cookies[i] = await admitViewer(sticky(i), 13, i, tokens[i]);
          served[i % 2]++;
        },
        CONCURRENCY,
      );
      return { units: n, served: servedBy(served) };
    });
    const admitted = admit.registered ?? Number.NaN;
    // presenting at once, as viewers do (a session not presented for idleSeconds ends); the idle
    // rates subtracted are the two instances' before the viewers came
    const viewers = presenting(n, (i, round) => presentCredential(sticky(i), 13, i, tokens[i], cookies, round), sticky, CONFIRM_PRESENT_MS, CONFIRM_CONCURRENCY);
    let steady: Cost;
    let steadyLive: number;
    try {
      // one period of presentations first: the window's first round of touches finds every viewer presented
      await sleep(CONFIRM_REVALIDATE_SECONDS * 1000);
      viewers.roundMs.length = 0;
      steady = await run.measure(
        `HTTP viewer at steady state, ${fmt(n, 0)} viewers sticky to one of two instances (revalidateSeconds ${CONFIRM_REVALIDATE_SECONDS}, a request every ${CONFIRM_PRESENT_MS} ms)`,
        { unit: 'viewer-minute', cpuUnit: 'credential check', instances: 2 },
        async () => {
          viewers.checks.clear();
          const t0 = performance.now();
          await sleep(CONFIRM_PERIODS * CONFIRM_REVALIDATE_SECONDS * 1000);
          return { units: (n * (performance.now() - t0)) / 60_000, served: run.running.map((inst) => viewers.checks.get(inst) ?? 0) };
        },
      );
      steadyLive = (await run.live()) - live0;
    } finally {
      await viewers.stop();
    }
    // the viewers quiet, their sessions live for idleSeconds (three periods): past the round that
    // touches their last presentations, the instances' idle rates with them, then decisions
    await sleep(CONFIRM_REVALIDATE_SECONDS * 1000 + 5000);
    run.forgetIdle();
    const withSessions = await decisionRounds(run, hot, `, ${fmt(n, 0)} viewer sessions registered`, vs, control);
    const decided = (await run.live()) - live0;
    const scaled = REVALIDATE_SECONDS / CONFIRM_REVALIDATE_SECONDS;
    const checks = [
      check('sessions in the registry per admission', 1, admitted / n, { within: 0 }),
      check('Redis bytes per viewer session (used_memory)', unitBytes.usedMemoryPerUnit!, admit.usedMemoryPerUnit!, { within: CONFIRM_WITHIN }),
      check('Redis commands per admission', unitAdmit.commandsPerUnit, admit.commandsPerUnit, { within: CONFIRM_WITHIN }),
      check('instance CPU µs per admission', meanCpu(unitAdmit), meanCpu(admit), { within: CONFIRM_WITHIN }),
      check('Redis commands per viewer-minute', unitSteady.commandsPerUnit * scaled, steady.commandsPerUnit, { within: CONFIRM_WITHIN }),
      check('Redis CPU µs per viewer-minute', unitSteady.redisCpuUsPerUnit * scaled, steady.redisCpuUsPerUnit, { within: CONFIRM_WITHIN }),
      check('instance CPU µs per credential check', meanCpu(unitSteady), meanCpu(steady), { within: CONFIRM_WITHIN }),
      check('median presentation round, ms (longer than the request interval: the load fell behind, and the per-check figures do not compare)', CONFIRM_PRESENT_MS, median(viewers.roundMs), { atMost: 1 }),
      check(`instance CPU per cached decision on the viewers' instances / on the control's, sessions registered vs none (median of ${FLAT_ROUNDS} steps each)`, none, withSessions, { atMost: FLAT_MAX }),
    ];
    return {
      topology: run.dep.topology,
      viewers: n,
      revalidateSeconds: CONFIRM_REVALIDATE_SECONDS,
      presentEveryMs: CONFIRM_PRESENT_MS,
      liveSessions: { admitted, steady: steadyLive, decided },
      roundMs: { max: Math.max(...viewers.roundMs), median: median(viewers.roundMs) },
      checks,
    };
  } finally {
    for (const v of [...vs, control]) await run.stop(v);
  }
}

function printConfirmations(confirmations: Confirmation[]): void {
  for (const c of confirmations) {
    console.log(
      `\nConfirmation on ${REDIS_NAME[c.topology]}: ${fmt(c.viewers, 0)} HTTP viewers over two instances, revalidateSeconds ${c.revalidateSeconds}, a request every ${c.presentEveryMs} ms (presentation rounds: median ${fmt(c.roundMs.median, 0)} ms, longest ${fmt(c.roundMs.max, 0)} ms); sessions live in the registry: ${fmt(c.liveSessions.admitted, 0)} admitted, ${fmt(c.liveSessions.steady, 0)} at steady state, ${fmt(c.liveSessions.decided, 0)} at the decisions. Predicted: the unit steps' figures (Redis per viewer-minute scaled from revalidateSeconds ${REVALIDATE_SECONDS} to ${c.revalidateSeconds}):`,
    );
    console.log('| figure | predicted | measured | measured / predicted | bound | verdict |');
    console.log('|---|---:|---:|---:|---|---|');
    for (const k of c.checks) console.log(`| ${k.figure} | ${fmt(k.predicted, 1)} | ${fmt(k.measured, 1)} | ${fmt(k.ratio, 3)} | ${k.bound} | ${k.verdict} |`);
  }
}

/** Every step on one deployment; every process it started stopped, whatever happens. */
async function runTopology(topology: Topology): Promise<Run> {
  const t0 = performance.now();
  const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0)} s`;
  const dep = topology === 'single' ? await singleRedis() : await clusterRedis();
  let run: Run | undefined;
  let store: RedisStore | undefined;
  try {
    store = new RedisStore(dep.client(PREFIX));
    run = new Run(dep, store);
    console.log(`\n== ${topology === 'single' ? 'one Redis' : 'Redis Cluster, 3 primaries'} (${dep.primaries.join(', ')}) ==`);
    await run.bootstrap();
    await tokenStep(run);
    console.log(`${topology}: seeded (${elapsed()})`);
    await bindSteps(run, store);
    const tokens = await stepTokens(store, run.accountId, CONFIRM_ON.includes(topology));
    // what every instance reads again after a version move (the seed's securing publish tokens)
    run.viewerRuleTokens = await store.client.scard(keys.securing(run.accountId));
    const a = await run.start('A');
    await warm(a, tokens.hot);
    await rtmpSteps(run, a, tokens.rtmp);
    console.log(`${topology}: registry sessions done (${elapsed()})`);
    const deciders = [a];
    for (const n of INSTANCE_COUNTS) {
      while (deciders.length < n) deciders.push(await run.start(String.fromCharCode(65 + deciders.length)));
      await decisionStep(run, tokens.hot);
      await writeSteps(run, tokens.written, tokens.hot, run.viewerRuleTokens);
    }
    console.log(`${topology}: decisions and writes done (${elapsed()})`);
    for (const d of deciders.slice(1)) await run.stop(d);
    // the steps with the confirmation's arrangement only where it runs
    const confirming = CONFIRM_ON.includes(topology);
    await httpAdmitSteps(run, tokens.http, tokens.httpPaired, tokens.hot, confirming);
    await httpSteadySteps(run, tokens.steady, tokens.hot, confirming);
    await endRtmp(run, a, tokens.rtmp);
    if (confirming) {
      await run.stop(a);
      run.confirmation = await confirmSteps(run, tokens.hot);
    }
    console.log(`${topology}: done (${elapsed()})`);
    return run;
  } finally {
    await run?.stopAll();
    await store?.close().catch(() => {});
    run?.meter.close();
    await dep.stop();
  }
}

// --- Report ---------------------------------------------------------------------------------------

const REDIS_NAME: Record<Topology, string> = { single: 'one Redis', cluster: 'Cluster (3 primaries)' };

function printMemory(costs: Cost[]): void {
  console.log('\nRedis memory per unit, deltas summed over the primaries / units. used_memory; of it (MEMORY STATS) the keys, without client buffers, cluster links, script caches and replication/AOF buffers, and the keyspace hashtables, which double when the keys outgrow them (a step that crosses a power of two pays for every key before it; spread over all keys they cost 8-16 B per key, twice for a key with an expiry); MEMORY USAGE of the keys, every family:');
  console.log('| Redis | unit | units | bytes/unit (used_memory) | keys (MEMORY STATS) | hashtables (MEMORY STATS) | keys (MEMORY USAGE, all families) | keys/unit |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const c of costs.filter((x) => x.usedMemoryPerUnit !== undefined)) {
    const fam = c.families ?? [];
    console.log(
      `| ${REDIS_NAME[c.topology]} | ${c.step} | ${fmt(c.units, 0)} | ${fmt(c.usedMemoryPerUnit, 1)} | ${fmt(c.dataBytesPerUnit, 1)} | ${fmt(c.tableBytesPerUnit, 1)} | ${fmt(sum(fam.map((f) => f.bytesPerUnit)), 1)} | ${fmt(sum(fam.map((f) => f.keysPerUnit)), 3)} |`,
    );
  }
  console.log('\nBy key family (MEMORY USAGE, per unit; families that changed by under 0.5 B/unit left out):');
  console.log('| Redis | unit | key family | keys/unit | bytes/unit |');
  console.log('|---|---|---|---:|---:|');
  for (const c of costs.filter((x) => x.families)) {
    for (const f of c.families!.filter((x) => Math.abs(x.bytesPerUnit) >= 0.5)) {
      console.log(`| ${REDIS_NAME[c.topology]} | ${c.step} | ${f.family} | ${fmt(f.keysPerUnit, 4)} | ${fmt(f.bytesPerUnit, 1)} |`);
    }
  }
}

function printCommands(costs: Cost[]): void {
  console.log(
    '\nRedis commands per unit (INFO commandstats delta summed over the primaries, less the idle rate; a script run counts once as EVALSHA and once for each command it runs). In the HTTP viewer rows a registry touch is one per viewer per revalidation period on each instance the viewer presented to, each EVALSHA a batch of them (session-touch-many.lua, up to 128 viewers of one account):',
  );
  console.log('| Redis | instances | step | units | commands/unit | script runs/unit | Redis CPU µs/unit | by command, per unit |');
  console.log('|---|---:|---|---:|---:|---:|---:|---|');
  for (const c of costs) {
    console.log(`| ${REDIS_NAME[c.topology]} | ${c.instances} | ${c.step}${c.refused ? ` (${c.refused} answers refused at the store deadline)` : ''}${c.registered !== undefined && c.registered < c.units ? ` (only ${fmt(c.registered, 0)} sessions registered)` : ''} | ${fmt(c.units, 1)} ${plural(c.unit)} | ${fmt(c.commandsPerUnit, 3)} | ${fmt(c.scriptRunsPerUnit, 3)} | ${fmt(c.redisCpuUsPerUnit, 1)} | ${topCommands(c) || '–'} |`);
  }
}

function printCpu(costs: Cost[]): void {
  console.log('\nStreamgate CPU per unit served, each instance (/proc user + system, less its idle rate):');
  console.log('| Redis | instances | step | per | each instance µs | mean µs |');
  console.log('|---|---:|---|---|---|---:|');
  for (const c of costs.filter((x) => x.instances > 0)) {
    const served = c.instanceCpuUs.filter((x) => x.us !== null);
    if (served.length === 0) continue;
    console.log(`| ${REDIS_NAME[c.topology]} | ${c.instances} | ${c.step} | ${c.cpuUnit} | ${served.map((x) => `${x.instance} ${fmt(x.us, 1)}`).join(', ')} | ${fmt(meanCpu(c), 1)} |`);
  }
}

function printPrimaryShares(costs: Cost[]): void {
  const shared = costs.filter((c) => c.primaryShares);
  if (shared.length === 0) return;
  console.log("\nCluster: each primary's share of a step's commands and, in a memory step, of its used_memory change (raw deltas; one account's keys share its hash tag, so they sit on one primary):");
  console.log('| instances | step | memory by primary | commands by primary |');
  console.log('|---:|---|---|---|');
  const pct = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : '–');
  for (const c of shared) {
    console.log(`| ${c.instances} | ${c.step} | ${c.usedMemoryPerUnit !== undefined ? c.primaryShares!.map((p) => pct(p.memory)).join(' / ') : '–'} | ${c.primaryShares!.map((p) => pct(p.commands)).join(' / ')} |`);
  }
}

function printIdle(topology: Topology, idles: Idle[]): void {
  for (const i of idles) {
    const cmds = Object.entries(i.commandsPerSecond).sort((a, b) => b[1] - a[1]).map(([n, v]) => `${n} ${fmt(v, 1)}`).join(', ');
    console.log(`| ${REDIS_NAME[topology]} | ${i.instances.join(', ') || 'none'} | ${fmt(sum(Object.values(i.commandsPerSecond)), 1)} | ${cmds || '–'} | ${fmt(i.redisCpuUsPerSecond, 0)} | ${i.instanceCpuUsPerSecond.map((v) => fmt(v, 0)).join(', ') || '–'} |`);
  }
}

async function main(): Promise<void> {
  pinToLoadCore();
  const status = buildCurrent();
  if (status !== undefined && status !== 0) throw new Error(`npm run build failed (exit ${status})`);
  const machine = describeMachine();
  const settings = {
    tokens: TOKENS,
    sessions: SESSIONS,
    bindsPerLayout: BINDS,
    decisionsPerInstanceCount: DECISIONS,
    decisionsInFlightPerInstance: DECISIONS_IN_FLIGHT,
    warmRequests: WARM_REQUESTS,
    writesPerInstanceCount: WRITES,
    redecideWritesPerInstanceCount: REDECIDE_WRITES,
    steadyViewers: VIEWERS,
    steadySeconds: STEADY_PERIODS * REVALIDATE_SECONDS,
    revalidateSeconds: REVALIDATE_SECONDS,
    presentEveryMs: PRESENT_MS,
    reasks: REASKS,
    ends: ENDS,
    instanceCounts: INSTANCE_COUNTS,
    idleSeconds: IDLE_SECONDS,
    viewersPerStream: VIEWERS_PER_STREAM,
    hotTokens: HOT_TOKENS,
    redecided: REDECIDED,
    concurrency: CONCURRENCY,
    keyPrefix: PREFIX,
    topologies: TOPOLOGIES,
    confirmOn: CONFIRM_ON,
    confirmViewers: CONFIRM_VIEWERS,
    confirmRevalidateSeconds: CONFIRM_REVALIDATE_SECONDS,
    confirmPeriods: CONFIRM_PERIODS,
    confirmEnv: CONFIRM_ENV,
    streamgateEnv: { ...STREAMGATE_ENV, ...CAPACITY_ENV },
  };
  console.log(`capacity: ${JSON.stringify(settings)}`);
  const t0 = performance.now();
  const runs: Run[] = [];
  for (const t of TOPOLOGIES) runs.push(await runTopology(t));
  const costs = runs.flatMap((r) => r.costs);
  printMemory(costs);
  printCommands(costs);
  printCpu(costs);
  printPrimaryShares(costs);
  const confirmations = runs.flatMap((r) => (r.confirmation ? [r.confirmation] : []));
  printConfirmations(confirmations);
  console.log('\nIdle, per second (what the processes running do unasked; subtracted from every step above). On one Redis, ping is the version watch\'s heartbeat (every redis.versionLagMs / 5 per instance); a Cluster has no watch:');
  console.log('| Redis | instances running | commands/s | by command | Redis CPU µs/s | each instance CPU µs/s |');
  console.log('|---|---|---:|---|---:|---|');
  for (const r of runs) printIdle(r.dep.topology, r.idles);
  const seconds = (performance.now() - t0) / 1000;
  console.log(`\ncapacity run: ${(seconds / 60).toFixed(1)} min after the build`);
  writeResults({ at: new Date().toISOString(), machine, settings, seconds, costs, confirmations, idle: runs.map((r) => ({ topology: r.dep.topology, primaries: r.dep.primaries.length, viewerRuleTokens: r.viewerRuleTokens, idle: r.idles })) }, 'capacity-');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
