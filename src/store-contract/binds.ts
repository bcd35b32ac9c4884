// Bind on usage: the limit held under concurrent first uses, a stale copy refused, bindings cleared
// with the token (src/store/binds.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyTokenUpdate } from '../domain/tokens.js';
import { newSecret } from '../domain/secrets.js';
import type { BindStore, StoreLifecycle, TokenStore } from '../store/store.js';
import { T0, tok } from './fixtures.js';
import type { Fresh } from './factory.js';

/** What the binds part runs on: the binds, and the tokens they bind. */
export type BindsUnderTest = BindStore & TokenStore & StoreLifecycle;

export function bindTests(fresh: Fresh<BindsUnderTest>): void {
  describe('bind on usage', () => {
    it('50 concurrent first uses from distinct addresses bind exactly the limit', async () => {
      const s = await fresh();
      const t = await s.createToken(tok('A', 'subscribe', 'x', T0, { bindIpsOnUsage: 3 }));
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => s.bindAddress(t, `10.0.0.${i + 1}`)));
      assert.equal(results.filter((r) => r === 'bound').length, 3);
      assert.equal(results.filter((r) => r === 'full').length, 47);
      const bound = await s.boundAddresses('A', t.id);
      assert.equal(bound.length, 3);
      for (const a of bound) assert.equal(await s.bindAddress(t, a), 'already');
      assert.equal(await s.bindAddress(t, '10.9.9.9'), 'full');
    });

    it('reports a stale copy after any update, and clears bindings when the change says so', async () => {
      const s = await fresh();
      const t = await s.createToken(tok('A', 'subscribe', 'x', T0, { bindIpsOnUsage: 1 }));
      assert.equal(await s.bindAddress(t, '10.0.0.1'), 'bound');
      const relabelled = await s.updateToken('A', 'subscribe', t.id, (cur) => applyTokenUpdate(cur, { label: 'y' }, T0, newSecret));
      assert.equal(await s.bindAddress(t, '10.0.0.1'), 'stale');
      assert.deepEqual(await s.boundAddresses('A', t.id), ['10.0.0.1']);
      const refreshed = await s.updateToken('A', 'subscribe', t.id, (cur) =>
        applyTokenUpdate(cur, { refreshToken: true }, T0, newSecret),
      );
      assert.ok(relabelled && refreshed);
      assert.deepEqual(await s.boundAddresses('A', t.id), []);
      assert.equal(await s.bindAddress(refreshed, '10.0.0.2'), 'bound');
    });

    it('forgets the bindings of a deleted token', async () => {
      const s = await fresh();
      const t = await s.createToken(tok('A', 'subscribe', 'x', T0, { bindIpsOnUsage: 2 }));
      await s.bindAddress(t, '10.0.0.1');
      await s.deleteToken('A', 'subscribe', t.id);
      assert.deepEqual(await s.boundAddresses('A', t.id), []);
      assert.equal(await s.bindAddress(t, '10.0.0.1'), 'stale');
    });
  });
}
