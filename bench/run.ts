// npm run bench: Streamgate's decision endpoints against the floors of its platform, measured in
// one run on one machine, then the time from a revocation to the cut client (cuts.ts) and the
// scale run. Each server is its own process pinned to the same core; the load generator runs on
// the other. Results: tables, the targets judged (PASS/FAIL) and bench/results/*.json.
//   BENCH_DURATION (s, default 5)  BENCH_CONNECTIONS (default 32)  BENCH_SIZES (default 1000,100000,1000000)
//   BENCH_SKIP_SCALE=1  BENCH_ONLY_SCALE=1  BENCH_BACKENDS=sqlite,redis,cluster (scale run)  BENCH_REDIS_CPU (default 0, the load generator's)
//   BENCH_CASES=<comma list of case names or parts of names> (only those cases, e.g. BENCH_CASES=authorize,credential)
//   BENCH_SKIP_CUTS=1  BENCH_ONLY_CUTS=1  BENCH_CUT_REPEATS (samples per row, default 30)
//   BENCH_CUTS=nginx-rtmp,http,drivers (which time-to-cut parts)  BENCH_CUT_POLL_MS (an HTTP viewer's interval, default 50)
//   BENCH_CUT_REVALIDATE_SECONDS (both instances' sessions.http.revalidateSeconds in the HTTP rows, default 2)
// The pieces: lib/config (settings), lib/setup (pinning, build, machine, Redis), lib/targets
// (processes), lib/load (load generation), lib/stats (medians, server-side p99), lib/report
// (tables, result file), lib/goals (the targets), lib/stalls (the machine's own pauses, measured
// before and after), cases, cuts, scale. npm run bench:compare (compare.ts) compares two builds.
import type { ChildProcess } from 'node:child_process';
import { CASE_NAMES, cases, ISSUER_JWT } from './cases.js';
import { CONNECTIONS, CUT_POLL_MS, CUT_REPEATS, DURATION, PARTS, SIZES, selectCases, selectCutParts } from './lib/config.js';
import {
  CUT_DRIVER_TIMEOUT_MS,
  CUT_REVALIDATE_SECONDS,
  CUT_UPDATE_SECONDS,
  type CutFigures,
  type HalfFigures,
  judge,
  judgeCuts,
  P99_AT_HALF_MS,
  printTargets,
  THROUGHPUT,
} from './lib/goals.js';
import { type Case, load, pacedMedian, type Result, WRK } from './lib/load.js';
import type { Target } from './lib/targets.js';
import { printCpuTable, printCutTable, printEndpointTable, writeResults } from './lib/report.js';
import { buildCurrent, describeMachine, pinToLoadCore, startPinnedRedis } from './lib/setup.js';
import { rssMb, startProcess, streamgate } from './lib/targets.js';
import { cutRun } from './cuts.js';
import { type ScaleRow, scaleRun } from './scale.js';
import { prepareStore } from './seed.js';
import { describeStalls, measureStalls, type Stalls } from './lib/stalls.js';

/** The cases with throughput targets, and how many interleaved rounds their floor and stores run. */
const THROUGHPUT_CASES = new Set(THROUGHPUT.map((t) => t.case));
const THROUGHPUT_ROUNDS = 3;

/** The round with the median req/s, with every round's req/s beside it. */
function medianRound(rs: Result[]): Result {
  const sorted = [...rs].sort((a, b) => a.rps - b.rps);
  return { ...sorted[Math.floor(sorted.length / 2)], rounds: rs.map((x) => x.rps) };
}

/**
 * p99 at half the measured maximum: the median of three runs, as one run's p99 on this shared box
 * moves with whatever else the host does for a second. A server p99 over the target is read beside
 * the floor that does the least the request needs (node:http; with one Redis round trip when every
 * request writes to Redis) paced at the same rate, three runs too: a floor over the target as well
 * means this machine cannot tell whether Streamgate meets it (goals.ts, NOT JUDGED).
 */
async function atHalf(t: Target, c: Case, rate: number, floor: Target): Promise<HalfFigures> {
  const h: HalfFigures = await pacedMedian(t, c, rate, DURATION);
  if (h.serverP99 !== undefined && h.serverP99 <= P99_AT_HALF_MS) return h;
  const f = await pacedMedian(floor, { ...c, expect: 200 }, rate, DURATION);
  return { ...h, floor: { target: floor.name, serverP99: f.serverP99, serverP99Runs: f.serverP99Runs, rps: f.rps } };
}

