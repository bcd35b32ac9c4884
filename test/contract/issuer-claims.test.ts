// Issuers on Redis: an (iss, kid) is claimed outside every account's slot, before the record is
// written and confirmed after it (docs/architecture.md#issuer-claims). A write interrupted between
// the steps holds the (iss, kid) off for its deadline at most when it wrote no record, and never
// lets two issuers overlap; an entry its record no longer has is repaired by the next write that
// meets it. Two instances creating overlapping issuers at once: one succeeds.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { ISSUER_TAKING_MS } from '../../src/store/redis/issuers.js';
import { issuerIndexKey } from '../../src/domain/store-rules.js';
import { issuerFields } from '../../src/store-contract/issuers.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const ISS = 'https://idp.example.com/';
const CLAIMS = `iss:${issuerIndexKey(ISS)}`;

describe('issuer claims on Redis: writes interrupted between their steps', () => {
  let server: TestRedis;
  before(async () => {
    server = await startRedis();
  });
  after(() => server.stop());

  const opened: Redis[] = [];
  after(() => {
    for (const c of opened) c.disconnect();
  });
  async function connect(prefix: string): Promise<Redis> {
    const c = new Redis(server.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true });
    await c.connect();
    opened.push(c);
    return c;
  }

  /** A store on a fresh prefix with `now` as its clock, and a client of the same keys that runs its scripts. */
  async function setup(now: () => number) {
    const prefix = server.prefix();
    const s = new RedisStore(await connect(prefix), { now });
    const raw = await connect(prefix);
    new RedisStore(raw, { now }); // defines the scripts on `raw`
    const run = raw as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>;
    /** The entries of the iss's claims, as [account, id, key ids, held ('r') or taking ('w')]. */
    const entries = async (key = CLAIMS) => {
      const v = await raw.get(key);
      if (v === null) return [];
      return (JSON.parse(v) as { e: Array<{ a: string; i: string; k: string[] | object; r?: number }> }).e.map((e) => [
        e.a,
        Number(e.i),
        Array.isArray(e.k) ? e.k : [],
        e.r !== undefined ? 'r' : 'w',
      ]);
    };
    return { s, raw, run, entries };
  }

  it('a create that claimed and wrote no record: refused until its deadline, then taken over, and its confirmation answers MOVED', async () => {
    let now = NOW;
    const { s, run, entries } = await setup(() => now);
    assert.equal(await run.issuerClaim(CLAIMS, 'GHOST', '900', '["k1"]', 'w-ghost', 'n1', now, now + ISSUER_TAKING_MS, '', '[]'), 1);
    await assert.rejects(s.createIssuer('A', issuerFields(ISS, ['k1'])), { name: 'IssuerConflict', keyIds: ['k1'], sameAccount: false });
    now += ISSUER_TAKING_MS - 1;
    await assert.rejects(s.createIssuer('A', issuerFields(ISS, [])), { name: 'IssuerConflict', keyIds: ['k1'], sameAccount: false });
    await s.createIssuer('A', issuerFields(ISS, ['k2']));
    now += 1;
    const a = await s.createIssuer('B', issuerFields(ISS, ['k1']));
    assert.deepEqual(
      (await s.issuersOf(ISS)).map((i) => [i.accountId, i.keyIds]),
      [
        ['A', ['k2']],
        ['B', ['k1']],
      ],
    );
    assert.deepEqual(await entries(), [
      ['A', a.id - 1, ['k2'], 'r'],
      ['B', a.id, ['k1'], 'r'],
    ]);
    assert.equal(await run.issuerConfirm(CLAIMS, 'GHOST', '900', 'w-ghost', 1, 'n2', now), 0, 'MOVED: the interrupted write takes its record back');
  });

  it('a create that wrote its record and never confirmed: past the deadline the record holds the (iss, kid)', async () => {
    let now = NOW;
    const { s, raw, entries } = await setup(() => now);
    const half = await s.createIssuer('H', issuerFields(ISS, ['k1']));
    // the claims as the interrupted create left them: its taking, not a holding
    await raw.set(CLAIMS, JSON.stringify({ n: 'x', e: [{ a: 'H', i: String(half.id), k: ['k1'], w: 'w-half', u: now + ISSUER_TAKING_MS }] }));
    now += ISSUER_TAKING_MS;
    await assert.rejects(s.createIssuer('B', issuerFields(ISS, ['k1', 'k2'])), { name: 'IssuerConflict', keyIds: ['k1'], sameAccount: false });
    await assert.rejects(s.createIssuer('H', issuerFields(ISS, [])), { name: 'IssuerConflict', keyIds: ['k1'], sameAccount: true });
    assert.deepEqual(await s.issuersOf(ISS), [half]);
    assert.deepEqual(await entries(), [['H', half.id, ['k1'], 'w']], 'nothing dropped');
    // its own next write holds it, the taking past its deadline gone
    await s.updateIssuer('H', half.id, { label: 'confirmed' });
    assert.deepEqual(await entries(), [['H', half.id, ['k1'], 'r']]);
  });

  it('a delete that never let go of its claims: the holding whose record is gone refuses nothing and is dropped', async () => {
    const { s, raw, entries } = await setup(() => NOW);
    const gone = await s.createIssuer('A', issuerFields(ISS, ['k1']));
    // the delete script ran (record and list entry gone), the release did not
    await raw.del(`{a:A}:is:${gone.id}`);
    await raw.zrem('{a:A}:issuers', String(gone.id));
    assert.deepEqual(await s.issuersOf(ISS), []);
    const b = await s.createIssuer('B', issuerFields(ISS, []));
    assert.deepEqual(await s.issuersOf(ISS), [b]);
    assert.deepEqual(await entries(), [['B', b.id, [], 'r']]);
  });

  it('an update that moved to another iss and never let go of the first: the first is free, and repaired', async () => {
    const { s, raw, entries } = await setup(() => NOW);
    const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
    const before = await raw.get(CLAIMS);
    const moved = await s.updateIssuer('A', a.id, { issuer: `${ISS}v2` });
    assert.deepEqual(await entries(), [], 'let go of');
    await raw.set(CLAIMS, before!); // as if the step letting go had not run
    assert.deepEqual(await s.issuersOf(ISS), [], 'its record has another iss');
    assert.deepEqual(await s.issuersOf(`${ISS}v2`), [moved]);
    const b = await s.createIssuer('B', issuerFields(ISS, ['k1']));
    assert.deepEqual(await entries(), [['B', b.id, ['k1'], 'r']]);
    assert.deepEqual(await entries(`iss:${issuerIndexKey(`${ISS}v2`)}`), [['A', a.id, ['k1'], 'r']]);
  });

  it('an update keeps one holding per issuer: key ids changed, then back', async () => {
    const { s, entries } = await setup(() => NOW);
    const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
    await s.updateIssuer('A', a.id, { keyIds: ['k2', 'k3'] });
    assert.deepEqual(await entries(), [['A', a.id, ['k2', 'k3'], 'r']]);
    await s.createIssuer('B', issuerFields(ISS, ['k1']));
    await assert.rejects(s.updateIssuer('A', a.id, { keyIds: ['k1'] }), { name: 'IssuerConflict', keyIds: ['k1'], sameAccount: false });
    assert.deepEqual((await entries()).filter((e) => e[0] === 'A'), [['A', a.id, ['k2', 'k3'], 'r']], 'the refused taking is let go of');
  });

  it('two instances creating overlapping issuers at once: exactly one succeeds', async () => {
    const prefix = server.prefix();
    const one = new RedisStore(await connect(prefix), {});
    const two = new RedisStore(await connect(prefix), {});
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? one : two).createIssuer(`R${i}`, issuerFields(null, i % 3 ? ['m1', `m${i}`] : []))),
    );
    assert.equal(settled.filter((r) => r.status === 'fulfilled').length, 1);
    assert.equal((await one.issuersOf(null)).length, 1);
    assert.deepEqual(await two.issuersOf(null), await one.issuersOf(null));
  });
});
