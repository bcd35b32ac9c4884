// fast-check settings shared by the property and fuzz tests: a fixed seed under `npm test` (a
// failure names its seed and path, so it replays exactly), a fresh one under `npm run test:soak`.
// FC_SEED (and FC_PATH) replay a reported failure in either mode.
import type { Parameters } from 'fast-check';
import { SOAK, soak } from './soak.js';

export const FIXED_SEED = 20260901;

export function fcOptions<T>(fastRuns: number, soakRuns: number): Parameters<T> {
  const seed = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : SOAK ? Date.now() % 2147483647 : FIXED_SEED;
  const opts: Parameters<T> = { numRuns: soak(fastRuns, soakRuns), seed, includeErrorInReport: true };
  if (process.env.FC_PATH) opts.path = process.env.FC_PATH;
  return opts;
}
