// The shared steps of every decision, alone: credential resolution (store, optimistic cache, cache
// only), the bind step settling an evaluation, and the dependencies the Enforcer and the Lifecycle
// are given when they are built.
import { counting } from '../helpers/counting-store.js';
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SignJWT } from 'jose';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { newTokenRecord, tokenHash, type TokenRecord } from '../../src/domain/tokens.js';
import { TokenLookup } from '../../src/enforce/lookup.js';
import { resolveCredential, MAX_TOKEN_LENGTH, type Reading } from '../../src/admission/credential.js';
import { evaluate, type Evaluation } from '../../src/policy/evaluate.js';
import { applyBind } from '../../src/policy/bind.js';
import { Enforcer } from '../../src/admission/pipeline.js';
import { Lifecycle } from '../../src/lifecycle/lifecycle.js';
import type { UsageService } from '../../src/analytics/usage.js';
import { Metrics } from '../../src/observability/metrics.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { loadConfig } from '../../src/config/load.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');

const tempStore = () => new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-steps-')), 'db'), synchronous: 'NORMAL' });

const jwtFor = (parent: TokenRecord, key = parent.token) =>
  new SignJWT({ streaming: { tokenId: parent.id, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: [] } })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setExpirationTime(Math.floor(NOW / 1000) + 3600)
    .sign(new TextEncoder().encode(key));

