// The benchmark's p99 targets (docs/performance.md#when-a-p99-target-is-not-judged): a server p99
// at half max within the target passes; over it, the floor paced at the same rate decides whether
// the product failed it (the floor meets it) or this machine cannot tell (the floor is over it too).
// And the issuer-JWT case's throughput target: at least half the node:http floor's req/s on each store.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ISSUER_JWT } from '../../bench/cases.js';
import { type HalfFigures, judge } from '../../bench/lib/goals.js';
import type { Result } from '../../bench/lib/load.js';

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
