// npm run bench:compare judges two builds by the median of their interleaved rounds' CPU time per
// request (docs/decision-path.md#comparing-two-builds): its settings stop a run that would compare
// nothing, and a case fails on a rise past the bound or on answers the case does not expect.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { compareRounds, compareSettings, medianSpread } from '../../bench/lib/compare-builds.js';
import type { Result } from '../../bench/lib/load.js';

const built = (file: string) => file === path.resolve('/srv/before/dist/main.js');

/** A round of `target` at `cpuUsExact` µs per request (cpuUs rounded, as load() reports it). */
const round = (target: string, cpuUsExact: number, rps: number, wrong = 0): Result => ({
  target,
  case: 'authorize (JSON)',
  rps,
  p50: 1,
  p99: 2,
  errors: 0,
  unexpected: wrong,
  cpuUs: Math.round(cpuUsExact),
  cpuUsExact,
});
const rounds = (target: string, us: number[], rps: number[]) => us.map((u, i) => round(target, u, rps[i]));

describe('bench:compare settings', () => {
  it('names BENCH_BASELINE when it is unset or blank', () => {
    for (const env of [{}, { BENCH_BASELINE: '  ' }]) {
      assert.throws(() => compareSettings(env, built), { message: /^BENCH_BASELINE is not set: name the checkout to compare with, its dist\/ built/ });
    }
  });

  it("names the baseline's dist/main.js when it is not built", () => {
    assert.throws(() => compareSettings({ BENCH_BASELINE: '/srv/elsewhere' }, built), {
      message: `BENCH_BASELINE=/srv/elsewhere: ${path.resolve('/srv/elsewhere/dist/main.js')} is absent; build that checkout first (cd ${path.resolve('/srv/elsewhere')} && npm run build)`,
    });
  });

  it('defaults to 5 rounds and a 5% rise, and takes both from the environment', () => {
    assert.deepEqual(compareSettings({ BENCH_BASELINE: '/srv/before' }, built), { baseline: path.resolve('/srv/before'), rounds: 5, maxRise: 0.05, together: false, baselineEnv: {} });
    assert.deepEqual(compareSettings({ BENCH_BASELINE: '/srv/before/', BENCH_ROUNDS: '7', BENCH_MAX_RISE: '0' }, built), { baseline: path.resolve('/srv/before'), rounds: 7, maxRise: 0, together: false, baselineEnv: {} });
    assert.deepEqual(compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_TOGETHER: '1' }, built), { baseline: path.resolve('/srv/before'), rounds: 5, maxRise: 0.05, together: true, baselineEnv: {} });
    assert.equal(compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_TOGETHER: '0' }, built).together, false);
  });

  it("gives the baseline's process the settings of BENCH_BASELINE_ENV, and refuses anything but STREAMGATE_ pairs", () => {
    assert.deepEqual(compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_BASELINE_ENV: ' STREAMGATE_HISTORY_ENABLED=false  STREAMGATE_X_Y=a=b ' }, built).baselineEnv, {
      STREAMGATE_HISTORY_ENABLED: 'false',
      STREAMGATE_X_Y: 'a=b',
    });
    for (const v of ['HISTORY=false', 'STREAMGATE_HISTORY', '=x', 'streamgate_x=1']) {
      assert.throws(() => compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_BASELINE_ENV: v }, built), { message: new RegExp(`^BENCH_BASELINE_ENV: '${v}' is not STREAMGATE_<NAME>=<value>`) });
    }
  });

  it('refuses a round count or a rise that is not one, naming the setting', () => {
    for (const v of ['0', '2.5', 'five', '']) assert.throws(() => compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_ROUNDS: v }, built), { message: new RegExp(`^BENCH_ROUNDS=${v}: a whole number of rounds, 1 or more`) });
    for (const v of ['yes', '2', 'true']) assert.throws(() => compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_TOGETHER: v }, built), { message: new RegExp(`^BENCH_TOGETHER=${v}: 1 to load both builds at the same time`) });
    for (const v of ['-0.01', '5%', '', 'Infinity']) assert.throws(() => compareSettings({ BENCH_BASELINE: '/srv/before', BENCH_MAX_RISE: v }, built), { message: new RegExp(`^BENCH_MAX_RISE=${v}: the largest rise of CPU per request that passes`) });
  });
});

