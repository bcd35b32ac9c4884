// Comparing two builds (npm run bench:compare, bench/compare.ts): its settings, the judgement of
// one case's interleaved rounds, and the table. CPU time per request is what is compared: on a
// shared 2-core VM a 5 s req/s figure moves by a quarter from one run to the next, counting the
// time the host gives the core to others, which CPU time does not; CPU time moves too, so the table
// shows each build's spread beside the ratio (docs/decision-path.md#comparing-two-builds).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Verdict } from './goals.js';
import type { Result } from './load.js';
import { median } from './stats.js';

export interface CompareSettings {
  /** The other checkout (absolute), its dist/main.js built. */
  baseline: string;
  /** Interleaved rounds per case and store (baseline, current, baseline, current, ...). */
  rounds: number;
  /** The largest rise of CPU per request that passes: current / baseline <= 1 + maxRise. */
  maxRise: number;
  /** BENCH_TOGETHER=1: each round loads both builds at the same time, instead of one after the other. */
  together: boolean;
  /**
   * BENCH_BASELINE_ENV: settings the baseline's process gets besides the current's, as NAME=value
   * pairs separated by spaces: with BENCH_BASELINE=. the cost of one setting in one build
   * (BENCH_BASELINE_ENV=STREAMGATE_HISTORY_ENABLED=false: what the decision history costs).
   */
  baselineEnv: Record<string, string>;
}

/** BENCH_BASELINE (required), BENCH_ROUNDS (default 5), BENCH_MAX_RISE (default 0.05); a bad value stops the run with the setting named. */
export function compareSettings(env: NodeJS.ProcessEnv = process.env, exists: (file: string) => boolean = existsSync): CompareSettings {
  const given = env.BENCH_BASELINE?.trim();
  if (!given) throw new Error('BENCH_BASELINE is not set: name the checkout to compare with, its dist/ built (BENCH_BASELINE=../streamgate-before npm run bench:compare)');
  const baseline = path.resolve(given);
  const main = path.join(baseline, 'dist/main.js');
  if (!exists(main)) throw new Error(`BENCH_BASELINE=${given}: ${main} is absent; build that checkout first (cd ${baseline} && npm run build)`);
  const rounds = Number(env.BENCH_ROUNDS ?? 5);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`BENCH_ROUNDS=${env.BENCH_ROUNDS}: a whole number of rounds, 1 or more (default 5)`);
  const maxRise = Number(env.BENCH_MAX_RISE ?? 0.05);
  if (!Number.isFinite(maxRise) || maxRise < 0 || env.BENCH_MAX_RISE?.trim() === '') {
    throw new Error(`BENCH_MAX_RISE=${env.BENCH_MAX_RISE}: the largest rise of CPU per request that passes, a fraction of 0 or more (default 0.05, 5%)`);
  }
  const together = env.BENCH_TOGETHER?.trim() ?? '';
  if (together !== '' && together !== '0' && together !== '1') throw new Error(`BENCH_TOGETHER=${env.BENCH_TOGETHER}: 1 to load both builds at the same time in each round, 0 or unset for interleaved rounds`);
  const baselineEnv: Record<string, string> = {};
  for (const pair of (env.BENCH_BASELINE_ENV ?? '').split(/\s+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq < 1 || !/^STREAMGATE_[A-Z0-9_]+$/.test(pair.slice(0, eq))) throw new Error(`BENCH_BASELINE_ENV: '${pair}' is not STREAMGATE_<NAME>=<value>`);
    baselineEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { baseline, rounds, maxRise, together: together === '1', baselineEnv };
}

/** Where a build came from: its checkout, commit and whether it had uncommitted changes (unknown outside git). */
export function checkoutOf(root: string): { path: string; commit?: string; uncommitted?: boolean } {
  const dir = path.resolve(root);
  const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  const head = git('rev-parse', 'HEAD');
  if (head.status !== 0) return { path: dir };
  return { path: dir, commit: head.stdout.trim(), uncommitted: git('status', '--porcelain').stdout.trim() !== '' };
}

