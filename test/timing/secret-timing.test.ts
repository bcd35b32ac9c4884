// Timing of secret comparison does not depend on how long a prefix the guess shares with the secret.
// Measured at the function level, where the comparison happens, because over HTTP on a shared 2-core
// VM the noise (scheduling, GC, the socket) is 100x the effect being looked for:
// - safeEqual (src/domain/secrets.ts), which compares the admin key and the hook secret: SHA-256 of
//   both sides, then timingSafeEqual of the digests;
// - AccountService.authenticate, the API-secret path: the presented secret is hashed and the hash
//   looked up in the store's index, so no byte of the secret is ever compared with the stored one.
// Each figure is the median over interleaved batches of a guess sharing 63 of 64 characters vs one
// sharing none, as a ratio; the measurement is repeated and the median ratio taken. The controls run
// an early-exit comparison of secrets of the same 64 characters through the same harness (called and
// awaited) and must land beyond the bound the real checks must stay within (on a 2-core VM: ratios
// above 3 for the controls, 0.85 to 1.15 for the real checks). The bound cannot see a leak below
// about 30% of the measured call's own cost (hashing, the store lookup, an awaited call's promise).
// Secrets and guesses come from a seeded generator (the test prints its seed; FC_SEED replays it).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { safeEqual } from '../../src/domain/secrets.js';
import { AccountService } from '../../src/management/accounts.js';
import { sqliteFactory } from '../helpers/stores.js';
import { soak } from '../helpers/soak.js';
import { seededRandom, type SeededRandom } from '../helpers/property.js';
import { SYSTEM_ACTOR } from '../../src/audit/actor.js';

const REPEATS = soak(5, 7);
const BATCHES = soak(40, 80);
const WARMUP = 10; // unmeasured batches of each guess first
const BOUND = 1.3; // the real checks pass when the median ratio is within [1/BOUND, BOUND]
const SECRET_LENGTH = 64; // what newSecret() makes: API secrets, token values

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const show = (rs: number[]) => rs.map((r) => r.toFixed(3)).join(', ');

interface Guesses {
  longPrefix: string;
  noPrefix: string;
}

/** Same length, no match: one shares all but the last character, the other not even the first. */
function guesses(secret: string, rnd: SeededRandom): Guesses {
  const flip = (c: string) => (c === '0' ? '1' : '0');
  return {
    longPrefix: secret.slice(0, -1) + flip(secret.slice(-1)),
    noPrefix: flip(secret[0]) + rnd.hex(secret.length - 1),
  };
}

// Results are folded in here so the compiler cannot drop a call whose answer is never read.
const sink = { bits: 0 };

/** One batch: `perBatch` calls with one guess, in ns. Two loops, so each stays monomorphic for the JIT. */
function batchCalled(run: (guess: string) => unknown, guess: string, perBatch: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < perBatch; i++) sink.bits ^= run(guess) ? 1 : 0;
  return Number(process.hrtime.bigint() - t0);
}
async function batchAwaited(run: (guess: string) => unknown, guess: string, perBatch: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < perBatch; i++) sink.bits ^= (await run(guess)) ? 1 : 0;
  return Number(process.hrtime.bigint() - t0);
}

/** Ratio (long prefix / no prefix) of the median batch time, batches interleaved to share the noise. */
async function ratio(run: (guess: string) => unknown, g: Guesses, perBatch: number): Promise<number> {
  const first = run(g.noPrefix);
  const batch = first instanceof Promise ? batchAwaited : batchCalled;
  await first;
  for (let i = 0; i < WARMUP; i++) {
    // the JIT settles on both guesses before anything is measured
    await batch(run, g.noPrefix, perBatch);
    await batch(run, g.longPrefix, perBatch);
  }
  const times: Record<keyof Guesses, number[]> = { longPrefix: [], noPrefix: [] };
  for (let b = 0; b < BATCHES; b++) {
    const order: Array<keyof Guesses> = b % 2 ? ['longPrefix', 'noPrefix'] : ['noPrefix', 'longPrefix'];
    for (const which of order) times[which].push(await batch(run, g[which], perBatch));
  }
  return median(times.longPrefix) / median(times.noPrefix);
}

