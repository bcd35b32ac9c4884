#!/usr/bin/env node
// Runs node's test runner (with tsx) over test files: `node scripts/run-tests.mjs [--tier=NAME] [path ...]`.
// Without paths it runs a tier's folders (scripts/test-tiers.mjs; `fast` by default, what `npm
// test` runs). It compiles the server into dist/ first (`tsc -p tsconfig.build.json`, a few
// seconds): the contract tests take the store suite by its package name, `streamgate/store-contract`,
// which resolves to the build, as it does for a backend outside the repository. Node 20's --test
// does not expand globs, so the files are collected here. Every run ends with the failures and a
// table of the files by duration, each against its budget; a file over budget fails the run.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TIERS, declaredBudget } from './test-tiers.mjs';

const args = process.argv.slice(2);
const tierArg = args.find((a) => a.startsWith('--tier='));
const tierName = tierArg ? tierArg.slice('--tier='.length) : 'fast';
const tier = TIERS[tierName];
if (!tier) {
  console.error(`run-tests: unknown tier '${tierName}'; the tiers: ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}
const roots = args.filter((a) => !a.startsWith('--'));
const extra = args.filter((a) => a.startsWith('--') && a !== tierArg);

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const given = roots.length ? roots : tier.dirs.filter((d) => existsSync(d));
const files = given.flatMap((r) => (statSync(r).isDirectory() ? collect(r, []) : [r]));
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const build = spawnSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.error('run-tests: the build failed (tsc -p tsconfig.build.json)');
  process.exit(build.status ?? 1);
}

// TAP to stdout as always; the failures alone and each file's duration to files read afterwards,
// so a failure or a slow file in a long run is found without searching the whole log.
const dir = mkdtempSync(path.join(tmpdir(), 'run-tests-'));
const failuresFile = path.join(dir, 'failures.txt');
const durationsFile = path.join(dir, 'durations.jsonl');
const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${new URL('./failures-reporter.mjs', import.meta.url).href}`,
  `--test-reporter-destination=${failuresFile}`,
  `--test-reporter=${new URL('./durations-reporter.mjs', import.meta.url).href}`,
  `--test-reporter-destination=${durationsFile}`,
];
const read = (f) => {
  try {
    return readFileSync(f, 'utf8');
  } catch {
    return '';
  }
};
// The duration table: every file, slowest first, with its budget (the tier's that was asked for,
// or, for files named, that of the first tier holding the file's folder).
const rel = (f) => path.relative(root, f);
const tierOf = (file) => Object.values(TIERS).find((t) => t.dirs.some((d) => file.startsWith(`${d}/`))) ?? tier;
/** A file's budget in seconds: its own, else its tier's. */
const budgetOf = (file) => declaredBudget(read(file)) ?? (tierArg ? tier : tierOf(rel(file))).budgetSeconds;
// files named run as carefully as the most careful of their tiers
const concurrency = tierArg || roots.length === 0 ? tier.concurrency : Math.min(...files.map((f) => tierOf(rel(path.resolve(f))).concurrency));
const started = Date.now();
// A test that hangs fails at the largest file budget of the run instead of holding it for ever.
const testTimeout = `--test-timeout=${Math.max(...files.map((f) => budgetOf(path.resolve(f)))) * 1000}`;
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, testTimeout, ...reporters, ...extra, ...files], {
  stdio: 'inherit',
  env: { ...process.env, ...tier.env },
});
const failed = read(failuresFile);
const timed = read(durationsFile)
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
rmSync(dir, { recursive: true, force: true });
if (failed.trim()) console.log(`\n# failed tests\n${failed}`);

const over = [];
const rows = timed
  .map((t) => {
    const budget = budgetOf(t.file);
    if (t.ms > budget * 1000) over.push(`${rel(t.file)}: ${(t.ms / 1000).toFixed(1)} s, over its budget of ${budget} s`);
    return { ...t, budget };
  })
  .sort((a, b) => b.ms - a.ms);
const what = tierArg || roots.length === 0 ? `tier ${tierName}: ${tier.about}` : `files named: ${roots.join(' ')}`;
console.log(`\n# durations (${what}; ${files.length} files, ${((Date.now() - started) / 1000).toFixed(1)} s in all, ${concurrency} files at a time)`);
console.log('#   seconds  budget  file');
for (const t of rows) console.log(`# ${(t.ms / 1000).toFixed(1).padStart(9)} ${String(t.budget).padStart(6)}s  ${rel(t.file)}${t.passed ? '' : '  (failed)'}`);
if (over.length > 0) console.log(`\n# files over their time budget\n${over.map((o) => `#   ${o}`).join('\n')}`);
process.exit(r.status !== 0 ? (r.status ?? 1) : over.length > 0 ? 1 : 0);
