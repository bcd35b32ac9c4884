// The scale run: decision and management figures at each token count, on each store (SQLite, one
// Redis, a local 3-primary Redis Cluster), and memory per token.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AUTHORIZE, accountOf, cases } from './cases.js';
import { DURATION, SIZES, STREAMGATE_ENV, STREAMGATE_NODE_FLAGS } from './lib/config.js';
import { SCALE_CPU_MAX, SCALE_MIN, SCALE_ROUNDS } from './lib/goals.js';
import { load, paced, type Result } from './lib/load.js';
import { median, medianBy } from './lib/stats.js';
import { type BenchRedis, flushAll, rssMb, startProcess, streamgate, type Target, usedMemory } from './lib/targets.js';
import { clusterRedis, type Deployment, Meter } from './lib/capacity-redis.js';
import { RedisStore } from '../src/store/redis/redis-store.js';
import { seedRedis, seedRedisStore, seedSqlite } from './seed.js';

export type ScaleBackend = 'sqlite' | 'redis' | 'cluster';
export const SCALE_BACKENDS: ScaleBackend[] = ['sqlite', 'redis', 'cluster'];

interface Figure {
  rps: number;
  p99: number;
}
export interface ScaleRow {
  backend: ScaleBackend;
  tokens: number;
  seedSeconds: number;
  decision: Figure;
  /** Client p99 (ms) with requests spread at half the measured decision rate. */
  decisionP99AtHalf: number;
  /** The same run's p99 from Streamgate's own request histogram (bucket upper bound, ms). */
  decisionServerP99AtHalf?: number;
  /** Each round's figures (the decision columns are their medians); cpuUs: server CPU µs per decision. */
  decisionRounds: { rps: number[]; p99: number[]; p99AtHalf: number[]; cpuUs: number[] };
  openStream: Figure;
  create: Figure;
  read: Figure;
  listPage1: Figure;
  listPage1000: Figure;
  rssMb: number;
  redisBytesPerToken?: number;
  /**
   * The decision figures against the smallest size's of the same store (1,000 tokens by default):
   * req/s and p99 at half as ratios (1 = flat; the flat target is req/s >= 0.9×).
   */
  vsBase?: { tokens: number; rps: number; cpuUs: number; p99AtHalf: number; serverP99AtHalf?: number };
}

