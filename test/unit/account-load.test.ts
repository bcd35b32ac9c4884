// An account's entry (its securing names, patterns and country lists) is loaded once per account
// version, and a decision waits for it under the store deadline. The load itself is not cut off at
// that deadline: an account whose viewer-rule tokens take longer to read than the deadline (50,000
// of them at 10M tokens) would otherwise never be cached and be read again by every decision.
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { StoreUnavailable, TokenLookup } from '../../src/enforce/lookup.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';

describe('the account entry load', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('outlives a decision that stops waiting at the store deadline, and is cached for the next', async () => {
    const inner = new SqliteStore({ file: ':memory:' });
    let reads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // a remote store (the deadline applies) whose viewer-rule read answers only when released
    const slow = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'inProcess') return false;
        if (prop === 'viewerRuleTokens') {
          return async (accountId: string) => {
            reads++;
            await gate;
            return target.viewerRuleTokens(accountId);
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    }) as Store;
    const lookup = new TokenLookup(slow, { cacheMaxEntries: 100, cacheTtlMs: 0, storeTimeoutMs: 250 });

    const first = lookup.loadAccountAt('A', 7);
    mock.timers.tick(250);
    await assert.rejects(first, StoreUnavailable);
    assert.equal(lookup.accountAt('A', 7), undefined, 'not loaded yet');

    const second = lookup.loadAccountAt('A', 7);
    assert.equal(reads, 1, 'the second decision waits on the same load instead of reading again');
    release();
    const entry = await second;
    assert.equal(entry.ver, 7);
    assert.equal(lookup.accountAt('A', 7), entry, 'cached once loaded');
    assert.equal(await lookup.loadAccountAt('A', 8).then((e) => e.ver), 8);
    assert.equal(reads, 2, 'a new version is one more read');
    await inner.close();
  });
});
