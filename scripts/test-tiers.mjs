// The test tiers (docs/architecture.md#tests): which folders each runs and how long one of its
// files may take. `npm test` is the fast tier: in-process tests on node:test mock timers, no real
// sleep and no wall-clock bound (test/unit/test-tiers.test.ts enforces it). The other tiers start
// processes and real binaries or measure real time; CI runs them all.
//
// A file's budget is its tier's unless the file names its own in a comment among its first lines:
//   // test-budget: 90s
// A file over its budget fails the run, named in the duration table printed at the end.

/** @type {Record<string, { dirs: string[]; budgetSeconds: number; concurrency: number; env?: Record<string, string>; about: string }>} */
export const TIERS = {
  fast: {
    dirs: ['test/unit', 'test/unit-redis', 'test/contract', 'test/http', 'test/hooks', 'test/security', 'test/compat', 'test/drivers', 'test/properties', 'test/fuzz'],
    budgetSeconds: 60,
    concurrency: 2,
    about: 'unit, contract, HTTP and security tests, in process, on mock timers',
  },
  slow: {
    dirs: ['test/process', 'test/timing', 'test/faults', 'test/races'],
    budgetSeconds: 180,
    concurrency: 2,
    about: 'real processes, real time: start-up and shutdown, stalls, expiry, faults and races',
  },
  e2e: {
    dirs: ['test/e2e'],
    budgetSeconds: 300,
    concurrency: 2,
    about: 'real nginx, nginx-rtmp, ffmpeg and Chromium',
  },
  soak: {
    dirs: ['test/properties', 'test/fuzz', 'test/faults', 'test/races', 'test/security'],
    budgetSeconds: 300,
    concurrency: 2,
    env: { TEST_SOAK: '1' },
    about: 'the long variants of the property, fuzz, fault, race and security tests',
  },
};

const BUDGET = /^\s*\/\/\s*test-budget:\s*(\d+)\s*s\b/m;

/** A file's own budget (seconds) from its first lines, or undefined. */
export function declaredBudget(text) {
  const m = BUDGET.exec(text.slice(0, 2000));
  return m ? Number(m[1]) : undefined;
}