describe('resolveCredential', () => {
  let inner: SqliteStore;
  let plain: TokenRecord;
  let binding: TokenRecord;

  before(async () => {
    inner = tempStore();
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date(NOW).toISOString(), secureViewer: false });
    plain = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'p', streams: [{ streamName: 'cam1' }] }, 'a'.repeat(64), NOW));
    binding = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 1 }, 'b'.repeat(64), NOW));
  });

  /** A fresh lookup over the store, with the store calls and cache-lookup counts it makes. */
  const fresh = () => {
    const { store, calls } = counting(inner, { reading: true });
    const lookup = new TokenLookup(store, { cacheMaxEntries: 100, cacheTtlMs: 0, storeTimeoutMs: 5000 });
    const counted: string[] = [];
    return { lookup, calls, counted, counter: { cacheLookup: (r: 'hit' | 'miss') => counted.push(r) } };
  };

  it('no token (absent or empty) is the none credential in every reading, without a store call', async () => {
    const { lookup, calls } = fresh();
    for (const reading of ['optimistic', 'fresh', 'cache'] as Reading[]) {
      for (const value of [undefined, '']) {
        assert.deepEqual(await resolveCredential(value, reading, { lookup }), { cred: { type: 'none' }, verified: true, ver: 0 }, `${reading} ${value}`);
      }
    }
    assert.deepEqual(calls, []);
  });

  it('a value too long is invalid with the store, and unvouched for from the cache alone, without a store call', async () => {
    const { lookup, calls } = fresh();
    const long = 'c'.repeat(MAX_TOKEN_LENGTH + 1);
    assert.deepEqual(await resolveCredential(long, 'optimistic', { lookup }), { cred: { type: 'invalid', detail: 'token too long' }, verified: true, hash: undefined, ver: 0 });
    assert.equal(await resolveCredential(long, 'cache', { lookup }), undefined);
    assert.deepEqual(calls, []);
  });

  it('an unknown value is invalid with its hash (counted a miss); the cache alone cannot vouch for it', async () => {
    const { lookup, counted, counter } = fresh();
    const value = 'd'.repeat(64);
    assert.deepEqual(await resolveCredential(value, 'optimistic', { lookup }, counter), {
      cred: { type: 'invalid', detail: 'unknown token' },
      verified: true,
      hash: tokenHash(value),
      ver: 0,
    });
    assert.deepEqual(counted, ['miss']);
    assert.equal(await resolveCredential(value, 'cache', { lookup }), undefined);
  });

  it('a plain token is read from the store, then from the cache after one version check; the cache alone serves it unverified', async () => {
    const { lookup, calls, counted, counter } = fresh();
    assert.equal(await resolveCredential(plain.token, 'cache', { lookup }), undefined, 'nothing cached yet');
    const ver = await inner.accountVersion('ACC001');
    const first = await resolveCredential(plain.token, 'optimistic', { lookup }, counter);
    assert.deepEqual(first, { cred: { type: 'token', token: plain }, verified: true, hash: tokenHash(plain.token), ver });
    calls.length = 0;
    assert.deepEqual(await resolveCredential(plain.token, 'optimistic', { lookup }, counter), first);
    assert.deepEqual(calls, ['accountVersion']);
    assert.deepEqual(counted, ['miss', 'hit']);
    calls.length = 0;
    assert.deepEqual(await resolveCredential(plain.token, 'cache', { lookup }), { cred: { type: 'token', token: plain }, verified: false, hash: tokenHash(plain.token), ver });
    assert.deepEqual(calls, []);
  });

  it('a cached bind-on-usage token is taken unchecked when optimistic (no store call), version-checked when fresh', async () => {
    const { lookup, calls, counted, counter } = fresh();
    const ver = await inner.accountVersion('ACC001');
    await resolveCredential(binding.token, 'optimistic', { lookup }, counter); // loads it
    calls.length = 0;
    assert.deepEqual(await resolveCredential(binding.token, 'optimistic', { lookup }, counter), {
      cred: { type: 'token', token: binding },
      verified: false,
      hash: tokenHash(binding.token),
      ver,
    });
    assert.deepEqual(calls, []);
    assert.deepEqual(await resolveCredential(binding.token, 'fresh', { lookup }, counter), {
      cred: { type: 'token', token: binding },
      verified: true,
      hash: tokenHash(binding.token),
      ver,
    });
    assert.deepEqual(calls, ['accountVersion']);
    assert.deepEqual(counted, ['miss', 'hit', 'hit']);
  });

  it('a self-signed JWT resolves to its parent; a bad signature, an unknown parent or a malformed JWT is invalid', async () => {
    const { lookup } = fresh();
    const ver = await inner.accountVersion('ACC001');
    const good = await jwtFor(plain);
    const r = await resolveCredential(good, 'optimistic', { lookup });
    assert.equal(r.cred.type, 'jwt');
    assert.equal(r.cred.type === 'jwt' && r.cred.parent.id, plain.id);
    assert.equal(r.cred.type === 'jwt' && r.cred.claims.streamName, 'cam1');
    assert.equal(r.verified, true);
    assert.equal(r.ver, ver);
    assert.equal(r.hash, undefined);
    assert.deepEqual(await resolveCredential(await jwtFor(plain, 'e'.repeat(64)), 'optimistic', { lookup }), {
      cred: { type: 'invalid', detail: 'bad signature' },
      verified: true,
      ver,
    });
    assert.deepEqual(await resolveCredential(await jwtFor({ ...plain, id: 999_999 }), 'fresh', { lookup }), {
      cred: { type: 'invalid', detail: 'unknown parent token' },
      verified: true,
      hash: undefined,
      ver: 0,
    });
    const algNone = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.`;
    assert.deepEqual(await resolveCredential(algNone, 'optimistic', { lookup }), {
      cred: { type: 'invalid', detail: 'not a signed JWT of at most 8192 characters' },
      verified: true,
      hash: undefined,
      ver: 0,
    });
  });

  it('from the cache alone, a JWT is judged only when its parent is cached; a malformed one is not judged', async () => {
    const { lookup } = fresh();
    const good = await jwtFor(binding);
    assert.equal(await resolveCredential(good, 'cache', { lookup }), undefined, 'parent not cached');
    await resolveCredential(good, 'optimistic', { lookup }); // caches the parent by id
    const r = await resolveCredential(good, 'cache', { lookup });
    assert.equal(r?.cred.type, 'jwt');
    assert.equal(r?.verified, false);
    assert.deepEqual((await resolveCredential(await jwtFor(binding, 'f'.repeat(64)), 'cache', { lookup }))?.cred, { type: 'invalid', detail: 'bad signature' });
    const algNone = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.`;
    assert.equal(await resolveCredential(algNone, 'cache', { lookup }), undefined);
  });
});