/** The decision and management figures at each size, on both stores, and memory per token. */
export async function scaleRun(redis: BenchRedis): Promise<ScaleRow[]> {
  const rows: ScaleRow[] = [];
  const backends = (process.env.BENCH_BACKENDS ?? SCALE_BACKENDS.join(',')).split(',').map((b) => b.trim()) as ScaleBackend[];
  for (const b of backends) if (!SCALE_BACKENDS.includes(b)) throw new Error(`BENCH_BACKENDS: "${b}" is none of ${SCALE_BACKENDS.join(', ')}`);
  for (const backend of backends) {
    // the Cluster's nodes are started for this backend and stopped after it, like the processes
    const cluster: Deployment | undefined = backend === 'cluster' ? await clusterRedis() : undefined;
    const meter = cluster ? new Meter(cluster.primaries) : undefined;
    const used = async () => (meter ? (await meter.read()).usedMemory : usedMemory(redis.url));
    // Every size is seeded and started first, then the decision figures are taken in rounds that
    // visit each size in turn (1k, 100k, 1M, 1k, ...): noise on a shared machine comes in spells
    // of a minute or so, and sizes measured minutes apart compared the spells, not the sizes.
    const procs: Array<{ n: number; sg: Target; c: Awaited<ReturnType<typeof cases>>; secret: string; accountId: string; seedS: number; bytesPerToken?: number }> = [];
    for (const n of SIZES) {
      const dir = mkdtempSync(path.join(tmpdir(), 'sg-scale-'));
      const prefix = `scale${n}:`;
      const env: Record<string, string> = { ...STREAMGATE_ENV, STREAMGATE_DATA_DIR: dir };
      let usedBefore = 0;
      if (backend !== 'sqlite') {
        Object.assign(env, cluster ? cluster.env : { REDIS_URL: redis.url });
        env.STREAMGATE_REDIS_KEYPREFIX = prefix;
        usedBefore = await used();
      }
      // Start once to create the account, seed behind its back, then start for real.
      const first = await streamgate(`seed ${backend}`, env);
      const accountId = await accountOf(first.t.base, first.secret);
      first.t.proc.kill('SIGTERM');
      await new Promise((r) => first.t.proc.once('exit', r));
      const t0 = Date.now();
      if (backend === 'sqlite') await seedSqlite(path.join(first.dir, 'streamgate.db'), accountId, n);
      else if (cluster) {
        const store = new RedisStore(cluster.client(prefix));
        await seedRedisStore(store, accountId, n);
        await store.close();
      } else await seedRedis(redis.url, prefix, accountId, n);
      const seedS = (Date.now() - t0) / 1000;
      const bytesPerToken = backend !== 'sqlite' ? ((await used()) - usedBefore) / n : undefined;
      const sg = await startProcess(`streamgate ${backend} ${n}`, [process.execPath, ...STREAMGATE_NODE_FLAGS, 'dist/main.js'], { ...env, STREAMGATE_DATA_DIR: first.dir });
      const c = await cases(sg, first.secret, new Set([AUTHORIZE])); // c[0]: /hooks/authorize, the decision measured at each size
      procs.push({ n, sg, c, secret: first.secret, accountId, seedS, bytesPerToken });
    }
    // SCALE_ROUNDS rounds: throughput and p99 under that load, then p99 with requests spread at
    // half that rate; each figure is the median of its rounds. The first visit of a process
    // started right after a large seed gets a 3 s warm-up to settle.
    const loads = new Map<number, Result[]>();
    const halves = new Map<number, Result[]>();
    for (let round = 0; round < SCALE_ROUNDS; round++) {
      for (const p of procs) {
        const l = await load(p.sg, p.c[0], { warmup: round === 0 ? 3 : 1 });
        const h = await paced(p.sg, p.c[0], Math.max(1, Math.floor(l.rps / 2)), DURATION);
        loads.set(p.n, [...(loads.get(p.n) ?? []), l]);
        halves.set(p.n, [...(halves.get(p.n) ?? []), h]);
      }
    }
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
      const create = await load(sg, { name: 'create', method: 'POST', path: '/api/subscribe_token', headers: auth, body: JSON.stringify({ label: 'bench-create', streams: [{ streamName: 'cam1' }] }), expect: 200 }, { duration: 2 });
      const row: ScaleRow = {
        backend,
        tokens: p.n,
        seedSeconds: p.seedS,
        decision: { rps: median(ls.map((r) => r.rps)), p99: median(ls.map((r) => r.p99)) },
        decisionP99AtHalf: halfMid.p99,
        decisionServerP99AtHalf: halfMid.serverP99,
        decisionRounds: { rps: ls.map((r) => r.rps), p99: ls.map((r) => r.p99), p99AtHalf: hs.map((r) => r.p99), cpuUs: ls.map((r) => r.cpuUsExact ?? Number.NaN) },
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
    if (backend === 'redis') await flushAll(redis.url);
    meter?.close();
    await cluster?.stop();
  }
  // Each size against the smallest of its store: the ratios the flat-scale target reads.
  for (const r of rows) {
    const base = rows.find((b) => b.backend === r.backend && b.tokens === Math.min(...SIZES));
    if (!base) continue;
    r.vsBase = {
      tokens: base.tokens,
      rps: r.decision.rps / base.decision.rps,
      cpuUs: median(r.decisionRounds.cpuUs) / median(base.decisionRounds.cpuUs),
      p99AtHalf: r.decisionP99AtHalf / base.decisionP99AtHalf,
      serverP99AtHalf: r.decisionServerP99AtHalf !== undefined && base.decisionServerP99AtHalf ? r.decisionServerP99AtHalf / base.decisionServerP99AtHalf : undefined,
    };
  }
  console.log('\n| store | tokens | decision req/s | vs base | CPU µs/decision | vs base | p99 ms | p99 at half ms | vs base | server p99 at half ms | open stream req/s | create | read | list p1 | list p1000 | RSS MB | Redis B/token |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const x = (v: number | undefined) => (v === undefined ? '–' : `${v.toFixed(2)}×`);
  for (const r of rows) {
    console.log(
      `| ${r.backend} | ${r.tokens} | ${r.decision.rps} | ${x(r.vsBase?.rps)} | ${median(r.decisionRounds.cpuUs).toFixed(1)} | ${x(r.vsBase?.cpuUs)} | ${r.decision.p99} | ${r.decisionP99AtHalf} | ${x(r.vsBase?.p99AtHalf)} | ${r.decisionServerP99AtHalf !== undefined ? `≤ ${r.decisionServerP99AtHalf}` : '–'} | ${r.openStream.rps} | ${r.create.rps} | ${r.read.rps} | ${r.listPage1.rps} | ${r.listPage1000.rps} | ${r.rssMb.toFixed(0)} | ${r.redisBytesPerToken !== undefined ? r.redisBytesPerToken.toFixed(0) : '–'} |`,
    );
  }
  // Flat: /hooks/authorize req/s at every size at least SCALE_MIN of the smallest size's (the targets table repeats this).
  for (const r of rows) {
    if (!r.vsBase || r.vsBase.tokens === r.tokens) continue;
    console.log(`${r.backend}: /hooks/authorize req/s at ${r.tokens} tokens = ${x(r.vsBase.rps)} of ${r.vsBase.tokens} (p99 at half ${x(r.vsBase.p99AtHalf)}): ${r.vsBase.rps >= SCALE_MIN ? 'PASS' : 'FAIL'} (>= ${SCALE_MIN}×)`);
    console.log(`${r.backend}: CPU µs per /hooks/authorize at ${r.tokens} tokens = ${x(r.vsBase.cpuUs)} of ${r.vsBase.tokens}: ${r.vsBase.cpuUs <= SCALE_CPU_MAX ? 'PASS' : 'FAIL'} (<= ${SCALE_CPU_MAX}×)`);
  }
  return rows;
}

