// Calibrates the stream-pattern cost model: compiles a corpus (adversarial repetitions of Unicode
// and case-folded classes, nested repeats, big alternations) the way the service does and prints
// the median compile time against patternCost, the worst µs per cost unit, and what the cap allows.
//   npm run bench:patterns                   (BENCH_RUNS=9 to take more samples per pattern)
import os from 'node:os';
import RE2 from 're2';
import { MAX_PATTERN_COST, patternCost } from '../src/domain/pattern-cost.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const corpus: string[] = [
  'cam1',
  'x'.repeat(128),
  'cam-[0-9]+',
  'container1/.+',
  '(?i)event-[a-z0-9_-]{1,64}',
  's0_0(?i:[Ͱ-Ͽ]){497}',
  '(?i:[Ͱ-Ͽ]){95}',
  '(?i:[Ͱ-Ͽ]){100}',
  '[Ͱ-Ͽ]{497}',
  '(?i:[a-z]){497}',
  '(?i)k{300}',
  '[a-z]{497}',
  'a{1000}',
  '\\pL',
  '\\pL+',
  '\\pL{10}',
  '\\pL{400}',
  '(?i)\\pL{10}',
  '\\PL{3}',
  '[\\pL\\pN]{5}',
  '\\p{Greek}{20}',
  '(?i)\\p{Greek}{20}',
  '.{100}',
  '.{400}',
  '(?s).{400}',
  '[^a]{100}',
  '[\\x{80}-\\x{10FFFF}]{100}',
  '\\w{500}',
  '(?i)\\w{500}',
  '((a{10}){10}){10}',
  '((?i:[Ͱ-Ͽ]){10}){9}',
  '(a|b|c|d|e|f|g|h|i|j){100}',
  Array.from({ length: 60 }, (_, i) => `name${i}`).join('|'),
  `(?i)(${Array.from({ length: 20 }, (_, i) => `evt${i}-[a-z]+`).join('|')})`,
];

function compileMicros(p: string): number | string {
  const samples: number[] = [];
  for (let r = 0; r < RUNS + 2; r++) {
    const t0 = process.hrtime.bigint();
    try {
      new RE2(`^(?:${p})$`, 'u');
    } catch (e) {
      return (e as Error).message;
    }
    if (r >= 2) samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1];
}

console.log(`machine: ${os.cpus()[0]?.model ?? '?'} × ${os.cpus().length}, node ${process.version}, median of ${RUNS} compiles`);
console.log(`${'µs'.padStart(10)} ${'cost'.padStart(9)} ${'µs/unit'.padStart(8)}  pattern`);
let worst = 0;
let worstPattern = '';
let worstAll = 0;
for (const p of corpus) {
  const cost = patternCost(p);
  const us = compileMicros(p);
  const shown = p.length > 60 ? `${p.slice(0, 57)}...` : p;
  if (typeof us === 'string') {
    console.log(`${'refused'.padStart(10)} ${String(cost).padStart(9)} ${''.padStart(8)}  ${shown} (${us})`);
    continue;
  }
  const ratio = us / cost;
  // Tiny patterns measure the constant cost of a compile, not the per-unit one.
  if (cost >= 500 && cost <= MAX_PATTERN_COST && ratio > worst) [worst, worstPattern] = [ratio, p];
  if (cost >= 500) worstAll = Math.max(worstAll, ratio);
  const flag = cost > MAX_PATTERN_COST ? ' (over the cap)' : '';
  console.log(`${us.toFixed(1).padStart(10)} ${String(cost).padStart(9)} ${ratio.toFixed(3).padStart(8)}  ${shown}${flag}`);
}
console.log(`worst µs per cost unit, accepted patterns (cost 500..${MAX_PATTERN_COST}): ${worst.toFixed(3)} (${worstPattern})`);
console.log(`worst µs per cost unit, whole corpus (cost >= 500): ${worstAll.toFixed(3)} (larger programs compile slower per unit)`);
console.log(`cap ${MAX_PATTERN_COST}: the costliest accepted pattern compiles in at most ~${(worst * MAX_PATTERN_COST).toFixed(0)} µs`);
console.log(`cap for 1 ms at this rate: ${Math.floor(1000 / worst)}`);
