// The store's own metadata: a value per key, and a write only when absent (src/store/meta.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MetaStore, StoreLifecycle } from '../store/store.js';
import type { Fresh } from './factory.js';

export type MetaUnderTest = MetaStore & StoreLifecycle;

export function metaTests(fresh: Fresh<MetaUnderTest>): void {
  describe('meta', () => {
    it('stores metadata, with an only-if-absent write that exactly one concurrent writer wins', async () => {
      const s = await fresh();
      assert.equal(await s.getMeta('k'), null);
      const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => s.setMeta('k', `v${i}`, true)));
      assert.equal(wins.filter(Boolean).length, 1);
      const winner = `v${wins.indexOf(true)}`;
      assert.equal(await s.getMeta('k'), winner);
      assert.equal(await s.setMeta('k', 'over'), true);
      assert.equal(await s.getMeta('k'), 'over');
    });
  });
}
