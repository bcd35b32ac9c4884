// A decision on a cached token makes at most one store round trip (counted through a proxy that
// records every store call the Enforcer makes).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { Enforcer } from '../../src/enforce/enforcer.js';
import { Metrics } from '../../src/observability/metrics.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { loadConfig } from '../../src/config/load.js';
import { newTokenRecord } from '../../src/domain/tokens.js';

function counting(inner: Store): { store: Store; calls: string[] } {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as Store;
  return { store, calls };
}

describe('store round trips per decision', () => {
  it('one for a cached token, one for a cached bind-on-usage token (the bind), one for an open stream', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    const plain = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'p', streams: [{ streamName: 'cam1' }] }, 'a'.repeat(64), Date.now()));
    const binding = await inner.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 2 }, 'b'.repeat(64), Date.now()));
    const { store, calls } = counting(inner);
    const cfg = loadConfig({ env: {} }).enforcement;
    const enforcer = new Enforcer(store, cfg, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = (token: string | undefined) =>
      enforcer.decide({ action: 'subscribe', token, streamName: 'cam1', accountId: token ? undefined : 'ACC001', clientIp: '203.0.113.7', protocol: 'hls' }, 'test');

    for (const token of [plain.token, binding.token, undefined]) {
      assert.equal((await ask(token)).allowed, true); // warms the cache
      calls.length = 0;
      for (let i = 0; i < 10; i++) assert.equal((await ask(token)).allowed, true);
      assert.equal(calls.length, 10, `${token ? token[0] : 'open'}: ${calls.join(',')}`);
      assert.deepEqual([...new Set(calls)], [token === binding.token ? 'bindAddress' : 'accountVersion']);
    }
  });

  // Regression (benchmark scale run, 1M tokens on Redis): every concurrent token-less decision on
  // a cold cache loaded the account's securing tokens itself; 32 such loads of 2,500 records
  // overran the store deadline and answered 503. Now one load serves the burst.
  it('a burst of token-less decisions on a cold cache loads the securing tokens once', async () => {
    const inner = new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-rt-')), 'db'), synchronous: 'NORMAL' });
    await inner.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date().toISOString(), secureViewer: false });
    await inner.createToken(newTokenRecord('publish', 'ACC001', { label: 's', streams: [{ streamName: 'secret' }], subscribeRequiresAuth: true }, 'c'.repeat(64), Date.now()));
    const { store, calls } = counting(inner);
    const enforcer = new Enforcer(store, loadConfig({ env: {} }).enforcement, fixedGeo({}), new Metrics({ defaultMetrics: false }), pino({ level: 'silent' }));
    const ask = (streamName: string) => enforcer.decide({ action: 'subscribe', streamName, accountId: 'ACC001', protocol: 'hls' }, 'test');
    const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => ask(i % 2 === 0 ? 'open' : 'secret')));
    assert.deepEqual(answers.map((d) => d.allowed), Array.from({ length: 32 }, (_, i) => i % 2 === 0));
    assert.equal(calls.filter((c) => c === 'securingTokens').length, 1);
    assert.equal(calls.filter((c) => c === 'getAccount').length, 1);
  });
});
