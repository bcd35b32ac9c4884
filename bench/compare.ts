// npm run bench:compare: how much the server's CPU time per decision moved between two builds, in
// one run on one machine (docs/decision-path.md#comparing-two-builds). The other checkout's
// Streamgate (BENCH_BASELINE, its dist/ built) and this one's run side by side on the servers' core,
// on SQLite and on Redis, with the same cases; each case runs BENCH_ROUNDS interleaved rounds
// (baseline, current, baseline, current, ...) and each build keeps its median. Exits non-zero when
// a case's CPU per request rose by more than BENCH_MAX_RISE.
//   BENCH_BASELINE=<checkout> (required)  BENCH_ROUNDS (default 5)  BENCH_MAX_RISE (default 0.05)
//   BENCH_TOGETHER=1: each round loads both builds at the same time (a machine whose core speed moves
//   between periods; docs/decision-path.md#comparing-two-builds)
//   BENCH_BASELINE_ENV="STREAMGATE_X=y ...": settings only the baseline's process gets (with BENCH_BASELINE=.,
//   one setting's cost in one build)
//   BENCH_SHARING=on: both builds' bench account has its token-sharing policy on (cases.ts)
//   BENCH_CASES, BENCH_DURATION, BENCH_CONNECTIONS, BENCH_NO_BUILD, BENCH_REDIS_CPU: as for npm run bench (run.ts)
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { CASE_NAMES, cases, ISSUER_JWT } from './cases.js';
import { checkoutOf, type Comparison, compareRounds, compareSettings, medianSpread, printComparison } from './lib/compare-builds.js';
import { CONNECTIONS, DURATION, ROOT, selectCases } from './lib/config.js';
import { load, type Result, WRK } from './lib/load.js';
import { writeResults } from './lib/report.js';
import { buildCurrent, describeMachine, pinToLoadCore, startPinnedRedis } from './lib/setup.js';
import { describeStalls, measureStalls } from './lib/stalls.js';
import { type BenchRedis, stopTarget, streamgate } from './lib/targets.js';
import { prepareStore } from './seed.js';

const STORES = ['sqlite', 'redis'] as const;

/** The two builds' Streamgates on one store, the same cases seeded in each, every case's interleaved rounds compared. */
async function compareStore(
  store: (typeof STORES)[number],
  redis: BenchRedis,
  baselineRoot: string,
  { rounds, maxRise, together, baselineEnv }: { rounds: number; maxRise: number; together: boolean; baselineEnv: Record<string, string> },
  selected: Set<string>,
): Promise<Comparison[]> {
  // Each build has a data directory of its own and, on Redis, a key prefix of its own (of the same length).
  // The issuer-JWT case's issuer is seeded into both by this checkout's code, before each starts.
  const env = (build: string): Record<string, string> => (store === 'redis' ? { REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: `bench-${build}:` } : {});
  const baselineStore = await prepareStore(env('b'), selected.has(ISSUER_JWT));
  const currentStore = await prepareStore(env('c'), selected.has(ISSUER_JWT));
  const baseline = await streamgate(`baseline ${store}`, { ...baselineStore.env, ...baselineEnv }, baselineRoot);
  const current = await streamgate(`current ${store}`, currentStore.env).catch(async (e: unknown) => {
    await stopTarget(baseline.t);
    throw e;
  });
  try {
    const baselineCases = await cases(baseline.t, baseline.secret, selected, baselineStore.issuer);
    const currentCases = await cases(current.t, current.secret, selected, currentStore.issuer);
    const rows: Comparison[] = [];
    for (let i = 0; i < currentCases.length; i++) {
      const b: Result[] = [];
      const c: Result[] = [];
      for (let round = 0; round < rounds; round++) {
        if (together) {
          // both at once: whatever the host does to the servers' core meanwhile, it does to both
          const [rb, rc] = await Promise.all([load(baseline.t, baselineCases[i]), load(current.t, currentCases[i])]);
          b.push(rb);
          c.push(rc);
        } else {
          b.push(await load(baseline.t, baselineCases[i]));
          c.push(await load(current.t, currentCases[i]));
        }
      }
      const row = compareRounds(currentCases[i].name, store, b, c, maxRise);
      console.log(`${row.case}, ${store}: CPU µs/req ${row.baseline.cpuUs} → ${row.current.cpuUs} (${row.ratio}×; rounds ${row.baseline.rounds.cpuUs.join(' ')} / ${row.current.rounds.cpuUs.join(' ')})`);
      rows.push(row);
    }
    return rows;
  } finally {
    await Promise.all([stopTarget(baseline.t), stopTarget(current.t)]);
  }
}

async function main(): Promise<void> {
  pinToLoadCore();
  // Before the build: a missing baseline or a BENCH_CASES typo stops the run at once.
  const { baseline, rounds, maxRise, together, baselineEnv } = compareSettings();
  const selected = selectCases(CASE_NAMES);
  const status = buildCurrent();
  if (status !== undefined && status !== 0) throw new Error(`npm run build of ${ROOT} failed (exit ${status}): the current build would be a stale dist/`);
  if (!existsSync(path.join(ROOT, 'dist/main.js'))) throw new Error(`${path.join(ROOT, 'dist/main.js')} is absent: build this checkout (npm run build) or unset BENCH_NO_BUILD`);
  const machine = describeMachine();
  const builds = { baseline: checkoutOf(baseline), current: checkoutOf(ROOT) };
  console.log(`baseline: ${JSON.stringify(builds.baseline)}${Object.keys(baselineEnv).length > 0 ? ` with ${JSON.stringify(baselineEnv)}` : ''}; current: ${JSON.stringify(builds.current)}; ${rounds} ${together ? 'simultaneous' : 'interleaved'} rounds per case, load: ${WRK ? 'wrk' : 'autocannon'}`);
  const out: Record<string, unknown> = { kind: 'compare', machine, duration: DURATION, connections: CONNECTIONS, rounds, together, maxRise, builds, baselineEnv, at: new Date().toISOString() };
  const load1m = [loadavg()[0]];
  const stalls = [await measureStalls()];
  const rows: Comparison[] = [];
  const redis = await startPinnedRedis();
  try {
    for (const store of STORES) rows.push(...(await compareStore(store, redis, baseline, { rounds, maxRise, together, baselineEnv }, selected)));
  } finally {
    await redis.stop();
  }
  stalls.push(await measureStalls());
  load1m.push(loadavg()[0]);
  Object.assign(out, { comparisons: rows, medianSpread: medianSpread(rows), stalls, loadAverage1m: load1m });
  console.log(`\nCPU µs per request, median of ${rounds} ${together ? 'simultaneous' : 'interleaved'} rounds; current / baseline passes up to ${1 + maxRise}×:`);
  printComparison(rows);
  console.log(`machine pauses: before, ${describeStalls(stalls[0])}; after, ${describeStalls(stalls[1])}`);
  console.log(`load average (1 min): ${load1m[0].toFixed(2)} before, ${load1m[1].toFixed(2)} after, on ${machine.cpus} CPUs`);
  writeResults(out, 'compare-');
  const failed = rows.filter((r) => r.verdict === 'FAIL');
  if (failed.length > 0) {
    console.error(`\nFAIL: ${failed.map((r) => `${r.case} on ${r.store}: ${r.why}`).join('; ')}`);
    process.exitCode = 1;
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `bench:compare: ${e.message}` : e);
  process.exit(1);
});
