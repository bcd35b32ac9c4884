// Seeds for every randomized test: fast-check settings shared by the property and fuzz tests, and a
// seeded generator for tests that draw their own numbers. A fixed seed under `npm test` (a failure
// names its seed, so it replays exactly), a fresh one under `npm run test:soak`. FC_SEED (and
// FC_PATH for fast-check) replay a reported failure in either mode.
import type { Parameters } from 'fast-check';
import { SOAK, soak } from './soak.js';

export const FIXED_SEED = 20260901;

/** FC_SEED when set, else a fresh seed under test:soak, else FIXED_SEED. */
export function runSeed(): number {
  return process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : SOAK ? Date.now() % 2147483647 : FIXED_SEED;
}

export interface SeededRandom {
  readonly seed: number;
  /** A number in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** `length` lower-case hex characters. */
  hex(length: number): string;
  /** How to replay this sequence, for test output and assertion messages. */
  readonly replay: string;
}

/**
 * Random numbers for tests that draw their own (limits, delays, secrets), from runSeed() unless a
 * seed is given: the same seed gives the same sequence (mulberry32). Print `replay` so a failure
 * can be rerun with FC_SEED.
 */
export function seededRandom(seed = runSeed()): SeededRandom {
  if (!Number.isSafeInteger(seed)) throw new TypeError(`seed must be an integer, got ${seed}`);
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    seed,
    next,
    int,
    hex: (length) => Array.from({ length }, () => int(0, 15).toString(16)).join(''),
    replay: `seed ${seed} (replay with FC_SEED=${seed})`,
  };
}

export function fcOptions<T>(fastRuns: number, soakRuns: number): Parameters<T> {
  const seed = runSeed();
  const opts: Parameters<T> = { numRuns: soak(fastRuns, soakRuns), seed, includeErrorInReport: true };
  if (process.env.FC_PATH) opts.path = process.env.FC_PATH;
  return opts;
}
