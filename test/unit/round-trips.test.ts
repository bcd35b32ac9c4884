// A decision on a cached token makes at most one store round trip (counted through a proxy that
// records every store call the Enforcer makes), whether or not the account has country rules; a
// media server's admission of a token with session limits costs exactly one, the registry's
// admitSession, which also confirms the cached record (it checks the token's revision).
import { counting } from '../helpers/counting-store.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { Enforcer } from '../../src/admission/pipeline.js';
import { Metrics } from '../../src/observability/metrics.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { loadConfig } from '../../src/config/load.js';
import { newTokenRecord } from '../../src/domain/tokens.js';
import request from 'supertest';
import { testApp } from '../helpers/app.js';

describe('store round trips per decision', () => {
  it('one for a cached token, one for a cached bind-on-usage token (the bind), one for an open stream', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    const plain = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'p', streams: [{ streamName: 'cam1' }] }, 'a'.repeat(64), Date.now()));
    const binding = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 2 }, 'b'.repeat(64), Date.now()));
    const { store, calls } = counting(inner, { reading: true });
    const cfg = loadConfig({ env: {} }).enforcement;
    const enforcer = new Enforcer(store, cfg, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = (token: string | undefined) =>
      enforcer.admit({ action: 'subscribe', token, streamName: 'cam1', accountId: token ? undefined : 'ACC001', clientIp: '203.0.113.7', protocol: 'hls' }, 'store', 'test');

    for (const token of [plain.token, binding.token, undefined]) {
      assert.equal((await ask(token)).allowed, true); // warms the cache
      calls.length = 0;
      for (let i = 0; i < 10; i++) assert.equal((await ask(token)).allowed, true);
      assert.equal(calls.length, 10, `${token ? token[0] : 'open'}: ${calls.join(',')}`);
      assert.deepEqual([...new Set(calls)], [token === binding.token ? 'bindAddress' : 'accountVersion']);
    }
  });

  it('a bind-on-usage token at an address bound at its revision needs no bind step while memory vouches for the record; a write that unbinds brings it back', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    const binding = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 1 }, 'b'.repeat(64), Date.now()));
    const { store, calls } = counting(inner);
    const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = (clientIp: string) => {
      const d = enforcer.admit({ action: 'subscribe', token: binding.token, streamName: 'cam1', clientIp, protocol: 'hls' }, 'soon', 'test');
      return d instanceof Promise ? d.then((x) => [x.allowed, x.reason, 'awaited']) : [d.allowed, d.reason, 'from memory'];
    };
    const binds = () => calls.filter((c) => c === 'bindAddress').length;
    assert.deepEqual(await ask('203.0.113.7'), [true, 'allowed', 'awaited']); // reads the token, binds
    assert.equal(binds(), 1);
    calls.length = 0;
    for (let i = 0; i < 10; i++) assert.deepEqual(await ask('203.0.113.7'), [true, 'allowed', 'from memory']);
    assert.deepEqual(await ask('203.0.113.8'), [false, 'ip_not_allowed', 'awaited'], 'another address: the store decides');
    assert.deepEqual(calls, ['bindAddress']);
    // an update that clears the bound addresses moves the revision: the next decision binds again
    await inner.updateToken('ACC001', 'subscribe', binding.id, (t) => ({ next: { ...t, label: 'b2' }, clearBound: true }));
    calls.length = 0;
    assert.deepEqual(await ask('203.0.113.8'), [true, 'allowed', 'awaited']);
    assert.equal(binds(), 2, "the cached copy's bind finds the revision moved ('stale'); the fresh record's binds");
    assert.deepEqual(await ask('203.0.113.7'), [false, 'ip_not_allowed', 'awaited'], 'the address seen bound before the write is not taken from memory');
    assert.equal(binds(), 3);
  });

  // Regression (benchmark scale run, 1M tokens on Redis): every concurrent token-less decision on
  // a cold cache loaded the account's securing tokens itself; 32 such loads of 2,500 records
  // overran the store deadline and answered 503. Now one load serves the burst.
  it('a burst of token-less decisions on a cold cache loads the securing tokens once', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    await inner.createToken(newTokenRecord('publish', 'ACC001', { label: 's', streams: [{ streamName: 'secret' }], subscribeRequiresAuth: true }, 'c'.repeat(64), Date.now()));
    const { store, calls } = counting(inner, { reading: true });
    const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = (streamName: string) => enforcer.admit({ action: 'subscribe', streamName, accountId: 'ACC001', protocol: 'hls' }, 'store', 'test');
    const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => ask(i % 2 === 0 ? 'open' : 'secret')));
    assert.deepEqual(answers.map((d) => d.allowed), Array.from({ length: 32 }, (_, i) => i % 2 === 0));
    assert.equal(calls.filter((c) => c === 'viewerRuleTokens').length, 1);
    assert.equal(calls.filter((c) => c === 'getAccount').length, 1);
  });

  it('country rules cost no round trip on a cached decision: subscribe token (own lists or inherited) and token-less, live stream or not', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false, deniedCountries: ['DE'] });
    const now = Date.now();
    const pub = await inner.createToken(newTokenRecord('publish', 'ACC001', { label: 'p', streams: [{ streamName: 'cam[0-9]', isRegex: true }], deniedCountries: ['FR'] }, 'c'.repeat(64), now));
    const inherits = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 's', streams: [{ streamName: 'cam.*', isRegex: true }] }, 'd'.repeat(64), now));
    const own = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'o', streams: [{ streamName: 'cam.*', isRegex: true }], allowedCountries: ['FR'] }, 'e'.repeat(64), now));
    await inner.startLiveStream({ accountId: 'ACC001', streamName: 'cam1', tokenId: pub.id, feedId: 'f1', startedOn: new Date(now).toISOString(), caller: 'test' }, 3600);
    const { store, calls } = counting(inner, { reading: true });
    const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({ '192.0.2.1': 'FR', '192.0.2.2': 'DE', '192.0.2.3': 'US' }), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = (token: string | undefined, streamName: string, clientIp: string) =>
      enforcer.admit({ action: 'subscribe', token, streamName, accountId: token ? undefined : 'ACC001', clientIp, protocol: 'hls' }, 'store', 'test');

    // [token, stream, address, expected reason]: cam1 is live (publish token's deniedCountries),
    // cam2 is not (the matching publish token's), camX matches no publish token (the account default)
    const cases: Array<[string | undefined, string, string, string]> = [
      [undefined, 'cam1', '192.0.2.1', 'country_not_allowed'],
      [undefined, 'cam1', '192.0.2.3', 'allowed'],
      [undefined, 'cam2', '192.0.2.1', 'country_not_allowed'],
      [undefined, 'camX', '192.0.2.1', 'allowed'],
      [undefined, 'camX', '192.0.2.2', 'country_not_allowed'],
      [inherits.token, 'cam1', '192.0.2.1', 'country_not_allowed'],
      [inherits.token, 'cam1', '192.0.2.2', 'allowed'],
      [inherits.token, 'camX', '192.0.2.2', 'country_not_allowed'],
      [own.token, 'cam1', '192.0.2.1', 'allowed'],
      [own.token, 'cam1', '192.0.2.3', 'country_not_allowed'],
    ];
    for (const [token, stream, ip, reason] of cases) {
      const name = `${token ? token[0] : 'open'} ${stream} ${ip}`;
      assert.equal((await ask(token, stream, ip)).reason, reason, name); // warms the caches
      calls.length = 0;
      for (let i = 0; i < 10; i++) assert.equal((await ask(token, stream, ip)).reason, reason, name);
      assert.deepEqual(calls, Array(10).fill('accountVersion'), name);
    }
    // A bind-on-usage token skips the version read only while its account has no country rules
    // (its cached copy cannot tell a change of the account's lists): here the read comes back.
    const binding = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 2 }, 'f'.repeat(64), now));
    assert.equal((await ask(binding.token, 'cam1', '192.0.2.3')).reason, 'allowed');
    calls.length = 0;
    for (let i = 0; i < 10; i++) assert.equal((await ask(binding.token, 'cam1', '192.0.2.3')).reason, 'allowed');
    assert.deepEqual(calls, Array(10).fill(['accountVersion', 'bindAddress']).flat());
  });

  it('a stream going live or ending moves the account version, so the next decision holds viewers to the new lists', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    const now = Date.now();
    const fr = await inner.createToken(newTokenRecord('publish', 'ACC001', { label: 'fr', streams: [{ streamName: 'cam1' }], deniedCountries: ['FR'] }, 'c'.repeat(64), now));
    await inner.createToken(newTokenRecord('publish', 'ACC001', { label: 'de', streams: [{ streamName: 'cam1' }], deniedCountries: ['DE'] }, 'd'.repeat(64), now));
    const { store, calls } = counting(inner, { reading: true });
    const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({ '192.0.2.1': 'FR', '192.0.2.2': 'DE' }), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = async (clientIp: string) => (await enforcer.admit({ action: 'subscribe', streamName: 'cam1', accountId: 'ACC001', clientIp, protocol: 'hls' }, 'store', 'test')).reason;
    // not live: both publish tokens' lists apply
    assert.deepEqual([await ask('192.0.2.1'), await ask('192.0.2.2')], ['country_not_allowed', 'country_not_allowed']);
    const before = await inner.accountVersion('ACC001');
    await inner.startLiveStream({ accountId: 'ACC001', streamName: 'cam1', tokenId: fr.id, feedId: 'f1', startedOn: new Date(now).toISOString(), caller: 'test' }, 3600);
    assert.equal(await inner.accountVersion('ACC001'), before + 1);
    // live by the FR-denying token: only its lists
    calls.length = 0;
    assert.deepEqual([await ask('192.0.2.1'), await ask('192.0.2.2')], ['country_not_allowed', 'allowed']);
    // the account's entry is loaded again at the new version: its settings, viewer-rule tokens and
    // kept secured streams in parallel, then the stream's live entry
    assert.deepEqual(calls, ['accountVersion', 'getAccount', 'viewerRuleTokens', 'securedStreams', 'getLiveStream', 'accountVersion']);
    // the same token starting the stream again changes nothing a viewer sees: no version move
    await inner.startLiveStream({ accountId: 'ACC001', streamName: 'cam1', tokenId: fr.id, feedId: 'f2', startedOn: new Date(now).toISOString(), caller: 'test' }, 3600);
    assert.equal(await inner.accountVersion('ACC001'), before + 1);
    await inner.endLiveStream('ACC001', 'cam1');
    assert.equal(await inner.accountVersion('ACC001'), before + 2);
    assert.deepEqual([await ask('192.0.2.1'), await ask('192.0.2.2')], ['country_not_allowed', 'country_not_allowed']);
  });

  describe('a media-server admission (SRS on_play of a connection it names)', () => {
    async function srsApp() {
      const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
      const { store, calls } = counting(inner);
      const t = await testApp(store);
      const acct = await t.account();
      const token = async (body: Record<string, unknown>) => {
        const r = await request(t.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'rt', streams: [{ streamName: 'cam1' }], ...body });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body.data.token as string;
      };
      let n = 0;
      const play = async (value: string) => {
        const r = await request(t.app)
          .post('/hooks/srs')
          .send({ action: 'on_play', server_id: 'srs1', client_id: `c${++n}`, ip: '203.0.113.7', app: 'live', stream: 'cam1', param: `?token=${value}`, tcUrl: 'rtmp://edge/live' });
        assert.deepEqual([r.status, r.body], [200, { code: 0 }]);
      };
      return { t, calls, token, play };
    }

    it('the decision: a token without limits costs no round trip on the embedded store (its version is in memory); with maxConcurrentSessions or maxUses only admitSession (it checks the token revision)', async () => {
      const { t, calls, token, play } = await srsApp();
      try {
        // What follows the answer (the lifecycle's registration and events) is left out: only the decision is counted.
        const lifecycle = t.services.lifecycle;
        const queued: unknown[] = [];
        lifecycle.signal = (sig) => void queued.push(sig);
        // decided from memory without an await: the store's in-memory version (not counted), no round trip
        const cases: Array<[string, Record<string, unknown>, string[]]> = [
          ['no limits', {}, []],
          ['maxConcurrentSessions', { maxConcurrentSessions: 1000 }, ['admitSession']],
          ['maxUses', { maxUses: 1000 }, ['admitSession']],
        ];
        for (const [name, body, perDecision] of cases) {
          const value = await token(body);
          await play(value); // warms the cache
          calls.length = 0;
          for (let i = 0; i < 10; i++) await play(value);
          assert.deepEqual(calls, Array(10).fill(perDecision).flat(), name);
        }
        assert.equal(queued.length, 33, 'every admission still signals its session start');
      } finally {
        await t.services.close();
      }
    });

    it('the whole admission, lifecycle included: a limited token costs one store call fewer than one without limits (admitSession in place of startSession, and no token read after it)', async () => {
      const { t, calls, token, play } = await srsApp();
      try {
        const perAdmission = async (value: string) => {
          await play(value);
          await t.services.lifecycle.idle();
          calls.length = 0;
          await play(value);
          await t.services.lifecycle.idle();
          // version reads left out: an unlimited token is decided from the in-memory version, a
          // limited one's cached record is confirmed by its admission step
          return calls.filter((c) => c !== 'accountVersionKnown' && c !== 'accountVersion');
        };
        const plain = await perAdmission(await token({}));
        const limited = await perAdmission(await token({ maxConcurrentSessions: 1000 }));
        assert.equal(plain.filter((c) => c === 'startSession').length, 1, plain.join(','));
        assert.equal(limited.filter((c) => c === 'startSession' || c === 'admitSession').join(','), 'admitSession', limited.join(','));
        // the registry check after the answer reads the token for a session registered after the
        // answer; the admission already checked it for one it registered itself
        assert.equal(plain.filter((c) => c === 'getToken').length, 1, plain.join(','));
        assert.deepEqual(limited.map((c) => (c === 'admitSession' ? 'startSession' : c)).sort(), plain.filter((c) => c !== 'getToken').sort());
      } finally {
        await t.services.close();
      }
    });
  });
});