/** REPEATS ratios, each with a fresh no-prefix guess. */
async function ratios(run: (guess: string) => unknown, secret: string, rnd: SeededRandom, perBatch: number): Promise<number[]> {
  const rs: number[] = [];
  for (let r = 0; r < REPEATS; r++) rs.push(await ratio(run, guesses(secret, rnd), perBatch));
  return rs;
}

/** The comparison a careless implementation would write: stops at the first differing character. */
function naiveEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

/** Also careless, with more work per step: decodes the hex secrets byte by byte, stops at the first differing byte. */
function decodingEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 2) if (parseInt(a.slice(i, i + 2), 16) !== parseInt(b.slice(i, i + 2), 16)) return false;
  return true;
}

describe('security: timing of secret comparison', () => {
  const factory = sqliteFactory();
  let accounts: AccountService;
  let apiSecret: string;
  before(async () => {
    await factory.setup();
    accounts = new AccountService(await factory.make());
    for (let i = 0; i < 50; i++) await accounts.create(`filler-${i}`, SYSTEM_ACTOR);
    apiSecret = (await accounts.create('target', SYSTEM_ACTOR)).apiSecret;
  });
  after(() => factory.teardown());

  // One control per way the harness calls: plain calls (as safeEqual is measured) and awaited ones (as
  // authenticate is). An awaited call costs 1 to 3 us under the test runner (promise bookkeeping),
  // which hides the ~60 ns a character-by-character comparison of 64 characters leaks: the awaited
  // control leaks the per-byte decoding work instead (several us), the smallest leak that awaited
  // measurement reliably shows on this 2-core VM. The called control sees the bare comparison.
  const controls: Array<[string, string, (secret: string) => (guess: string) => unknown]> = [
    ['called', 'character by character', (secret) => (g) => naiveEqual(g, secret)],
    ['awaited', 'decoding byte by byte', (secret) => async (g) => decodingEqual(g, secret)],
  ];
  for (const [how, what, leaky] of controls) {
    it(`the harness sees the leak of an early-exit comparison of ${SECRET_LENGTH}-character secrets, ${what}, ${how} (control)`, async (t) => {
      const rnd = seededRandom(); // each test its own sequence, so one run alone draws what it draws in the suite
      t.diagnostic(rnd.replay);
      const secret = rnd.hex(SECRET_LENGTH);
      const compare = leaky(secret);
      assert.equal(await compare(secret), true);
      assert.equal(await compare(guesses(secret, rnd).longPrefix), false);
      const rs = await ratios(compare, secret, rnd, 2000);
      t.diagnostic(`early-exit ratios ${show(rs)}`);
      assert.ok(median(rs) > BOUND, `early-exit comparison, ${how} (${rnd.replay}): long-prefix/no-prefix ratios ${show(rs)}, median not above ${BOUND}`);
    });
  }

  it('safeEqual (admin key, hook secret) takes as long whatever prefix the guess shares', async (t) => {
    const rnd = seededRandom(); // each test its own sequence, so one run alone draws what it draws in the suite
    t.diagnostic(rnd.replay);
    const secret = rnd.hex(SECRET_LENGTH);
    assert.equal(safeEqual(secret, secret), true);
    assert.equal(safeEqual(guesses(secret, rnd).longPrefix, secret), false);
    const rs = await ratios((g) => safeEqual(g, secret), secret, rnd, 200);
    t.diagnostic(`safeEqual ratios ${show(rs)}`);
    const m = median(rs);
    assert.ok(m > 1 / BOUND && m < BOUND, `safeEqual (${rnd.replay}): ratios ${show(rs)}`);
  });

  it('API secret authentication takes as long whatever prefix the guess shares', async (t) => {
    const rnd = seededRandom(); // each test its own sequence, so one run alone draws what it draws in the suite
    t.diagnostic(rnd.replay);
    assert.equal(apiSecret.length, SECRET_LENGTH);
    assert.equal((await accounts.authenticate(apiSecret))?.name, 'target');
    assert.equal(await accounts.authenticate(guesses(apiSecret, rnd).longPrefix), null);
    const rs = await ratios((g) => accounts.authenticate(g), apiSecret, rnd, 50);
    t.diagnostic(`authenticate ratios ${show(rs)}`);
    const m = median(rs);
    assert.ok(m > 1 / BOUND && m < BOUND, `authenticate (${rnd.replay}): ratios ${show(rs)}`);
  });
});