export interface BuildFigures {
  /** Median CPU µs per request over the rounds, and each round's. */
  cpuUs: number;
  /** Median req/s over the rounds, and each round's. */
  rps: number;
  rounds: { cpuUs: number[]; rps: number[] };
  /** Failed requests and answers other than the case expects, over all rounds. */
  wrongAnswers: number;
}

export interface Comparison {
  case: string;
  store: string;
  baseline: BuildFigures;
  current: BuildFigures;
  /** current / baseline median CPU µs per request. */
  ratio: number;
  verdict: Verdict;
  /** Why a FAIL failed. */
  why?: string;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

function figures(rs: Result[]): BuildFigures {
  const cpuUs = rs.map((r) => r.cpuUsExact ?? r.cpuUs ?? Number.NaN);
  const rps = rs.map((r) => r.rps);
  return { cpuUs: round2(median(cpuUs)), rps: median(rps), rounds: { cpuUs: cpuUs.map(round2), rps }, wrongAnswers: rs.reduce((n, r) => n + r.errors + r.unexpected, 0) };
}

/**
 * One case on one store: each build's median over its rounds and the ratio of the CPU medians.
 * FAIL when the ratio exceeds 1 + maxRise, when either build answered a request otherwise than the
 * case expects (its CPU per request would be another path's), or when CPU time could not be read.
 */
export function compareRounds(caseName: string, store: string, baseline: Result[], current: Result[], maxRise: number): Comparison {
  const b = figures(baseline);
  const c = figures(current);
  const ratio = c.cpuUs / b.cpuUs;
  const out: Comparison = { case: caseName, store, baseline: b, current: c, ratio: Math.round(ratio * 1000) / 1000, verdict: 'PASS' };
  if (b.wrongAnswers > 0 || c.wrongAnswers > 0) {
    out.verdict = 'FAIL';
    out.why = `unexpected answers or failed requests (baseline ${b.wrongAnswers}, current ${c.wrongAnswers}): the builds did not make the same decision`;
  } else if (!Number.isFinite(ratio) || ratio <= 0) {
    out.verdict = 'FAIL';
    out.why = 'no CPU time per request (the servers\' /proc/<pid>/stat could not be read)';
  } else if (ratio > 1 + maxRise) {
    out.verdict = 'FAIL';
    out.why = `CPU per request rose ${((ratio - 1) * 100).toFixed(1)}%, more than ${(maxRise * 100).toFixed(1)}%`;
  }
  return out;
}

/** How far a build's rounds spread: (max - min) / median. */
export const spreadOf = (f: BuildFigures): number => (Math.max(...f.rounds.cpuUs) - Math.min(...f.rounds.cpuUs)) / f.cpuUs;

const percent = (v: number) => `${(v * 100).toFixed(0)}%`;

/**
 * The comparison table (Markdown), one row per case and store, then how far one build's rounds
 * spread in the median row: a ratio nearer 1 than that cannot be told from the machine's own movement.
 */
export function printComparison(rows: Comparison[]): void {
  console.log('\n| case | store | baseline CPU µs/req | current CPU µs/req | current / baseline | baseline req/s | current req/s | CPU rounds spread (baseline / current) | verdict |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows) {
    console.log(
      `| ${r.case} | ${r.store} | ${r.baseline.cpuUs.toFixed(2)} | ${r.current.cpuUs.toFixed(2)} | ${r.ratio.toFixed(3)}× | ${r.baseline.rps} | ${r.current.rps} | ${percent(spreadOf(r.baseline))} / ${percent(spreadOf(r.current))} | ${r.verdict} |`,
    );
  }
  const typical = medianSpread(rows);
  if (typical !== undefined) console.log(`one build's CPU rounds spread by ${percent(typical)} in the median row: a ratio nearer 1 than that cannot be told from this machine's own movement`);
}

/** The median over the rows of the wider of each row's two spreads (undefined without rows). */
export function medianSpread(rows: Comparison[]): number | undefined {
  return rows.length === 0 ? undefined : median(rows.map((r) => Math.max(spreadOf(r.baseline), spreadOf(r.current))));
}
