// `apply update` then read round-trips every field through each store: what applyTokenUpdate
// computes is exactly what the store keeps and gives back (by id and by token value), a refused
// update stores nothing, and the bound addresses are cleared exactly when the update says so.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyTokenUpdate, newTokenRecord, tokenHash, type TokenRecord } from '../../src/domain/tokens.js';
import { ApiError } from '../../src/errors.js';
import type { Store } from '../../src/store/store.js';
import { redisFactory, sqliteFactory, type StoreFactory } from '../helpers/stores.js';
import { fcOptions } from '../helpers/property.js';
import { createInput, kind, updateInput } from './arbitraries.js';

const ACC = 'PRP234';
const T0 = Date.parse('2026-03-01T10:00:00Z');
const T1 = T0 + 3_600_000;
const hex = fc.stringMatching(/^[0-9a-f]{64}$/);
const addresses = fc.uniqueArray(fc.constantFrom('203.0.113.1', '203.0.113.2', '2001:db8::1', '198.51.100.9'), { maxLength: 3 });

const withoutRev = ({ rev: _rev, ...rest }: TokenRecord) => rest;

for (const factory of [sqliteFactory(), redisFactory()] as StoreFactory[]) {
  describe(`apply update then read round-trips every field: ${factory.name}`, () => {
    let store: Store;
    before(async () => {
      await factory.setup();
      store = await factory.make();
      await store.createAccount({ id: ACC, name: 'props', createdOn: new Date(T0).toISOString(), secureViewer: false });
    });
    after(() => factory.teardown());

    it('create, update, read by id and by value', async () => {
      const scenario = kind.chain((k) => fc.record({ kind: fc.constant(k), create: createInput(k), update: updateInput(k), values: fc.uniqueArray(hex, { minLength: 2, maxLength: 2 }), bound: addresses }));
      await fc.assert(
        fc.asyncProperty(scenario, async ({ kind: k, create, update, values: [before, after], bound }) => {
          let rec: ReturnType<typeof newTokenRecord>;
          try {
            rec = newTokenRecord(k, ACC, create, before, T0);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            fc.pre(false); // a create the API refuses: nothing to round-trip
            return;
          }
          const created = await store.createToken(rec);
          assert.deepEqual(withoutRev(created), { ...rec, id: created.id });
          assert.deepEqual(await store.getToken(ACC, k, created.id), created);
          assert.deepEqual(await store.findTokenByHash(tokenHash(before)), created);
          if (created.bindIpsOnUsage) for (const a of bound) assert.notEqual(await store.bindAddress(created, a), 'stale');
          const boundBefore = await store.boundAddresses(ACC, created.id);

          let expected: ReturnType<typeof applyTokenUpdate> | undefined;
          let refusal: ApiError | undefined;
          try {
            expected = applyTokenUpdate(created, update, T1, () => after);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            refusal = e;
          }
          const change = (cur: TokenRecord) => applyTokenUpdate(cur, update, T1, () => after);
          if (refusal) {
            await assert.rejects(store.updateToken(ACC, k, created.id, change), (e: unknown) => e instanceof ApiError && e.status === 400 && e.message === refusal.message);
            assert.deepEqual(await store.getToken(ACC, k, created.id), created, 'a refused update stores nothing');
            assert.deepEqual(await store.boundAddresses(ACC, created.id), boundBefore);
            return;
          }
          const updated = await store.updateToken(ACC, k, created.id, change);
          assert.ok(updated);
          assert.deepEqual(withoutRev(updated), withoutRev(expected!.next));
          assert.ok(updated.rev > created.rev, 'rev increases');
          assert.deepEqual(await store.getToken(ACC, k, created.id), updated);
          assert.deepEqual(await store.findTokenByHash(tokenHash(updated.token)), updated);
          if (updated.token !== before) assert.equal(await store.findTokenByHash(tokenHash(before)), null, 'the old value is gone');
          assert.deepEqual(await store.boundAddresses(ACC, created.id), expected!.clearBound ? [] : boundBefore);
        }),
        { ...fcOptions(120, 3000), maxSkipsPerRun: 1000 },
      );
    });
  });
}