async function main(): Promise<void> {
  pinToLoadCore();
  const selected = selectCases(CASE_NAMES); // before the build: a BENCH_CASES typo stops the run at once
  const cutParts = selectCutParts(); // a BENCH_CUTS typo too
  buildCurrent();
  const machine = describeMachine();
  const redis = await startPinnedRedis();
  const procs: ChildProcess[] = [];
  const results: Result[] = [];
  const half: HalfFigures[] = [];
  let caseNames: string[] = [];
  let scale: ScaleRow[] | undefined;
  let cuts: CutFigures[] | undefined;
  const out: Record<string, unknown> = { machine, duration: DURATION, connections: CONNECTIONS, at: new Date().toISOString() };
  // The machine's own pauses, before and after the measurements, reported beside the targets.
  const stalls: Stalls[] = [await measureStalls()];
  out.stalls = stalls;
  try {
    if (PARTS.endpoints) {
      const nodeFloor = await startProcess('node:http floor', [process.execPath, 'bench/servers/floor-node.mjs', '$PORT'], {});
      const expressFloor = await startProcess('express floor', [process.execPath, 'bench/servers/floor-express.mjs', '$PORT'], {});
      // The same express app served the way Streamgate serves its own (src/http/server.ts).
      const bornFloor = await startProcess('express floor, born', [process.execPath, 'bench/servers/floor-express.mjs', '$PORT', '--born'], {});
      // The floors a p99 over its target is read beside, at the same rate (atHalf)
      const timedFloor = await startProcess('node:http floor, timed', [process.execPath, 'bench/servers/floor-node.mjs', '$PORT', '--timed'], {});
      const redisFloor = await startProcess('node:http floor, timed, one Redis script per request', [process.execPath, 'bench/servers/floor-node.mjs', '$PORT', '--timed', '--redis', redis.url], {});
      const sqliteStore = await prepareStore({}, selected.has(ISSUER_JWT));
      const redisStore = await prepareStore({ REDIS_URL: redis.url, STREAMGATE_REDIS_KEYPREFIX: 'bench:' }, selected.has(ISSUER_JWT));
      const sqlite = await streamgate('streamgate sqlite', sqliteStore.env);
      const onRedis = await streamgate('streamgate redis', redisStore.env);
      procs.push(nodeFloor.proc, expressFloor.proc, bornFloor.proc, timedFloor.proc, redisFloor.proc, sqlite.t.proc, onRedis.t.proc);

      const sqliteCases = await cases(sqlite.t, sqlite.secret, selected, sqliteStore.issuer);
      const redisCases = await cases(onRedis.t, onRedis.secret, selected, redisStore.issuer);
      caseNames = sqliteCases.map((c) => c.name);
      console.log(`cases: ${caseNames.join('; ')}`);
      for (let i = 0; i < sqliteCases.length; i++) {
        const floorCase = { ...sqliteCases[i], expect: 200 };
        const nf = await load(nodeFloor, floorCase);
        const ef = await load(expressFloor, floorCase);
        const bf = await load(bornFloor, floorCase);
        const s = await load(sqlite.t, sqliteCases[i]);
        const r = await load(onRedis.t, redisCases[i]);
        if (THROUGHPUT_CASES.has(floorCase.name)) {
          // A throughput target compares req/s across processes measured one after another, and this
          // shared box moves a 5 s figure by a quarter from one run to the next: the floor and both
          // stores run three interleaved rounds, and each keeps its median round.
          const rounds = [[nf], [s], [r]];
          for (let round = 1; round < THROUGHPUT_ROUNDS; round++) {
            rounds[0].push(await load(nodeFloor, floorCase));
            rounds[1].push(await load(sqlite.t, sqliteCases[i]));
            rounds[2].push(await load(onRedis.t, redisCases[i]));
          }
          const [mnf, ms, mr] = rounds.map(medianRound);
          results.push(mnf, ef, bf, ms, mr);
        } else results.push(nf, ef, bf, s, r);
        // p99 at half of the measured maximum throughput: the median of three runs, as one run's
        // p99 on this shared box moves with whatever else the host does for a second.
        half.push(await atHalf(sqlite.t, sqliteCases[i], Math.max(1, Math.floor(s.rps / 2)), timedFloor));
        half.push(await atHalf(onRedis.t, redisCases[i], Math.max(1, Math.floor(r.rps / 2)), redisCases[i].storeWrite ? redisFloor : timedFloor));
      }
      console.log(`\nload: ${WRK ? 'wrk' : 'autocannon'}; p99 at half max: ${WRK ? 'wrk, requests spread at half the measured rate' : 'undici, paced'}`);
      out.endpoints = printEndpointTable(caseNames, results, half);
      console.log('\nCPU per request, the floors and Streamgate side by side:');
      out.cpu = printCpuTable(caseNames, results);
      out.rss = { sqliteMb: rssMb(sqlite.t.proc.pid!), redisMb: rssMb(onRedis.t.proc.pid!) };
      for (const p of [nodeFloor.proc, expressFloor.proc, bornFloor.proc, timedFloor.proc, redisFloor.proc, sqlite.t.proc, onRedis.t.proc]) p.kill('SIGTERM');
    }

    if (PARTS.cuts) {
      out.cutSettings = { repeats: CUT_REPEATS, pollMs: CUT_POLL_MS, notifyUpdateSeconds: CUT_UPDATE_SECONDS, revalidateSeconds: CUT_REVALIDATE_SECONDS, driverTimeoutMs: CUT_DRIVER_TIMEOUT_MS, parts: [...cutParts] };
      cuts = await cutRun(redis, cutParts);
      console.log('\nTime to cut, from the revocation to the client refused or disconnected:');
      out.cuts = printCutTable(cuts);
    }

    if (PARTS.scale) out.scale = scale = await scaleRun(redis);
  } finally {
    for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
    await redis.stop();
  }
  stalls.push(await measureStalls());
  const targets = [...judge(caseNames, results, half, scale, SIZES), ...judgeCuts(cuts)];
  out.targets = targets;
  printTargets(targets);
  console.log(`machine pauses: before, ${describeStalls(stalls[0])}; after, ${describeStalls(stalls[1])}`);
  writeResults(out);
}


main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
