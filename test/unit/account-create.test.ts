// Account ids are random: a create that finds its id taken by a create racing it draws another,
// and a store that keeps refusing ends in a retryable conflict, never a 500.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { AccountService } from '../../src/management/accounts.js';
import { AccountExists, StoreConflict } from '../../src/errors.js';
import type { Account, Store } from '../../src/store/store.js';
import { SYSTEM_ACTOR } from '../../src/audit/actor.js';

const sqlite = () => new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-acct-')), 'db'), synchronous: 'NORMAL' });

/** The store, with createAccount refusing the first `taken` calls as a racing create would. */
function racing(store: Store, taken: number): Store & { calls: string[] } {
  const calls: string[] = [];
  return Object.assign(Object.create(store) as Store, {
    calls,
    async createAccount(a: Account) {
      calls.push(a.id);
      if (calls.length <= taken) throw new AccountExists(a.id);
      return store.createAccount(a);
    },
  });
}

describe('account create', () => {
  it('draws another id when the first is taken by a racing create', async () => {
    const store = sqlite();
    const s = racing(store, 2);
    const { account } = await new AccountService(s).create('acme', SYSTEM_ACTOR);
    assert.equal(s.calls.length, 3);
    assert.equal(new Set(s.calls).size, 3, 'a new id each time');
    assert.equal(s.calls[2], account.id);
    assert.deepEqual((await store.listAccounts()).map((a) => a.id), [account.id]);
    await store.close();
  });

  it('gives up after 20 taken ids with a retryable conflict', async () => {
    const store = sqlite();
    const s = racing(store, Number.POSITIVE_INFINITY);
    await assert.rejects(new AccountService(s).create('acme', SYSTEM_ACTOR), StoreConflict);
    assert.equal(s.calls.length, 20);
    assert.deepEqual(await store.listAccounts(), []);
    await store.close();
  });

  it('the store itself refuses an id that exists with AccountExists', async () => {
    const store = sqlite();
    const a: Account = { id: 'ZZZZZZ', name: 'a', createdOn: new Date().toISOString(), secureViewer: false };
    await store.createAccount(a);
    await assert.rejects(store.createAccount({ ...a, name: 'b' }), AccountExists);
    assert.equal((await store.getAccount('ZZZZZZ'))?.name, 'a');
    await store.close();
  });
});
