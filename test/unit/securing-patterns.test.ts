// An account's securing patterns: compiled in bounded chunks in the background, only what changed,
// a newer set superseding an older one; token-less decisions fail closed until the set is ready.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import RE2 from 're2';
import { CHUNK_COST, SecuringPatterns } from '../../src/enforce/securing-patterns.js';
import { MAX_PATTERN_COST, patternCost } from '../../src/domain/pattern-cost.js';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp } from '../helpers/app.js';
import { SYSTEM_ACTOR } from '../../src/audit/actor.js';

/** The costliest pattern shape the cap accepts (the adversarial `(?i:[Ͱ-Ͽ]){497}`, with fewer repetitions). */
const heavy = (k: number, i: number) => `s${k}_${i}(?i:[Ͱ-Ͽ]){94}`;
const heavySet = (tokens: number, per = 100) => Array.from({ length: tokens * per }, (_, j) => heavy(Math.floor(j / per), j % per));
const settle = async (sp: SecuringPatterns, gen: number) => {
  for (let i = 0; i < 2000 && !sp.isReady(gen); i++) await new Promise((r) => setImmediate(r));
  assert.ok(sp.isReady(gen), 'rebuild finished');
};

describe('securing patterns', () => {
  it('the test pattern is as heavy as the cap allows', () => {
    const c = patternCost(heavy(19, 99));
    assert.ok(c <= MAX_PATTERN_COST && c > MAX_PATTERN_COST * 0.95, String(c));
  });

  it('a token-sized change compiles at once; a large set compiles in the background, one chunk per event-loop turn', async () => {
    const sp = new SecuringPatterns();
    const small = sp.want(['cam-[0-9]+', 'ev-.*']);
    assert.ok(sp.isReady(small));
    assert.deepEqual([sp.matches('cam-7'), sp.matches('ev-x'), sp.matches('open')], [true, true, false]);
    const all = heavySet(10);
    const gen = sp.want(all);
    assert.equal(sp.isReady(gen), false, 'not ready: decisions fail closed meanwhile');
    // Structure, not time (a chunk's compile time is calibrated by the benchmark): between two
    // turns of the event loop the rebuild compiles at most one chunk, so other requests run
    // between chunks.
    let turns = 0;
    let last = sp.compiles;
    for (; turns < 2000 && !sp.isReady(gen); turns++) {
      await new Promise((r) => setImmediate(r));
      assert.ok(sp.compiles - last <= 1, `${sp.compiles - last} chunks compiled in one turn`);
      last = sp.compiles;
    }
    assert.ok(sp.isReady(gen), 'rebuild finished');
    assert.ok(turns > sp.chunkCount, `${turns} turns for ${sp.chunkCount} chunks`);
    const perChunk = Math.floor(CHUNK_COST / patternCost(all[0]));
    assert.equal(sp.chunkCount, Math.ceil(all.length / perChunk));
    const one = new RE2(`^(?:${heavy(3, 7)})$`, 'u');
    const name = `s3_7${'α'.repeat(94)}`;
    assert.equal(one.test(name), true);
    assert.deepEqual([sp.matches(name), sp.matches(`s3_7${'α'.repeat(93)}`), sp.matches('cam-7')], [true, false, false]);
  });

  it('a change to one pattern recompiles only the chunks it touches', async () => {
    const sp = new SecuringPatterns();
    const all = heavySet(10);
    await settle(sp, sp.want(all));
    const before = sp.compiles;
    const next = all.map((p) => (p === heavy(4, 50) ? heavy(4, 500) : p));
    const gen = sp.want(next);
    await settle(sp, gen);
    // The chunk that held the old pattern, plus at most one under-filled chunk repacked with it.
    assert.ok(sp.compiles - before <= 2, `${sp.compiles - before} chunks compiled`);
    assert.deepEqual([sp.matches(`s4_50${'α'.repeat(94)}`), sp.matches(`s4_500${'α'.repeat(94)}`)], [false, true]);
    // Same set again (another token's label changed): nothing to compile, ready at once.
    const same = sp.compiles;
    assert.ok(sp.isReady(sp.want([...next].reverse())));
    assert.equal(sp.compiles, same);
  });

  it('a newer set supersedes a rebuild in flight: the older one never becomes ready', async () => {
    const sp = new SecuringPatterns();
    const a = sp.want(heavySet(10));
    await new Promise((r) => setImmediate(r));
    const b = sp.want(heavySet(5).map((p) => `b${p}`));
    await settle(sp, b);
    assert.equal(sp.isReady(a), false);
    assert.ok(sp.compiles <= 2 + Math.ceil(heavySet(5).length / Math.floor(CHUNK_COST / MAX_PATTERN_COST)), String(sp.compiles));
    assert.deepEqual([sp.matches(`bs1_1${'α'.repeat(94)}`), sp.matches(`s1_1${'α'.repeat(94)}`)], [true, false]);
  });
});

describe('token-less decisions while an account recompiles', () => {
  const factory = sqliteFactory();
  before(() => factory.setup());
  after(() => factory.teardown());

  it('refuse an open stream (fail closed) until the new patterns are ready, then answer exactly; a label change recompiles nothing, even after the cache ttl', async (ctx) => {
    // The cache's ttl is kept on performance.now (lru-cache, which rereads it once its setTimeout of
    // 1 ms has run): both are moved by hand past the ttl below.
    ctx.mock.timers.enable({ apis: ['setTimeout'] });
    const realNow = performance.now.bind(performance);
    let ahead = 0;
    ctx.mock.method(performance, 'now', () => realNow() + ahead);
    const t = await testApp(await factory.make(), { enforcement: { cacheTtlMs: 100 } });
    const { id } = await t.account();
    for (let k = 0; k < 20; k++) {
      const streams = Array.from({ length: 100 }, (_, i) => ({ streamName: heavy(k, i), isRegex: true }));
      await t.services.tokens.create(id, 'publish', { label: `t${k}`, streams, subscribeRequiresAuth: true }, SYSTEM_ACTOR);
    }
    const lookup = t.services.enforcer.lookup;
    // A decision that waited for the compile would answer exactly (open: false); it fails closed instead.
    assert.equal(await lookup.secured(id, 'open'), true, 'fail closed while compiling');
    assert.equal(await lookup.secured(id, `s19_99${'α'.repeat(94)}`), true);
    // The rebuild costs the patterns in slices and compiles a chunk per turn of the event loop: a
    // couple of hundred turns here, bounded well above that.
    let open = true;
    for (let turn = 0; open && turn < 5000; turn++) {
      await new Promise((r) => setImmediate(r));
      open = await lookup.secured(id, 'open');
    }
    assert.equal(open, false, 'open once compiled');
    assert.equal(await lookup.secured(id, `s19_99${'α'.repeat(94)}`), true);
    const first = (await t.services.store.securingTokens(id))[0];
    ahead += 150; // the account's entry is past its ttl
    ctx.mock.timers.tick(150);
    await t.services.tokens.update(id, 'publish', first.id, { label: 'bump' }, SYSTEM_ACTOR);
    assert.equal(await lookup.secured(id, 'open'), false, 'same patterns: answered at once');
  });
});
