// The benchmark's p99 targets (docs/performance.md#when-a-p99-target-is-not-judged): a server p99
// at half max within the target passes; over it, the floor paced at the same rate decides whether
// the product failed it (the floor meets it) or this machine cannot tell (the floor is over it too).
// And the issuer-JWT case's throughput target: at least half the node:http floor's req/s on each store.
// And the time to cut (docs/performance.md#time-to-cut): p50 and p99 within the path's bound, every
// revocation cut and every sample taken. And flat at scale: req/s and CPU µs per decision at each
// token count against the smallest, on every store the scale run measured.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ISSUER_JWT } from '../../bench/cases.js';
import { CUT_ROWS, type CutFigures, type HalfFigures, judge, judgeCuts, type ScaleFigures } from '../../bench/lib/goals.js';
import type { Result } from '../../bench/lib/load.js';
import { percentile } from '../../bench/lib/stats.js';

const CASE = 'mediamtx auth, limited token';

function half(serverP99: number | undefined, floor?: number, errors = 0): HalfFigures {
  return {
    target: 'streamgate redis',
    case: CASE,
    rps: 1700,
    p50: 1,
    p99: 6,
    errors,
    unexpected: 0,
    serverP99,
    serverP99Runs: [serverP99, serverP99, serverP99],
    p99Runs: [6, 6, 6],
    ...(floor === undefined ? {} : { floor: { target: 'node:http floor, timed, one Redis script per request', serverP99: floor, serverP99Runs: [floor, 3, floor], rps: 1690 } }),
  };
}

const row = (h: HalfFigures) => {
  const r = judge([CASE], [], [h], undefined, []).find((x) => x.store === 'redis' && x.target === `${CASE}: server p99 at half max (median of 3)`);
  assert.ok(r, 'the p99 row of the case on Redis');
  return r;
};

describe('bench targets: server p99 at half max', () => {
  it('passes at or under 2 ms without reading a floor', () => {
    assert.equal(row(half(2)).verdict, 'PASS');
    assert.equal(row(half(1.5)).verdict, 'PASS');
  });

  it('fails over 2 ms when the floor at the same rate meets 2 ms, and names the floor figure', () => {
    const r = row(half(5, 1.5));
    assert.equal(r.verdict, 'FAIL');
    assert.equal(r.measured, 5);
    assert.match(r.beside, /node:http floor, timed, one Redis script per request at the same rate \(1690 req\/s\): server p99 ≤ 1\.50 ms \(runs 1\.50 \/ 3\.00 \/ 1\.50 ms\)/);
  });

  it('is not judged over 2 ms when the floor at the same rate is over 2 ms too', () => {
    const r = row(half(10, 4));
    assert.equal(r.verdict, 'NOT JUDGED');
    assert.equal(r.measured, 10);
    assert.match(r.beside, /server p99 ≤ 4\.00 ms/);
  });

  it('fails over 2 ms with no floor figure, and on any wrong answer whatever the figures', () => {
    assert.equal(row(half(5)).verdict, 'FAIL');
    assert.equal(row(half(undefined)).verdict, 'FAIL');
    assert.equal(row(half(10, 4, 1)).verdict, 'FAIL');
    assert.equal(row(half(1, undefined, 2)).verdict, 'FAIL');
  });
});

describe('bench targets: the issuer-JWT case at half the node:http floor', () => {
  const result = (target: string, rps: number, unexpected = 0): Result => ({ target, case: ISSUER_JWT, rps, p50: 1, p99: 2, errors: 0, unexpected, cpuUs: 40 });
  const rows = (results: Result[]) =>
    judge([ISSUER_JWT], results, [], undefined, []).filter((r) => r.target === `${ISSUER_JWT}: req/s vs node:http floor`).map((r) => [r.store, r.measured, r.goal, r.verdict]);

  it('passes at 0.5× on each store and fails below it', () => {
    assert.deepEqual(rows([result('node:http floor', 40000), result('streamgate sqlite', 20000), result('streamgate redis', 19960)]), [
      ['sqlite', 0.5, '>= 0.5×', 'PASS'],
      ['redis', 0.499, '>= 0.5×', 'FAIL'],
    ]);
  });

  it('fails on an answer other than the 200 the case expects, whatever the ratio', () => {
    assert.deepEqual(rows([result('node:http floor', 40000), result('streamgate sqlite', 30000, 1), result('streamgate redis', 30000)]), [
      ['sqlite', 0.75, '>= 0.5×', 'FAIL'],
      ['redis', 0.75, '>= 0.5×', 'PASS'],
    ]);
  });

  it('is not run when the case was left out (BENCH_CASES)', () => {
    const notRun = judge([], [], [], undefined, []).filter((r) => r.target.startsWith(`${ISSUER_JWT}:`));
    assert.deepEqual(
      notRun.map((r) => [r.target, r.store, r.verdict]),
      [
        [`${ISSUER_JWT}: req/s vs node:http floor`, 'sqlite', 'NOT RUN'],
        [`${ISSUER_JWT}: req/s vs node:http floor`, 'redis', 'NOT RUN'],
        [`${ISSUER_JWT}: server p99 at half max (median of 3)`, 'sqlite', 'NOT RUN'],
        [`${ISSUER_JWT}: server p99 at half max (median of 3)`, 'redis', 'NOT RUN'],
      ],
    );
  });
});