describe('bench:compare judgement', () => {
  it("compares each build's median round, not its mean or its first, from the unrounded CPU figures", () => {
    // one slow round in the baseline (a spell of the host): the medians are 20.5 and 21.2 (1.034×); the
    // means would be 23.08 and 21.24 (0.92×), the first rounds 20.4 and 21.2 (1.039×)
    const b = rounds('baseline sqlite', [20.4, 33, 20.1, 20.5, 21.4], [9000, 6000, 9100, 8900, 8800]);
    const c = rounds('current sqlite', [21.2, 21.0, 21.3, 20.9, 21.8], [8700, 8800, 8600, 8900, 8500]);
    const row = compareRounds('authorize (JSON)', 'sqlite', b, c, 0.05);
    assert.deepEqual(row, {
      case: 'authorize (JSON)',
      store: 'sqlite',
      baseline: { cpuUs: 20.5, rps: 8900, rounds: { cpuUs: [20.4, 33, 20.1, 20.5, 21.4], rps: [9000, 6000, 9100, 8900, 8800] }, wrongAnswers: 0 },
      current: { cpuUs: 21.2, rps: 8700, rounds: { cpuUs: [21.2, 21, 21.3, 20.9, 21.8], rps: [8700, 8800, 8600, 8900, 8500] }, wrongAnswers: 0 },
      ratio: 1.034,
      verdict: 'PASS',
    });
  });

  it('passes a rise of exactly the bound and fails one past it, saying by how much', () => {
    const b = rounds('baseline redis', [100, 100, 100], [1, 1, 1]);
    assert.equal(compareRounds('x', 'redis', b, rounds('current redis', [105, 105, 105], [1, 1, 1]), 0.05).verdict, 'PASS');
    const row = compareRounds('x', 'redis', b, rounds('current redis', [105.5, 106, 105.6], [1, 1, 1]), 0.05);
    assert.equal(row.verdict, 'FAIL');
    assert.equal(row.ratio, 1.056);
    assert.equal(row.why, 'CPU per request rose 5.6%, more than 5.0%');
  });

  it('fails when either build answered otherwise than the case expects, however its CPU compares', () => {
    const b = rounds('baseline sqlite', [30, 30, 30], [1, 1, 1]);
    const c = [round('current sqlite', 12, 1), round('current sqlite', 12, 1, 40), round('current sqlite', 12, 1)];
    const row = compareRounds('x', 'sqlite', b, c, 0.05);
    assert.equal(row.verdict, 'FAIL');
    assert.equal(row.why, 'unexpected answers or failed requests (baseline 0, current 40): the builds did not make the same decision');
  });

  it("reads the machine's own movement as the median over rows of the wider build's spread", () => {
    const row = (b: number[], c: number[]) => compareRounds('x', 'sqlite', rounds('baseline sqlite', b, [1, 1, 1]), rounds('current sqlite', c, [1, 1, 1]), 0.05);
    // spreads (max - min) / median: 10% / 20%, 40% / 5%, 2% / 4%; the wider of each 20%, 40%, 4%
    const rows = [row([95, 100, 105], [90, 100, 110]), row([80, 100, 120], [98, 100, 103]), row([99, 100, 101], [98, 100, 102])];
    assert.equal(medianSpread(rows), 0.2);
    assert.equal(medianSpread([]), undefined);
  });

  it('fails when no CPU time could be read', () => {
    const b = rounds('baseline sqlite', [30, 30, 30], [1, 1, 1]);
    const c = rounds('current sqlite', [30, 30, 30], [1, 1, 1]).map((r) => ({ ...r, cpuUs: undefined, cpuUsExact: undefined }));
    const row = compareRounds('x', 'sqlite', b, c, 0.05);
    assert.equal(row.verdict, 'FAIL');
    assert.equal(row.why, "no CPU time per request (the servers' /proc/<pid>/stat could not be read)");
  });
});
