// Reports: the endpoint table (Markdown, for docs/performance.md) and the JSON result file.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './config.js';
import type { Result } from './load.js';
import { CUT_ROWS, type CutFigures, cutMs, cutStats, type HalfFigures } from './goals.js';

/** One row per case and target, with the ratios against the floors of the same run. */
export function printEndpointTable(caseNames: string[], results: Result[], half: HalfFigures[]): unknown[] {
  const rows: unknown[] = [];
  console.log('\n| case | target | req/s | p50 ms | p99 ms | vs express | vs node | CPU µs/req | CPU vs express | CPU vs express born | p99 at half max | server p99 at half max | errors |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const name of caseNames) {
    const of = (t: string) => results.find((x) => x.case === name && x.target === t)!;
    const nf = of('node:http floor');
    const ef = of('express floor');
    const bf = of('express floor, born');
    for (const r of [nf, ef, bf, of('streamgate sqlite'), of('streamgate redis')]) {
      const h = half.find((x) => x.case === name && x.target === r.target);
      const row = {
        case: name,
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
        p99AtHalfRuns: h?.p99Runs,
        serverP99AtHalf: h?.serverP99,
        serverP99AtHalfRuns: h?.serverP99Runs,
        errors: r.errors + r.unexpected,
      };
      rows.push(row);
      console.log(
        `| ${name} | ${r.target} | ${r.rps} | ${r.p50} | ${r.p99} | ${(row.vsExpress * 100).toFixed(0)}% | ${(row.vsNode * 100).toFixed(0)}% | ${r.cpuUs ?? '–'} | ${row.cpuVsExpress ? `${(row.cpuVsExpress * 100).toFixed(0)}%` : '–'} | ${row.cpuVsExpressBorn ? `${(row.cpuVsExpressBorn * 100).toFixed(0)}%` : '–'} | ${h ? h.p99 : '–'} | ${h?.serverP99 !== undefined ? `≤ ${h.serverP99}` : '–'} | ${row.errors} |`,
      );
    }
  }
  return rows;
}

const CPU_TARGETS = ['node:http floor', 'express floor', 'express floor, born', 'streamgate sqlite', 'streamgate redis'];

/**
 * Server CPU time per request (µs), the floors and Streamgate side by side, one row per case,
 * with Streamgate's against the node:http floor's (how many times the floor's CPU it spends).
 */
export function printCpuTable(caseNames: string[], results: Result[]): unknown[] {
  const rows: unknown[] = [];
  console.log('\n| case | CPU µs/req: node:http floor | express floor | express floor, born | streamgate sqlite | streamgate redis | sqlite / node floor | redis / node floor |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const name of caseNames) {
    const us = Object.fromEntries(CPU_TARGETS.map((t) => [t, results.find((x) => x.case === name && x.target === t)?.cpuUs]));
    const node = us['node:http floor'];
    const times = (t: string) => (us[t] && node ? us[t]! / node : undefined);
    rows.push({ case: name, cpuUs: us, sqliteVsNode: times('streamgate sqlite'), redisVsNode: times('streamgate redis') });
    const x = (v: number | undefined) => (v === undefined ? '–' : `${v.toFixed(2)}×`);
    console.log(`| ${name} | ${CPU_TARGETS.map((t) => us[t] ?? '–').join(' | ')} | ${x(times('streamgate sqlite'))} | ${x(times('streamgate redis'))} |`);
  }
  return rows;
}

/**
 * The time to cut, one row per path and kind of revocation (docs/performance.md#time-to-cut), in
 * ms; the rows for the result file carry every sample.
 */
export function printCutTable(cuts: CutFigures[]): unknown[] {
  const rows: unknown[] = [];
  console.log('\n| path | revocation | client | until | n | p50 ms | p99 ms | max ms | bound | not cut | not taken |');
  console.log('|---|---|---|---|---:|---:|---:|---:|---|---:|---:|');
  for (const spec of CUT_ROWS) {
    const f = cuts.find((c) => c.path === spec.path && c.kind === spec.kind);
    if (!f) continue;
    if (f.notRun !== undefined) {
      rows.push({ ...spec, notRun: f.notRun });
      console.log(`| ${spec.path} | ${spec.kind} | ${spec.client} | ${spec.until} | – | – | – | – | ${spec.bound} | – | not run: ${f.notRun} |`);
      continue;
    }
    const st = cutStats(f);
    rows.push({ ...spec, ...st, missed: f.missed, errors: f.errors, outcomes: f.outcomes, samples: f.samples });
    console.log(
      `| ${spec.path} | ${spec.kind} | ${spec.client} | ${spec.until} | ${st.n} | ${cutMs(st.p50)} | ${cutMs(st.p99)} | ${cutMs(st.max)} | ${spec.bound} (${spec.boundMs} ms) | ${f.missed} | ${f.errors.length} |`,
    );
  }
  return rows;
}

/** Writes bench/results/<prefix><ISO time>.json and says where. */
export function writeResults(out: Record<string, unknown>, prefix = ''): void {
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  const file = path.join(ROOT, `bench/results/${prefix}${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`\nwritten: ${path.relative(ROOT, file)}`);
}
