// Timing of secret comparison does not depend on how long a prefix the guess shares with the secret.
// Measured at the function level, where the comparison happens, because over HTTP on a shared 2-core
// VM the noise (scheduling, GC, the socket) is 100x the effect being looked for:
// - safeEqual (src/domain/secrets.ts), which compares the admin key and the hook secret: SHA-256 of
//   both sides, then timingSafeEqual of the digests;
// - AccountService.authenticate, the API-secret path: the presented secret is hashed and the hash
//   looked up in the store's index, so no byte of the secret is ever compared with the stored one.
// Each figure is the median over interleaved batches of a secret sharing 63 of 64 characters vs one
// sharing none, as a ratio; the check is repeated and the median ratio taken. A naive early-exit
// comparison run through the same harness must show the effect, so the harness can see one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { safeEqual, newSecret } from '../../src/domain/secrets.js';
import { AccountService } from '../../src/management/accounts.js';
import { sqliteFactory } from '../helpers/stores.js';
import { soak } from '../helpers/soak.js';

const REPEATS = soak(5, 7);
const BATCHES = soak(40, 80);
const BOUND = 1.3; // generous: a leak of one compare per shared character is far larger

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Same length, no match: one shares all but the last character, the other not even the first. */
function guesses(secret: string): { longPrefix: string; noPrefix: string } {
  const flip = (c: string) => (c === '0' ? '1' : '0');
  return {
    longPrefix: secret.slice(0, -1) + flip(secret.slice(-1)),
    noPrefix: flip(secret[0]) + newSecret().slice(1),
  };
}

/** Ratio (long prefix / no prefix) of the median batch time, batches interleaved to share the noise. */
async function ratio(run: (guess: string) => unknown, g: { longPrefix: string; noPrefix: string }, perBatch: number): Promise<number> {
  const times = { longPrefix: [] as number[], noPrefix: [] as number[] };
  for (let i = 0; i < 5 * perBatch; i++) await run(i % 2 ? g.longPrefix : g.noPrefix); // warm up the JIT on both
  for (let b = 0; b < BATCHES; b++) {
    const order: Array<'longPrefix' | 'noPrefix'> = b % 2 ? ['longPrefix', 'noPrefix'] : ['noPrefix', 'longPrefix'];
    for (const which of order) {
      const guess = g[which];
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < perBatch; i++) await run(guess);
      times[which].push(Number(process.hrtime.bigint() - t0));
    }
  }
  return median(times.longPrefix) / median(times.noPrefix);
}

async function medianRatio(run: (guess: string) => unknown, secret: string, perBatch: number): Promise<number[]> {
  const rs: number[] = [];
  for (let r = 0; r < REPEATS; r++) rs.push(await ratio(run, guesses(secret), perBatch));
  return rs;
}

/** The comparison a careless implementation would write: stops at the first difference. */
function naiveEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false;
  return true;
}

describe('security: timing of secret comparison', () => {
  const factory = sqliteFactory();
  let accounts: AccountService;
  let apiSecret: string;
  before(async () => {
    await factory.setup();
    accounts = new AccountService(await factory.make());
    for (let i = 0; i < 50; i++) await accounts.create(`filler-${i}`);
    apiSecret = (await accounts.create('target')).apiSecret;
  });
  after(() => factory.teardown());

  it('the harness sees the leak of a naive early-exit comparison (control)', async (t) => {
    // A long secret, so the leak is visible above the harness's own per-call cost on a noisy machine.
    const secret = newSecret().repeat(64);
    const rs = await medianRatio((g) => naiveEqual(g, secret), secret, 200);
    t.diagnostic(`naive ratios ${rs.map((r) => r.toFixed(2)).join(', ')}`);
    assert.ok(median(rs) > 2, `naive comparison: long-prefix/no-prefix ratios ${rs.map((r) => r.toFixed(2)).join(', ')}`);
  });

  it('safeEqual (admin key, hook secret) takes as long whatever prefix the guess shares', async (t) => {
    const secret = newSecret();
    assert.equal(safeEqual(secret, secret), true);
    assert.equal(safeEqual(guesses(secret).longPrefix, secret), false);
    const rs = await medianRatio((g) => safeEqual(g, secret), secret, 200);
    t.diagnostic(`safeEqual ratios ${rs.map((r) => r.toFixed(3)).join(', ')}`);
    const m = median(rs);
    assert.ok(m > 1 / BOUND && m < BOUND, `safeEqual: ratios ${rs.map((r) => r.toFixed(3)).join(', ')}`);
  });

  it('API secret authentication takes as long whatever prefix the guess shares', async (t) => {
    assert.equal((await accounts.authenticate(apiSecret))?.name, 'target');
    assert.equal(await accounts.authenticate(guesses(apiSecret).longPrefix), null);
    const rs = await medianRatio((g) => accounts.authenticate(g), apiSecret, 50);
    t.diagnostic(`authenticate ratios ${rs.map((r) => r.toFixed(3)).join(', ')}`);
    const m = median(rs);
    assert.ok(m > 1 / BOUND && m < BOUND, `authenticate: ratios ${rs.map((r) => r.toFixed(3)).join(', ')}`);
  });
});
