// The benchmark's settings (environment) and where its processes run.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const DURATION = Number(process.env.BENCH_DURATION ?? 5);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
export const SIZES = (process.env.BENCH_SIZES ?? '1000,100000,1000000').split(',').map(Number).filter((n) => n > 0);
/** Servers run on this core; the load generator, this process and Redis on the other. */
export const SERVER_CPU = '1';
export const LOAD_CPU = '0';
export const taskset = (args: string[]) => (spawnSync('taskset', ['--version']).error ? args : ['taskset', '-c', SERVER_CPU, ...args]);

/**
 * Settings every Streamgate under test runs with. A viewer-session credential lives
 * sessions.http.credentialSeconds (60 s by default) and its session ends after idleSeconds without
 * a presentation; the credential case takes one cookie before the run and presents it for many
 * minutes (between its own load runs other cases run), so both are an hour here: one cookie lasts
 * the whole run and no request past half its life carries a refreshed credential.
 */
/** Node flags Streamgate runs with, as the image starts it (Dockerfile CMD; docs/operations.md#memory-and-pauses). */
export const STREAMGATE_NODE_FLAGS = ['--max-semi-space-size=64'];

export const STREAMGATE_ENV: Record<string, string> = {
  STREAMGATE_LOG_LEVEL: 'warn',
  STREAMGATE_SESSIONS_HTTP_CREDENTIALSECONDS: '3600',
  STREAMGATE_SESSIONS_HTTP_IDLESECONDS: '3600',
};

/**
 * What the run measures: the decision endpoints, the time to cut (bench/cuts.ts) and the scale run.
 * BENCH_ONLY_SCALE=1 and BENCH_ONLY_CUTS=1 run only that part (both: both); otherwise every part
 * runs but those BENCH_SKIP_CUTS=1 and BENCH_SKIP_SCALE=1 leave out.
 */
const ONLY_SCALE = Boolean(process.env.BENCH_ONLY_SCALE);
const ONLY_CUTS = Boolean(process.env.BENCH_ONLY_CUTS);
export const PARTS = {
  endpoints: !ONLY_SCALE && !ONLY_CUTS,
  cuts: ONLY_SCALE || ONLY_CUTS ? ONLY_CUTS : !process.env.BENCH_SKIP_CUTS,
  scale: ONLY_SCALE || ONLY_CUTS ? ONLY_SCALE : !process.env.BENCH_SKIP_SCALE,
};

/** Time to cut: samples per row (BENCH_CUT_REPEATS), and how often a viewer asks again (BENCH_CUT_POLL_MS). */
export const CUT_REPEATS = Number(process.env.BENCH_CUT_REPEATS ?? 30);
export const CUT_POLL_MS = Number(process.env.BENCH_CUT_POLL_MS ?? 50);
export const CUT_PARTS = ['nginx-rtmp', 'http', 'drivers'] as const;
export type CutPart = (typeof CUT_PARTS)[number];

/**
 * BENCH_CUTS: a comma list of the time-to-cut parts to run (nginx-rtmp, http, drivers); unset:
 * all. A name that is not a part stops the run, and so does a BENCH_CUT_REPEATS or
 * BENCH_CUT_POLL_MS that is not a count of samples or of ms.
 */
export function selectCutParts(spec = process.env.BENCH_CUTS): Set<CutPart> {
  if (!Number.isInteger(CUT_REPEATS) || CUT_REPEATS < 1) throw new Error(`BENCH_CUT_REPEATS: expected a whole number of samples, got ${process.env.BENCH_CUT_REPEATS}`);
  if (!(CUT_POLL_MS > 0)) throw new Error(`BENCH_CUT_POLL_MS: expected a positive number of ms, got ${process.env.BENCH_CUT_POLL_MS}`);
  const entries = (spec ?? '').split(',').map((e) => e.trim().toLowerCase()).filter((e) => e !== '');
  if (entries.length === 0) return new Set(CUT_PARTS);
  const out = new Set<CutPart>();
  for (const e of entries) {
    const part = CUT_PARTS.find((p) => p === e);
    if (part === undefined) throw new Error(`BENCH_CUTS: "${e}" names no part; the parts: ${CUT_PARTS.join(', ')}`);
    out.add(part);
  }
  return out;
}

/**
 * BENCH_CASES: a comma list of case names or parts of names (case-insensitive). An entry equal to
 * a case's whole name selects that case alone ("auth-request" is not "auth-request, session
 * credential"; a name holding commas is read whole when the list spells it out); any other entry
 * selects every case whose name contains it. Unset: every case. An entry that selects nothing
 * stops the run (a typo must not measure nothing quietly).
 */
export function selectCases(names: readonly string[], spec = process.env.BENCH_CASES): Set<string> {
  const norm = (v: string) => v.trim().toLowerCase().replace(/\s*,\s*/g, ',');
  const entries = (spec ?? '').split(',').map(norm);
  if (entries.every((e) => e === '')) return new Set(names);
  const out = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    if (entries[i] === '') continue;
    // the longest run of entries from here that spells a whole name
    let whole: string | undefined;
    for (let j = entries.length; j > i && whole === undefined; j--) {
      const candidate = entries.slice(i, j).join(',');
      whole = names.find((n) => norm(n) === candidate);
      if (whole !== undefined) i = j - 1;
    }
    if (whole !== undefined) {
      out.add(whole);
      continue;
    }
    const hits = names.filter((n) => norm(n).includes(entries[i]));
    if (hits.length === 0) throw new Error(`BENCH_CASES: "${entries[i]}" names no case; the cases: ${names.map((n) => `"${n}"`).join(', ')}`);
    for (const h of hits) out.add(h);
  }
  return out;
}
