// The accounts: create (once, the first one once), read, list, patch, unique names, the secret and
// its lookup, and the version every instance's caches compare (src/store/accounts.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AccountStore, StoreLifecycle, TokenStore } from '../store/store.js';
import { account, named, T0, tok } from './fixtures.js';
import type { Fresh } from './factory.js';

/** What the accounts part runs on: the accounts, and the tokens whose writes move the version. */
export type AccountsUnderTest = AccountStore & TokenStore & StoreLifecycle;

export function accountTests(fresh: Fresh<AccountsUnderTest>): void {
  describe('accounts', () => {
    it('a version read that starts after a write was acknowledged sees it, even while earlier reads are in flight', async () => {
      const s = await fresh();
      await s.createAccount(account('VVVVVV'));
      const t = await s.createToken(tok('VVVVVV', 'subscribe', 'v'));
      const before = await s.accountVersion('VVVVVV');
      // reads in flight while the write runs (Redis shares one read among them)
      const inFlight = [s.accountVersion('VVVVVV'), s.accountVersion('VVVVVV')];
      await s.updateToken('VVVVVV', 'subscribe', t.id, (cur) => ({ next: { ...cur, label: 'w' }, clearBound: false }));
      const after = await s.accountVersion('VVVVVV');
      assert.ok(after > before, `${after} > ${before}`);
      for (const v of await Promise.all(inFlight)) assert.ok(v === before || v === after, String(v));
      assert.equal(await s.accountVersion('VVVVVV'), after);
    });

    it('creates, reads, lists in creation order and updates accounts', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'h1' }));
      await s.createAccount(account('BBBBBB'));
      assert.deepEqual(await s.getAccount('AAAAAA'), account('AAAAAA', { secretHash: 'h1' }));
      assert.equal(await s.getAccount('ZZZZZZ'), null);
      assert.deepEqual((await s.listAccounts()).map((a) => a.id), ['AAAAAA', 'BBBBBB']);
      assert.deepEqual(await s.updateAccount('BBBBBB', { secureViewer: true }), account('BBBBBB', { secureViewer: true }));
      assert.equal(await s.updateAccount('ZZZZZZ', { secureViewer: true }), null);
      await assert.rejects(s.createAccount(account('AAAAAA')), named('AccountExists'));
    });

    it('keeps viewer country defaults: set, replaced, cleared, and returned by every read', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'h1' }));
      await s.createAccount(account('BBBBBB', { deniedCountries: ['DE'] }));
      assert.deepEqual(await s.getAccount('BBBBBB'), account('BBBBBB', { deniedCountries: ['DE'] }));
      const v0 = await s.accountVersion('AAAAAA');
      const set = await s.updateAccount('AAAAAA', { allowedCountries: ['FR', 'GB'] });
      assert.deepEqual(set, account('AAAAAA', { secretHash: 'h1', allowedCountries: ['FR', 'GB'] }));
      assert.notEqual(await s.accountVersion('AAAAAA'), v0, 'a decision reads them: the version moves');
      assert.deepEqual(await s.getAccount('AAAAAA'), set);
      assert.deepEqual(await s.findAccountBySecretHash('h1'), set);
      assert.deepEqual((await s.listAccounts()).find((a) => a.id === 'AAAAAA'), set);
      // a patch without lists keeps them; a list given replaces it; [] clears it
      assert.deepEqual(await s.updateAccount('AAAAAA', { name: 'renamed' }), { ...set, name: 'renamed' });
      assert.deepEqual(
        await s.updateAccount('AAAAAA', { allowedCountries: [], deniedCountries: ['US'] }),
        account('AAAAAA', { secretHash: 'h1', name: 'renamed', deniedCountries: ['US'] }),
      );
      assert.deepEqual(await s.updateAccount('AAAAAA', { deniedCountries: [] }), account('AAAAAA', { secretHash: 'h1', name: 'renamed' }));
      assert.deepEqual(await s.getAccount('AAAAAA'), account('AAAAAA', { secretHash: 'h1', name: 'renamed' }));
      assert.deepEqual(await s.getAccount('BBBBBB'), account('BBBBBB', { deniedCountries: ['DE'] }), 'other accounts untouched');
    });

    it('keeps the default cluster, the geo cascade and ipRulesOnRtmp: absent until set, each change moving the version, other settings kept', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'h1', deniedCountries: ['DE'] }));
      await s.createAccount(account('BBBBBB', { defaultCluster: 'eu-1', geoCascade: { isEnabled: true, clusters: ['all'] }, ipRulesOnRtmp: false }));
      assert.deepEqual(await s.getAccount('AAAAAA'), account('AAAAAA', { secretHash: 'h1', deniedCountries: ['DE'] }), 'none set: none answered (address rules on RTMP are on)');
      assert.deepEqual(
        await s.getAccount('BBBBBB'),
        account('BBBBBB', { defaultCluster: 'eu-1', geoCascade: { isEnabled: true, clusters: ['all'] }, ipRulesOnRtmp: false }),
        'a create stores them',
      );
      let v = await s.accountVersion('AAAAAA');
      const moved = async (what: string) => {
        const now = await s.accountVersion('AAAAAA');
        assert.ok(now > v, `${what}: the version moves (${now} > ${v}), so every instance's cached entry is replaced`);
        v = now;
      };
      const withCluster = await s.updateAccount('AAAAAA', { defaultCluster: 'us-2' });
      assert.deepEqual(withCluster, account('AAAAAA', { secretHash: 'h1', deniedCountries: ['DE'], defaultCluster: 'us-2' }));
      await moved('defaultCluster');
      const cascading = await s.updateAccount('AAAAAA', { geoCascade: { isEnabled: true, clusters: ['us-2', 'eu-1'] } });
      assert.deepEqual(cascading, { ...withCluster, geoCascade: { isEnabled: true, clusters: ['us-2', 'eu-1'] } });
      await moved('geoCascade');
      const off = await s.updateAccount('AAAAAA', { ipRulesOnRtmp: false });
      assert.deepEqual(off, { ...cascading, ipRulesOnRtmp: false });
      await moved('ipRulesOnRtmp off');
      assert.deepEqual(await s.getAccount('AAAAAA'), off);
      assert.deepEqual(await s.findAccountBySecretHash('h1'), off);
      assert.deepEqual((await s.listAccounts()).find((a) => a.id === 'AAAAAA'), off);
      // a patch that names other settings keeps these
      assert.deepEqual(await s.updateAccount('AAAAAA', { name: 'renamed', deniedCountries: [] }), {
        ...account('AAAAAA', { secretHash: 'h1', name: 'renamed' }),
        defaultCluster: 'us-2',
        geoCascade: { isEnabled: true, clusters: ['us-2', 'eu-1'] },
        ipRulesOnRtmp: false,
      });
      // replaced, and on again (answered absent)
      const back = await s.updateAccount('AAAAAA', { ipRulesOnRtmp: true, geoCascade: { isEnabled: false, clusters: [] }, defaultCluster: 'eu-1' });
      assert.deepEqual(back, {
        ...account('AAAAAA', { secretHash: 'h1', name: 'renamed' }),
        defaultCluster: 'eu-1',
        geoCascade: { isEnabled: false, clusters: [] },
      });
      await moved('all three at once');
      assert.deepEqual(await s.getAccount('AAAAAA'), back);
      // the sharing policy: stored as given, kept by other patches, removed by null
      const policy = { enabled: true, maxCountries: 3, action: 'limit' as const };
      const sharing = await s.updateAccount('AAAAAA', { sharing: policy });
      assert.deepEqual(sharing, { ...back, sharing: policy });
      await moved('sharing');
      assert.deepEqual(await s.updateAccount('AAAAAA', { secureViewer: false }), sharing);
      assert.deepEqual(await s.updateAccount('AAAAAA', { sharing: null }), back);
      assert.deepEqual(await s.getAccount('AAAAAA'), back);
      assert.deepEqual(
        await s.getAccount('BBBBBB'),
        account('BBBBBB', { defaultCluster: 'eu-1', geoCascade: { isEnabled: true, clusters: ['all'] }, ipRulesOnRtmp: false }),
        'other accounts untouched',
      );
    });

    it('refuses a name another account has, compared without case and the white space around it; a refused create writes nothing', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { name: 'Acme', secretHash: 'h1' }));
      for (const name of ['Acme', 'acme', ' ACME ', '\tacMe\n']) {
        await assert.rejects(s.createAccount(account('BBBBBB', { name, secretHash: 'h2' })), named('AccountNameTaken'), JSON.stringify(name));
      }
      assert.equal(await s.getAccount('BBBBBB'), null);
      assert.equal(await s.findAccountBySecretHash('h2'), null);
      assert.equal(await s.accountVersion('BBBBBB'), 0);
      assert.deepEqual(await s.listAccounts(), [account('AAAAAA', { name: 'Acme', secretHash: 'h1' })]);
      // names that differ otherwise are free; canonically equivalent Unicode is the same name
      await s.createAccount(account('BBBBBB', { name: 'Acme 2', secretHash: 'h2' }));
      await s.createAccount(account('CCCCCC', { name: 'Ac me' }));
      await s.createAccount(account('DDDDDD', { name: 'Caf\u00e9' }));
      await assert.rejects(s.createAccount(account('EEEEEE', { name: 'CAFE\u0301' })), named('AccountNameTaken'));
      assert.deepEqual((await s.listAccounts()).map((a) => [a.id, a.name]), [
        ['AAAAAA', 'Acme'],
        ['BBBBBB', 'Acme 2'],
        ['CCCCCC', 'Ac me'],
        ['DDDDDD', 'Caf\u00e9'],
      ]);
    });

    it('refuses a rename to a name another account has and changes nothing; an account may rename to its own name in another case, and a name given up is free', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { name: 'acme' }));
      await s.createAccount(account('BBBBBB', { name: 'other', secretHash: 'h2' }));
      const v = await s.accountVersion('BBBBBB');
      await assert.rejects(s.updateAccount('BBBBBB', { name: ' ACME', secureViewer: true }), named('AccountNameTaken'));
      assert.deepEqual(await s.getAccount('BBBBBB'), account('BBBBBB', { name: 'other', secretHash: 'h2' }), 'not the name, nor the other settings of the patch');
      assert.equal(await s.accountVersion('BBBBBB'), v);
      assert.deepEqual(await s.updateAccount('AAAAAA', { name: 'ACME' }), account('AAAAAA', { name: 'ACME' }));
      assert.deepEqual(await s.updateAccount('BBBBBB', { name: 'other', secureViewer: true }), account('BBBBBB', { name: 'other', secretHash: 'h2', secureViewer: true }));
      // renamed away, a name is free for a rename and for a create
      assert.deepEqual(await s.updateAccount('AAAAAA', { name: 'acme corp' }), account('AAAAAA', { name: 'acme corp' }));
      assert.deepEqual(await s.updateAccount('BBBBBB', { name: 'Acme' }), account('BBBBBB', { name: 'Acme', secretHash: 'h2', secureViewer: true }));
      await s.createAccount(account('CCCCCC', { name: 'OTHER' }));
      await assert.rejects(s.createAccount(account('DDDDDD', { name: 'acme' })), named('AccountNameTaken'));
      await assert.rejects(s.updateAccount('AAAAAA', { name: 'acme' }), named('AccountNameTaken'));
      await assert.rejects(s.updateAccount('AAAAAA', { name: 'other' }), named('AccountNameTaken'));
      // a rename of no account takes no name
      assert.equal(await s.updateAccount('ZZZZZZ', { name: 'free' }), null);
      await s.createAccount(account('EEEEEE', { name: 'Free' }));
      assert.deepEqual((await s.listAccounts()).map((a) => [a.id, a.name]), [
        ['AAAAAA', 'acme corp'],
        ['BBBBBB', 'Acme'],
        ['CCCCCC', 'OTHER'],
        ['EEEEEE', 'Free'],
      ]);
    });

    it('finds an account by its current secret hash only, and not after the secret is deleted', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'old' }));
      assert.equal((await s.findAccountBySecretHash('old'))?.id, 'AAAAAA');
      assert.equal(await s.setAccountSecret('AAAAAA', 'new'), true);
      assert.equal(await s.findAccountBySecretHash('old'), null);
      assert.equal((await s.findAccountBySecretHash('new'))?.id, 'AAAAAA');
      assert.equal(await s.setAccountSecret('AAAAAA', null), true);
      assert.equal(await s.findAccountBySecretHash('new'), null);
      assert.equal((await s.getAccount('AAAAAA'))?.secretHash, undefined);
      assert.equal(await s.setAccountSecret('ZZZZZZ', 'x'), false);
    });

    it('creates the first account exactly once, even when asked concurrently', async () => {
      const s = await fresh();
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.createFirstAccount(account(`FIRST${i}`))));
      assert.equal(results.filter(Boolean).length, 1);
      assert.equal((await s.listAccounts()).length, 1);
      assert.equal(await s.createFirstAccount(account('LATER1')), false);
    });

    it('does not create a first account when an account already exists', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA'));
      assert.equal(await s.createFirstAccount(account('FIRST1')), false);
      assert.deepEqual((await s.listAccounts()).map((a) => a.id), ['AAAAAA']);
    });
  });

  describe('accounts: concurrent writes', () => {
    it('20 concurrent account updates: none lost, each answers its own change, the version moves once per update', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'h1' }));
      const v0 = await s.accountVersion('AAAAAA');
      const patches = Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? { name: `name ${i}` } : i % 4 === 1 ? { allowedCountries: [`A${i % 10}`], deniedCountries: [] } : { allowedCountries: [], deniedCountries: [`D${i % 10}`] },
      );
      const answers = await Promise.all(patches.map((p) => s.updateAccount('AAAAAA', p)));
      for (const [i, p] of patches.entries()) {
        const a = answers[i]!;
        if ('name' in p) assert.equal(a.name, p.name, `update ${i} answers its own name`);
        else assert.deepEqual([a.allowedCountries ?? [], a.deniedCountries ?? []], [p.allowedCountries, p.deniedCountries], `update ${i} answers its own lists`);
        assert.equal(a.secretHash, 'h1');
      }
      assert.equal(await s.accountVersion('AAAAAA'), v0 + 20);
      const final = (await s.getAccount('AAAAAA'))!;
      assert.ok(patches.some((p) => 'name' in p && p.name === final.name), final.name);
      const lists = [final.allowedCountries ?? [], final.deniedCountries ?? []];
      assert.ok(
        patches.some((p) => !('name' in p) && JSON.stringify([p.allowedCountries, p.deniedCountries]) === JSON.stringify(lists)),
        `the lists are one update's pair: ${JSON.stringify(lists)}`,
      );
      assert.deepEqual(await s.findAccountBySecretHash('h1'), final);
    });

    it('concurrent secret rotations: of those expecting one secret exactly one wins; of unconditional ones exactly the last stays valid', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'old' }));
      const expecting = await Promise.all(Array.from({ length: 10 }, (_, i) => s.setAccountSecret('AAAAAA', `e${i}`, 'old')));
      assert.equal(expecting.filter(Boolean).length, 1);
      const winner = `e${expecting.indexOf(true)}`;
      assert.equal((await s.getAccount('AAAAAA'))?.secretHash, winner);
      for (let i = 0; i < 10; i++) assert.equal((await s.findAccountBySecretHash(`e${i}`))?.id, `e${i}` === winner ? 'AAAAAA' : undefined);
      assert.equal(await s.findAccountBySecretHash('old'), null);

      const plain = await Promise.all(Array.from({ length: 10 }, (_, i) => s.setAccountSecret('AAAAAA', `u${i}`)));
      assert.deepEqual(plain, Array(10).fill(true));
      const current = (await s.getAccount('AAAAAA'))!.secretHash;
      const valid = [];
      for (let i = 0; i < 10; i++) if (await s.findAccountBySecretHash(`u${i}`)) valid.push(`u${i}`);
      assert.deepEqual(valid, [current]);
      assert.equal(await s.findAccountBySecretHash(winner), null);
    });

    it('10 creates racing for one name: exactly one succeeds, the others are refused and write nothing', async () => {
      const s = await fresh();
      const ids = Array.from({ length: 10 }, (_, i) => `RACE0${i}`);
      const results = await Promise.allSettled(ids.map((id, i) => s.createAccount(account(id, { name: i % 2 === 0 ? 'Same' : ' same ', secretHash: `h${i}` }))));
      const won = ids.filter((_, i) => results[i].status === 'fulfilled');
      assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as Error).name, 'AccountNameTaken');
      assert.deepEqual((await s.listAccounts()).map((a) => a.id), won);
      for (const [i, id] of ids.entries()) assert.equal((await s.findAccountBySecretHash(`h${i}`))?.id, id === won[0] ? id : undefined);
      await assert.rejects(s.createAccount(account('LATER1', { name: 'SAME' })), named('AccountNameTaken'));
    });

    it('10 renames and a create racing for one name: exactly one succeeds, the others keep their names', async () => {
      const s = await fresh();
      const ids = Array.from({ length: 10 }, (_, i) => `RENAM${i}`);
      for (const id of ids) await s.createAccount(account(id, { name: `was ${id}` }));
      const results = await Promise.allSettled([
        ...ids.map((id) => s.updateAccount(id, { name: 'Target' })),
        s.createAccount(account('NEWONE', { name: 'target' })),
      ]);
      const all = [...ids, 'NEWONE'];
      const won = all.filter((_, i) => results[i].status === 'fulfilled');
      assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as Error).name, 'AccountNameTaken');
      const names = new Map((await s.listAccounts()).map((a) => [a.id, a.name]));
      for (const id of ids) assert.equal(names.get(id), id === won[0] ? 'Target' : `was ${id}`);
      assert.equal(names.get('NEWONE'), won[0] === 'NEWONE' ? 'target' : undefined);
    });

    it('a create of an existing account changes nothing: record, secret, list', async () => {
      const s = await fresh();
      await s.createAccount(account('AAAAAA', { secretHash: 'h1' }));
      const v = await s.accountVersion('AAAAAA');
      await assert.rejects(s.createAccount(account('AAAAAA', { name: 'other', secretHash: 'h2', createdOn: new Date(T0 + 5).toISOString() })));
      assert.deepEqual(await s.getAccount('AAAAAA'), account('AAAAAA', { secretHash: 'h1' }));
      assert.equal(await s.findAccountBySecretHash('h2'), null);
      assert.deepEqual((await s.listAccounts()).map((a) => a.id), ['AAAAAA']);
      assert.equal(await s.accountVersion('AAAAAA'), v);
    });
  });
}
