// The fast tier (npm test) does not wait for real time: no sleep, no wall-clock bound, no real timer
// outside node:test mock timers (docs/architecture.md#tests). A test that must measure real time
// (a stall bound, a shutdown deadline, an expiry across processes) lives in a slower tier.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TIERS, declaredBudget } from '../../scripts/test-tiers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What in a fast-tier test file waits for, or measures, real time: one line per finding. */
export function realTimeUses(source: string): string[] {
  const found: string[] = [];
  const lines = source.split('\n');
  const mocked = /\.mock\.timers\.enable\(/.test(source);
  lines.forEach((line, i) => {
    const at = `line ${i + 1}`;
    const code = line.replace(/\/\/.*$/, '');
    if (/from\s+['"](node:)?timers\/promises['"]/.test(code)) found.push(`${at}: imports timers/promises (a sleep)`);
    if (/new Promise\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*setTimeout\(\s*\1\s*,/.test(code)) found.push(`${at}: a promise that resolves after a real delay (a sleep)`);
    if (/\bperformance\.now\(\)|\bprocess\.hrtime\b/.test(code)) found.push(`${at}: reads the wall clock to measure time`);
    if (!mocked && /\bset(Timeout|Interval)\(/.test(code)) found.push(`${at}: a real timer in a file that never enables node:test mock timers`);
  });
  return found;
}

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('the test tiers', () => {
  it('finds each kind of real-time wait in a source it is given', () => {
    const source = [
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'await new Promise((r) => setTimeout(r, 50));',
      'await new Promise(resolve => setTimeout(resolve, 5));',
      'const t0 = performance.now();',
      'setTimeout(() => done(), 5);',
      '// setTimeout(r, 5) in a comment is not code',
    ].join('\n');
    assert.deepEqual(realTimeUses(source), [
      'line 1: imports timers/promises (a sleep)',
      'line 2: a promise that resolves after a real delay (a sleep)',
      'line 2: a real timer in a file that never enables node:test mock timers',
      'line 3: a promise that resolves after a real delay (a sleep)',
      'line 3: a real timer in a file that never enables node:test mock timers',
      'line 4: reads the wall clock to measure time',
      'line 5: a real timer in a file that never enables node:test mock timers',
    ]);
    // under mock timers a timer is the test's own clock: only the sleep itself is refused
    assert.deepEqual(realTimeUses("t.mock.timers.enable({ apis: ['setTimeout'] });\nsetTimeout(() => fire(), 1000);\nt.mock.timers.tick(1000);"), []);
  });

  it('keeps every fast-tier test file off real time', () => {
    const found: string[] = [];
    for (const dir of TIERS.fast.dirs) {
      for (const f of files(path.join(ROOT, dir))) {
        if (f === fileURLToPath(import.meta.url)) continue; // its own examples above
        for (const use of realTimeUses(readFileSync(f, 'utf8'))) found.push(`${path.relative(ROOT, f)} ${use}`);
      }
    }
    assert.deepEqual(found, [], `fast-tier test files that wait for or measure real time (use node:test mock timers, or move the test to test/timing):\n${found.join('\n')}`);
  });

  it('reads a budget a file declares for itself', () => {
    assert.equal(declaredBudget('// what this tests\n// test-budget: 90s\nimport x from "y";'), 90);
    assert.equal(declaredBudget('import x from "y";'), undefined);
  });
});