describe('applyBind', () => {
  const token: TokenRecord = { ...newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 2 }, 'b'.repeat(64), NOW), id: 7, rev: 1 };
  const pending = (): Evaluation =>
    evaluate(
      { action: 'subscribe', token: token.token, streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'hls' },
      { type: 'token', token },
      { now: NOW, secured: false, rtmpIpFilters: 'enforce', countryOf: () => undefined },
    );
  const last = (ev: Evaluation) => ev.rules[ev.rules.length - 1];

  it('evaluate() leaves the bind pending (the precondition of every case below)', () => {
    const ev = pending();
    assert.deepEqual(ev.bind, { token, address: '203.0.113.7' });
    assert.deepEqual(last(ev), { rule: 'bind on usage', reason: 'ip_not_allowed', result: 'pending', detail: 'binds to the first 2 address(es)' });
    assert.equal(ev.decision.reason, 'allowed');
  });

  for (const outcome of ['bound', 'already'] as const) {
    it(`'${outcome}': the rule passes with the detail, the decision stays allowed, nothing is left to bind, the input is unchanged`, () => {
      const ev = pending();
      const before = structuredClone(ev);
      const out = applyBind(ev, outcome, `detail for ${outcome}`);
      assert.deepEqual(out.decision, ev.decision);
      assert.equal(out.bind, undefined);
      assert.deepEqual(last(out), { rule: 'bind on usage', reason: 'ip_not_allowed', result: 'pass', detail: `detail for ${outcome}` });
      assert.deepEqual(out.rules.slice(0, -1), ev.rules.slice(0, -1));
      assert.notEqual(out.rules, ev.rules);
      assert.deepEqual(ev, before);
    });
  }

  it("'full': the rule fails and the decision becomes ip_not_allowed, keeping the token's fields", () => {
    const ev = pending();
    const before = structuredClone(ev);
    const out = applyBind(ev, 'full', 'every slot is bound to another address');
    assert.deepEqual(out.decision, {
      allowed: false,
      status: 403,
      reason: 'ip_not_allowed',
      message: 'Unauthorized: IP Address not allowed',
      streamName: 'cam1',
      accountId: 'ACC001',
      tokenId: 7,
      tokenRev: 1,
      // bind on usage is a rule of the connection's own admission (no director permission without director.admits)
      admissionRules: true,
    });
    assert.equal(out.bind, undefined);
    assert.deepEqual(last(out), { rule: 'bind on usage', reason: 'ip_not_allowed', result: 'fail', detail: 'every slot is bound to another address' });
    assert.deepEqual(ev, before);
  });

  it('an evaluation without a pending bind is a programming error', () => {
    const settled = applyBind(pending(), 'bound', 'bound 203.0.113.7');
    assert.throws(() => applyBind(settled, 'bound', 'again'), TypeError);
    const noBind = evaluate(
      { action: 'subscribe', streamName: 'cam1', accountId: 'ACC001', protocol: 'hls' },
      { type: 'none' },
      { now: NOW, secured: false, rtmpIpFilters: 'enforce', countryOf: () => undefined },
    );
    assert.throws(() => applyBind(noBind, 'already', 'x'), TypeError);
  });
});

describe('dependencies given at construction', () => {
  it('the Enforcer: a token-less request without an account belongs to the default account it was given; the configured one comes first', async () => {
    const store = tempStore();
    for (const id of ['ACC001', 'ACC002']) await store.createAccount({ id, name: id, createdOn: new Date(NOW).toISOString(), secureViewer: false });
    const enforcement = loadConfig({ env: {} }).enforcement;
    const make = (cfg: typeof enforcement, defaultAccountId?: string) =>
      new Enforcer(store, cfg, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }), { now: () => NOW, defaultAccountId });
    const ask = (e: Enforcer) => e.admit({ action: 'subscribe', streamName: 'cam1', protocol: 'hls' }, 'store', 'test');
    const none = await ask(make({ ...enforcement, defaultAccountId: '' }));
    assert.deepEqual([none.allowed, none.reason, none.accountId], [false, 'token_required', undefined]);
    const given = await ask(make({ ...enforcement, defaultAccountId: '' }, 'ACC001'));
    assert.deepEqual([given.allowed, given.reason, given.accountId], [true, 'allowed', 'ACC001']);
    const configured = await ask(make({ ...enforcement, defaultAccountId: 'ACC002' }, 'ACC001'));
    assert.deepEqual([configured.allowed, configured.reason, configured.accountId], [true, 'allowed', 'ACC002']);
  });

  it('the Lifecycle: usage signals reach the usage service it was built with', async () => {
    const seen: unknown[][] = [];
    const usage = { ingestSession: async (...args: unknown[]) => void seen.push(args) } as unknown as UsageService;
    const lifecycle = new Lifecycle(
      tempStore(),
      { queueSize: 10, liveTtlSeconds: 60, defaultAccountId: '' },
      new Metrics({ defaultMetrics: false }),
      pino({ level: 'silent' }),
      async () => null,
      usage,
      () => NOW,
    );
    lifecycle.signal({ kind: 'usage', caller: 'srs', sessionId: 's1', bytesOut: 100, bytesIn: 5 });
    await lifecycle.idle();
    assert.deepEqual(seen, [['srs', 's1', 100, 5, NOW]]);
  });
});
