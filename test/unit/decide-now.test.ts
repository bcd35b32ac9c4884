// Enforcer.admit in memory mode: the decision from memory alone (no await) is the decision the store
// mode gives, and it declines (undefined) whenever memory cannot vouch for it, so the caller awaits the store mode.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SignJWT } from 'jose';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { newTokenRecord, type TokenRecord } from '../../src/domain/tokens.js';
import { Enforcer, type DecisionResult } from '../../src/admission/pipeline.js';
import { Metrics } from '../../src/observability/metrics.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { loadConfig } from '../../src/config/load.js';
import type { AccessRequest } from '../../src/policy/types.js';
import type { Store } from '../../src/store/store.js';

const NOW = Date.now();

/** A decision without its id (each decision gets its own). */
const withoutId = ({ decisionId: _id, ...rest }: DecisionResult) => rest;

describe('Enforcer.admit, memory mode', () => {
  let store: SqliteStore;
  let plain: TokenRecord;
  let binding: TokenRecord;
  let metrics: Metrics;
  let enforcer: Enforcer;
  const ask = (token: string | undefined, streamName = 'cam1'): AccessRequest => ({
    action: 'subscribe',
    token,
    streamName,
    accountId: token ? undefined : 'ACC001',
    clientIp: '203.0.113.7',
    protocol: 'hls',
  });

  before(async () => {
    store = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-now-')), 'db'), synchronous: 'NORMAL' });
    await store.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date(NOW).toISOString(), secureViewer: false });
    plain = await store.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'p', streams: [{ streamName: 'cam1' }] }, 'a'.repeat(64), NOW));
    binding = await store.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 1 }, 'b'.repeat(64), NOW));
    metrics = new Metrics({ defaultMetrics: false });
    enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({}), metrics, pino({ level: 'silent' }));
  });

  it('declines a token it has not cached, then gives what the store mode gives, allow and deny alike', async () => {
    assert.equal(enforcer.admit(ask(plain.token), 'memory', 'test'), undefined, 'nothing cached yet');
    const allowed = await enforcer.admit(ask(plain.token), 'store', 'test');
    assert.equal(allowed.allowed, true);
    const now = enforcer.admit(ask(plain.token), 'memory', 'test');
    assert.ok(now, 'cached and current: decided from memory');
    assert.deepEqual(withoutId(now), withoutId(allowed));
    assert.notEqual(now.decisionId, allowed.decisionId);
    const denied = await enforcer.admit(ask(plain.token, 'other'), 'store', 'test');
    assert.equal(denied.reason, 'stream_not_allowed');
    assert.deepEqual(withoutId(enforcer.admit(ask(plain.token, 'other'), 'memory', 'test') as DecisionResult), withoutId(denied));
  });

  it('counts what it decides as the store mode does: a full decision and a cache hit', async () => {
    await enforcer.admit(ask(plain.token), 'store', 'test');
    const read = async () => ({
      decisions: await metrics.registry.getSingleMetricAsString('streamgate_decisions_total'),
      cache: await metrics.registry.getSingleMetricAsString('streamgate_token_cache_total'),
    });
    const count = (text: string, line: string) => Number(text.split('\n').find((l) => l.startsWith(line))?.split(' ').pop() ?? 0);
    const before = await read();
    assert.ok(enforcer.admit(ask(plain.token), 'memory', 'test'));
    const after = await read();
    const full = 'streamgate_decisions_total{action="subscribe",adapter="test",result="allow",reason="allowed",kind="full"}';
    assert.equal(count(after.decisions, full), count(before.decisions, full) + 1);
    assert.equal(count(after.cache, 'streamgate_token_cache_total{result="hit"}'), count(before.cache, 'streamgate_token_cache_total{result="hit"}') + 1);
  });

  it('declines after a write moved the account version, until the store mode has read the token again', async () => {
    await enforcer.admit(ask(plain.token), 'store', 'test');
    assert.ok(enforcer.admit(ask(plain.token), 'memory', 'test'));
    const updated = await store.updateToken('ACC001', 'subscribe', plain.id, (t) => ({ next: { ...t, isActive: false }, clearBound: false }));
    assert.ok(updated);
    assert.equal(enforcer.admit(ask(plain.token), 'memory', 'test'), undefined, 'the cached record is no longer current');
    const d = await enforcer.admit(ask(plain.token), 'store', 'test');
    assert.equal(d.reason, 'token_disabled');
    assert.deepEqual(withoutId(enforcer.admit(ask(plain.token), 'memory', 'test') as DecisionResult), withoutId(d));
  });

  it('declines what only the store can settle: a bind to an address not seen bound, a self-signed JWT, an unknown or absent token', async () => {
    const elsewhere = { ...ask(binding.token), clientIp: '203.0.113.99' };
    assert.equal(enforcer.admit(ask(binding.token), 'memory', 'test'), undefined, 'bind on usage, nothing bound here yet');
    const bound = await enforcer.admit(ask(binding.token), 'store', 'test');
    assert.equal(bound.allowed, true);
    // the address this instance saw bound at the token's revision: from memory, the same answer
    assert.deepEqual(withoutId(enforcer.admit(ask(binding.token), 'memory', 'test') as DecisionResult), withoutId(bound));
    assert.equal(enforcer.admit(elsewhere, 'memory', 'test'), undefined, 'another address: only the bind step can tell');
    const jwt = await new SignJWT({ streaming: { tokenId: binding.id, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: [] } })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setExpirationTime(Math.floor(NOW / 1000) + 3600)
      .sign(new TextEncoder().encode(binding.token));
    await enforcer.admit(ask(jwt), 'store', 'test');
    assert.equal(enforcer.admit(ask(jwt), 'memory', 'test'), undefined, 'self-signed JWT');
    assert.equal((await enforcer.admit(ask('z'.repeat(64)), 'store', 'test')).reason, 'token_invalid');
    assert.equal(enforcer.admit(ask('z'.repeat(64)), 'memory', 'test'), undefined, 'unknown token');
    assert.equal(enforcer.admit(ask(undefined), 'memory', 'test'), undefined, 'no token');
  });

  it('declines on a store that keeps no version in process (Redis)', async () => {
    // the same store seen without accountVersionKnown, as a store that asks elsewhere is
    const remote = new Proxy(store, { get: (t, p, r) => (p === 'accountVersionKnown' ? undefined : Reflect.get(t, p, r)) }) as unknown as Store;
    const e = new Enforcer(remote, loadConfig({ env: {} }).enforcement, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const other = await store.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'r', streams: [{ streamName: 'cam1' }] }, 'c'.repeat(64), NOW));
    assert.equal((await e.admit(ask(other.token), 'store', 'test')).allowed, true);
    assert.equal(e.admit(ask(other.token), 'memory', 'test'), undefined);
  });
});
