#!/usr/bin/env node
// Runs node's test runner (with tsx) over test files: `node scripts/run-tests.mjs [dir ...]`.
// It compiles the server into dist/ first (`tsc -p tsconfig.build.json`, a few seconds): the
// contract tests take the store suite by its package name, `streamgate/store-contract`, which
// resolves to the build, as it does for a backend outside the repository. Node 20's --test does not
// expand globs, so the files are collected here.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const roots = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const extra = process.argv.slice(2).filter((a) => a.startsWith('--'));
const exclude = new Set(['e2e']);

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) {
      if (!exclude.has(name) || roots.includes(p)) collect(p, out);
    } else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = (roots.length ? roots : ['test']).flatMap((r) => (statSync(r).isDirectory() ? collect(r, []) : [r]));
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

// TAP to stdout as always, and the failures alone to a file printed after the summary, so a
// failure in a long run is found without searching the whole log.
const dir = mkdtempSync(path.join(tmpdir(), 'run-tests-'));
const failuresFile = path.join(dir, 'failures.txt');
const reporters = [
  '--test-reporter=tap',
  '--test-reporter-destination=stdout',
  `--test-reporter=${new URL('./failures-reporter.mjs', import.meta.url).href}`,
  `--test-reporter-destination=${failuresFile}`,
];
const r = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', ...reporters, ...extra, ...files],
  { stdio: 'inherit' },
);
let failed = '';
try {
  failed = readFileSync(failuresFile, 'utf8');
} catch {}
rmSync(dir, { recursive: true, force: true });
if (failed.trim()) console.log(`\n# failed tests\n${failed}`);
process.exit(r.status ?? 1);
