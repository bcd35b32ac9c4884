// Fast or long variant of a randomized/fault test. `npm test` runs the fast one (bounded in time);
// `npm run test:soak` sets TEST_SOAK=1 and runs the long one (more iterations, longer loads).
export const SOAK = process.env.TEST_SOAK === '1';

/** The fast figure under `npm test`, the long one under `npm run test:soak`. */
export function soak<T>(fast: T, long: T): T {
  return SOAK ? long : fast;
}