describe('bench targets: time to cut', () => {
  const figures = (samples: number[], more: Partial<CutFigures> = {}): CutFigures => ({ path: 'nginx-rtmp', kind: 'token delete', samples, missed: 0, errors: [], outcomes: ['ffmpeg exit 1'], ...more });
  const row = (f: CutFigures | undefined) => {
    const r = judgeCuts(f ? [f] : undefined).find((x) => x.target === 'time to cut: nginx-rtmp, token delete (publisher)');
    assert.ok(r, 'the nginx-rtmp token delete row');
    return r;
  };
  /** 30 samples: 29 of `low` ms and one of `high` (the p99 of 30 is the largest). */
  const thirty = (low: number, high: number) => [...Array<number>(29).fill(low), high];

  it('takes the p99 by nearest rank: of 30 samples, the largest; of 200, the 198th', () => {
    assert.equal(percentile(thirty(10, 2000), 99), 2000);
    assert.equal(percentile(thirty(10, 2000), 50), 10);
    const ramp = Array.from({ length: 200 }, (_, i) => i + 1);
    assert.deepEqual([percentile(ramp, 99), percentile(ramp, 50)], [198, 100]);
    assert.ok(Number.isNaN(percentile([], 99)));
  });

  it('passes with p50 and p99 within notify_update_timeout 2 s + 1 s, and fails past it', () => {
    const pass = row(figures(thirty(1000, 3000)));
    assert.deepEqual([pass.verdict, pass.measured, pass.shown, pass.store], ['PASS', 3000, 'p50 1000 / p99 3000 ms', 'sqlite']);
    assert.match(pass.goal, /^p50, p99 ≤ 3000 ms \(notify_update_timeout 2 s \+ 1 s\), until ffmpeg disconnected$/);
    assert.match(pass.beside, /^n 30, p50 1000, p99 3000, max 3000 ms; seen: ffmpeg exit 1$/);
    assert.equal(row(figures(thirty(1000, 3001))).verdict, 'FAIL');
  });

  it('fails on a revocation not cut or a sample not taken, whatever the figures', () => {
    const missed = row(figures(thirty(900, 1000).slice(1), { missed: 1 }));
    assert.deepEqual([missed.verdict, missed.shown], ['FAIL', 'p50 900 / p99 ∞ ms']);
    assert.match(missed.beside, /1 not cut within 8000 ms/);
    const lost = row(figures(thirty(900, 1000), { errors: ['the publisher was not admitted within 15000 ms'] }));
    assert.equal(lost.verdict, 'FAIL');
    assert.match(lost.beside, /1 samples not taken: the publisher was not admitted/);
    assert.equal(row(figures([])).verdict, 'FAIL');
  });

  it('is not run when the time to cut or its part was left out, and says why', () => {
    assert.deepEqual([row(undefined).verdict, row(undefined).beside], ['NOT RUN', 'time to cut not run (BENCH_SKIP_CUTS, BENCH_ONLY_SCALE)']);
    const left = row(figures([], { notRun: 'BENCH_CUTS leaves out nginx-rtmp' }));
    assert.deepEqual([left.verdict, left.beside], ['NOT RUN', 'BENCH_CUTS leaves out nginx-rtmp']);
    assert.equal(judgeCuts(undefined).length, CUT_ROWS.length);
  });

  it('bounds each path as the product states it: 1 s on the instance that revoked, revalidateSeconds + 1 s on another, driverTimeoutMs for a media server', () => {
    const bounds = Object.fromEntries(CUT_ROWS.map((r) => [r.path, r.boundMs]));
    assert.deepEqual(bounds, { 'nginx-rtmp': 3000, 'http, same instance': 1000, 'http, another instance': 3000, mediamtx: 2000, srs: 2000, ome: 2000 });
  });
});

describe('bench targets: flat at scale', () => {
  const sized = (backend: ScaleFigures['backend'], tokens: number, rps: number, cpuUs: number[], base?: { tokens: number; rps: number; cpuUs: number }): ScaleFigures => ({
    backend,
    tokens,
    decision: { rps },
    decisionP99AtHalf: 1,
    decisionRounds: { rps: [rps], cpuUs },
    vsBase: base ? { tokens: base.tokens, rps: rps / base.rps, cpuUs: percentile(cpuUs, 50) / base.cpuUs, p99AtHalf: 1 } : { tokens, rps: 1, cpuUs: 1, p99AtHalf: 1 },
  });
  const rowsOf = (scale: ScaleFigures[]) => judge([], [], [], scale, [1000, 1000000]).filter((r) => r.target.startsWith('/hooks/authorize'));

  it('judges req/s and CPU µs per decision on the Cluster against its own smallest size', () => {
    const scale = [sized('cluster', 1000, 20000, [30, 30, 30]), sized('cluster', 1000000, 19000, [31, 34, 32], { tokens: 1000, rps: 20000, cpuUs: 30 })];
    const rows = rowsOf(scale).filter((r) => r.store === 'cluster');
    assert.deepEqual(
      rows.map((r) => [r.target, r.verdict, r.measured?.toFixed(3)]),
      [
        ['/hooks/authorize req/s, 1000000 vs 1000 tokens', 'PASS', '0.950'],
        ['/hooks/authorize server CPU µs per decision, 1000000 vs 1000 tokens', 'PASS', '1.067'],
      ],
    );
  });

  it('fails a size whose CPU µs per decision is over 1.1x the smallest', () => {
    const rows = rowsOf([sized('redis', 1000, 20000, [20]), sized('redis', 1000000, 20000, [23], { tokens: 1000, rps: 20000, cpuUs: 20 })]).filter((r) => r.store === 'redis');
    assert.deepEqual(
      rows.map((r) => r.verdict),
      ['PASS', 'FAIL'],
    );
  });

  it('says a store the scale run did not measure is not run', () => {
    const rows = rowsOf([sized('redis', 1000, 20000, [20])]);
    assert.deepEqual(
      rows.filter((r) => r.verdict === 'NOT RUN').map((r) => r.store),
      ['sqlite', 'cluster'],
    );
  });
});
