// The store contract: one suite, run against every backend (sqlite, redis) by its own test file.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Store, Account, Session, SessionEndReason } from '../../src/store/store.js';
import type { StoreFactory } from '../helpers/stores.js';
import { applyTokenUpdate, newTokenRecord, tokenHash, type TokenKind } from '../../src/domain/tokens.js';
import { newSecret } from '../../src/domain/secrets.js';
import { sessionRecord } from '../helpers/sessions.js';
import { AccountExists } from '../../src/errors.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

const account = (id: string, extra: Partial<Account> = {}): Account => ({
  id,
  name: `acct ${id}`,
  createdOn: new Date(T0).toISOString(),
  secureViewer: false,
  ...extra,
});

function tok(accountId: string, kind: TokenKind, label: string, addedMs = T0, extra: Record<string, unknown> = {}) {
  return newTokenRecord(kind, accountId, { label, streams: [{ streamName: 'cam1' }], ...extra }, newSecret(), addedMs);
}

export function storeContract(factory: StoreFactory): void {
  describe(`store contract: ${factory.name}`, () => {
    let store: Store;
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });
    const fresh = async (now?: () => number) => {
      store = await factory.make({ now });
      return store;
    };

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
        await assert.rejects(s.createAccount(account('AAAAAA')), AccountExists);
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
        assert.deepEqual(
          await s.getAccount('BBBBBB'),
          account('BBBBBB', { defaultCluster: 'eu-1', geoCascade: { isEnabled: true, clusters: ['all'] }, ipRulesOnRtmp: false }),
          'other accounts untouched',
        );
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

    describe('tokens', () => {
      it('assigns 50 distinct positive ids to 50 concurrent creates, shared across kinds', async () => {
        const s = await fresh();
        const made = await Promise.all(
          Array.from({ length: 50 }, (_, i) => s.createToken(tok('A', i % 2 ? 'publish' : 'subscribe', `t${i}`))),
        );
        const ids = made.map((t) => t.id);
        assert.equal(new Set(ids).size, 50);
        assert.ok(ids.every((id) => Number.isInteger(id) && id > 0));
      });

      it('reads a token only with its own account and kind', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'publish', 'x'));
        assert.deepEqual(await s.getToken('A', 'publish', t.id), t);
        assert.equal(await s.getToken('B', 'publish', t.id), null);
        assert.equal(await s.getToken('A', 'subscribe', t.id), null);
        assert.equal(await s.getToken('A', 'publish', t.id + 1000), null);
      });

      it('lists by name (case-insensitive, ties by id) and by addedOn, both directions, with paging', async () => {
        const s = await fresh();
        const b = await s.createToken(tok('A', 'publish', 'bravo', T0 + 3000));
        const a = await s.createToken(tok('A', 'publish', 'Alpha', T0 + 2000));
        const c = await s.createToken(tok('A', 'publish', 'charlie', T0 + 1000));
        const a2 = await s.createToken(tok('A', 'publish', 'alpha', T0 + 4000));
        await s.createToken(tok('A', 'subscribe', 'aaa-other-kind'));
        await s.createToken(tok('B', 'publish', 'aaa-other-account'));
        const ids = async (sortBy: 'Name' | 'AddedOn', descending: boolean, page = 1, itemsOnPage = 10) =>
          (await s.listTokens('A', 'publish', { sortBy, descending, page, itemsOnPage })).map((t) => t.id);
        assert.deepEqual(await ids('Name', false), [a.id, a2.id, b.id, c.id]);
        assert.deepEqual(await ids('Name', true), [c.id, b.id, a2.id, a.id]);
        assert.deepEqual(await ids('AddedOn', false), [c.id, a.id, b.id, a2.id]);
        assert.deepEqual(await ids('AddedOn', true), [a2.id, b.id, a.id, c.id]);
        assert.deepEqual(await ids('Name', false, 2, 3), [c.id]);
        assert.deepEqual(await ids('Name', false, 3, 3), []);
      });

      it('updates atomically: 20 concurrent updates of one token lose no field', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'publish', 'x'));
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            s.updateToken('A', 'publish', t.id, (cur) =>
              applyTokenUpdate(cur, { addTokenStreams: [{ streamName: `s${i}` }] }, T0, newSecret),
            ),
          ),
        );
        const after = await s.getToken('A', 'publish', t.id);
        const names = after!.streams.map((x) => x.streamName).sort();
        assert.deepEqual(names, ['cam1', ...Array.from({ length: 20 }, (_, i) => `s${i}`)].sort());
        assert.equal(after!.rev, 21);
      });

      it('keeps the name order after a label change', async () => {
        const s = await fresh();
        const x = await s.createToken(tok('A', 'publish', 'x'));
        const y = await s.createToken(tok('A', 'publish', 'y'));
        await s.updateToken('A', 'publish', x.id, (cur) => applyTokenUpdate(cur, { label: 'z' }, T0, newSecret));
        const page = await s.listTokens('A', 'publish', { sortBy: 'Name', descending: false, page: 1, itemsOnPage: 10 });
        assert.deepEqual(page.map((t) => [t.id, t.label]), [
          [y.id, 'y'],
          [x.id, 'z'],
        ]);
      });

      it('finds a token by the hash of its current value only: not the old value after a refresh', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'subscribe', 'x'));
        assert.equal((await s.findTokenByHash(tokenHash(t.token)))?.id, t.id);
        const next = await s.updateToken('A', 'subscribe', t.id, (cur) => applyTokenUpdate(cur, { refreshToken: true }, T0, newSecret));
        assert.notEqual(next!.token, t.token);
        assert.equal(await s.findTokenByHash(tokenHash(t.token)), null);
        assert.equal((await s.findTokenByHash(tokenHash(next!.token)))?.token, next!.token);
      });

      it('stores nothing when the change throws', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'publish', 'x'));
        await assert.rejects(
          s.updateToken('A', 'publish', t.id, () => {
            throw new Error('refused');
          }),
          /refused/,
        );
        assert.deepEqual(await s.getToken('A', 'publish', t.id), t);
      });

      it('does not update or delete a token of another account or kind', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'publish', 'x'));
        const change = (cur: typeof t) => applyTokenUpdate(cur, { label: 'hacked' }, T0, newSecret);
        assert.equal(await s.updateToken('B', 'publish', t.id, change), null);
        assert.equal(await s.updateToken('A', 'subscribe', t.id, change), null);
        assert.equal(await s.deleteToken('B', 'publish', t.id), false);
        assert.equal(await s.deleteToken('A', 'subscribe', t.id), false);
        assert.deepEqual(await s.getToken('A', 'publish', t.id), t);
      });

      it('deletes a token: gone from reads, lists and lookups by value', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'publish', 'x'));
        assert.equal(await s.deleteToken('A', 'publish', t.id), true);
        assert.equal(await s.getToken('A', 'publish', t.id), null);
        assert.equal(await s.findTokenByHash(tokenHash(t.token)), null);
        assert.deepEqual(await s.listTokens('A', 'publish', { sortBy: 'Name', descending: false, page: 1, itemsOnPage: 10 }), []);
        assert.equal(await s.deleteToken('A', 'publish', t.id), false);
      });
    });

    describe('enforcement lookups', () => {
      it('finds a token by id in any account, and not after delete', async () => {
        const s = await fresh();
        const t = await s.createToken(tok('A', 'subscribe', 'x'));
        assert.deepEqual(await s.findTokenById(t.id), t);
        assert.equal(await s.findTokenById(t.id + 1000), null);
        await s.deleteToken('A', 'subscribe', t.id);
        assert.equal(await s.findTokenById(t.id), null);
      });

      it('keeps the securing tokens of an account: publish tokens with subscribeRequiresAuth, active or not', async () => {
        const s = await fresh();
        const a = await s.createToken(tok('A', 'publish', 'a', T0, { subscribeRequiresAuth: true }));
        await s.createToken(tok('A', 'publish', 'open'));
        await s.createToken(tok('B', 'publish', 'other', T0, { subscribeRequiresAuth: true }));
        const b = await s.createToken(tok('A', 'publish', 'b'));
        assert.deepEqual((await s.securingTokens('A')).map((t) => t.id), [a.id]);
        await s.updateToken('A', 'publish', b.id, (cur) => applyTokenUpdate(cur, { subscribeRequiresAuth: true }, T0, newSecret));
        assert.deepEqual((await s.securingTokens('A')).map((t) => t.id), [a.id, b.id]);
        await s.updateToken('A', 'publish', a.id, (cur) => applyTokenUpdate(cur, { isActive: false }, T0, newSecret));
        assert.deepEqual((await s.securingTokens('A')).map((t) => t.id), [a.id, b.id], 'a disabled token still secures');
        await s.updateToken('A', 'publish', a.id, (cur) => applyTokenUpdate(cur, { subscribeRequiresAuth: false }, T0, newSecret));
        assert.deepEqual((await s.securingTokens('A')).map((t) => t.id), [b.id]);
        await s.deleteToken('A', 'publish', b.id);
        assert.deepEqual(await s.securingTokens('A'), []);
      });

      it('keeps the stream rules of a deleted publish token that set viewer rules, with those rules, removable by name and account', async () => {
        const s = await fresh(() => T0 + 5000);
        await s.createAccount(account('A'));
        const a = await s.createToken(
          tok('A', 'publish', 'a', T0, { subscribeRequiresAuth: true, streams: [{ streamName: 'live1' }, { streamName: 'cam.*', isRegex: true }, { streamName: 'x', isRegex: true }] }),
        );
        const x = await s.createToken(tok('A', 'publish', 'x', T0, { subscribeRequiresAuth: true, streams: [{ streamName: 'x' }] }));
        const open = await s.createToken(tok('A', 'publish', 'open', T0, { streams: [{ streamName: 'open1' }] }));
        const geo = await s.createToken(tok('A', 'publish', 'geo', T0, { streams: [{ streamName: 'x' }], deniedCountries: ['FR'] }));
        const sub = await s.createToken(tok('A', 'subscribe', 'viewer', T0, { streams: [{ streamName: 'v' }] }));
        await s.createToken(tok('B', 'publish', 'b', T0, { subscribeRequiresAuth: true, streams: [{ streamName: 'theirs' }] }));
        assert.deepEqual(await s.securedStreams('A'), []);
        await s.deleteToken('A', 'publish', open.id);
        await s.deleteToken('A', 'subscribe', sub.id);
        assert.deepEqual(await s.securedStreams('A'), [], 'tokens that secured nothing leave nothing');
        const v0 = await s.accountVersion('A');
        assert.equal(await s.deleteToken('A', 'publish', a.id), true);
        await s.deleteToken('A', 'publish', x.id);
        await s.deleteToken('A', 'publish', geo.id);
        const at = new Date(T0 + 5000).toISOString();
        const secures = { subscribeRequiresAuth: true, allowedCountries: [], deniedCountries: [] };
        const deniesFr = { subscribeRequiresAuth: false, allowedCountries: [], deniedCountries: ['FR'] };
        assert.deepEqual(await s.securedStreams('A'), [
          { streamName: 'cam.*', isRegex: true, tokenId: a.id, addedOn: at, ...secures },
          { streamName: 'live1', isRegex: false, tokenId: a.id, addedOn: at, ...secures },
          { streamName: 'x', isRegex: false, tokenId: x.id, addedOn: at, ...secures },
          { streamName: 'x', isRegex: false, tokenId: geo.id, addedOn: at, ...deniesFr },
          { streamName: 'x', isRegex: true, tokenId: a.id, addedOn: at, ...secures },
        ]);
        assert.deepEqual(await s.securedStreams('B'), []);
        const v1 = await s.accountVersion('A');
        assert.notEqual(v1, v0);
        assert.deepEqual(await s.removeSecuredStream('B', 'x'), [], "another account's name is not removed");
        assert.deepEqual(await s.removeSecuredStream('A', 'nothing'), []);
        assert.equal(await s.accountVersion('A'), v1, 'removing nothing moves nothing');
        assert.deepEqual(await s.removeSecuredStream('A', 'x'), [
          { streamName: 'x', isRegex: false, tokenId: x.id, addedOn: at, ...secures },
          { streamName: 'x', isRegex: false, tokenId: geo.id, addedOn: at, ...deniesFr },
          { streamName: 'x', isRegex: true, tokenId: a.id, addedOn: at, ...secures },
        ]);
        assert.notEqual(await s.accountVersion('A'), v1);
        assert.deepEqual((await s.securedStreams('A')).map((e) => e.streamName), ['cam.*', 'live1']);
      });

      it('keeps the viewer-rule tokens of an account: securing ones and publish tokens with country lists, active or not', async () => {
        const s = await fresh();
        const securing = await s.createToken(tok('A', 'publish', 'secures', T0, { subscribeRequiresAuth: true }));
        const denies = await s.createToken(tok('A', 'publish', 'denies', T0, { deniedCountries: ['FR'] }));
        await s.createToken(tok('A', 'publish', 'open'));
        await s.createToken(tok('A', 'subscribe', 'own lists', T0, { allowedCountries: ['FR'] }));
        await s.createToken(tok('B', 'publish', 'other account', T0, { allowedCountries: ['FR'] }));
        const both = await s.createToken(tok('A', 'publish', 'both', T0, { subscribeRequiresAuth: true, allowedCountries: ['US'] }));
        const later = await s.createToken(tok('A', 'publish', 'later'));
        const ids = async () => (await s.viewerRuleTokens('A')).map((t) => t.id);
        assert.deepEqual(await ids(), [securing.id, denies.id, both.id]);
        assert.deepEqual((await s.viewerRuleTokens('A')).find((t) => t.id === denies.id), denies);
        assert.deepEqual((await s.securingTokens('A')).map((t) => t.id), [securing.id, both.id], 'country lists alone do not secure');
        await s.updateToken('A', 'publish', later.id, (cur) => applyTokenUpdate(cur, { updateAllowedCountries: ['GB'] }, T0, newSecret));
        assert.deepEqual(await ids(), [securing.id, denies.id, both.id, later.id]);
        await s.updateToken('A', 'publish', denies.id, (cur) => applyTokenUpdate(cur, { isActive: false }, T0, newSecret));
        await s.updateToken('A', 'publish', both.id, (cur) => applyTokenUpdate(cur, { subscribeRequiresAuth: false }, T0, newSecret));
        assert.deepEqual(await ids(), [securing.id, denies.id, both.id, later.id], 'disabled, a token keeps its lists');
        await s.updateToken('A', 'publish', denies.id, (cur) => applyTokenUpdate(cur, { updateDeniedCountries: [] }, T0, newSecret));
        assert.deepEqual(await ids(), [securing.id, both.id, later.id]);
        assert.deepEqual((await s.securingTokens('A')).map((t) => t.id), [securing.id]);
        await s.updateToken('A', 'publish', later.id, (cur) => applyTokenUpdate(cur, { updateAllowedCountries: [] }, T0, newSecret));
        await s.deleteToken('A', 'publish', both.id);
        assert.deepEqual(await ids(), [securing.id]);
        assert.deepEqual(await s.viewerRuleTokens('NONE'), []);
      });

      it("moves the account version on every write of the account's tokens or settings, and only then", async () => {
        const s = await fresh();
        await s.createAccount(account('A'));
        const v0 = await s.accountVersion('A');
        const t = await s.createToken(tok('A', 'publish', 'x'));
        const v1 = await s.accountVersion('A');
        assert.notEqual(v1, v0);
        await s.createToken(tok('B', 'publish', 'y'));
        await s.bindAddress(t, '10.0.0.1');
        await s.getToken('A', 'publish', t.id);
        assert.equal(await s.accountVersion('A'), v1, 'other accounts, binds and reads do not move it');
        await s.updateToken('A', 'publish', t.id, (cur) => applyTokenUpdate(cur, { label: 'z' }, T0, newSecret));
        const v2 = await s.accountVersion('A');
        assert.notEqual(v2, v1);
        await s.updateAccount('A', { secureViewer: true });
        const v3 = await s.accountVersion('A');
        assert.notEqual(v3, v2);
        await s.deleteToken('A', 'publish', t.id);
        assert.notEqual(await s.accountVersion('A'), v3);
        assert.equal(await s.accountVersion('NEVER'), 0);
      });

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

    describe('webhooks, deliveries and recordings', () => {
      const hook = (accountId: string, url = 'https://example.com/h') => ({
        accountId,
        url,
        secret: 'c2VjcmV0',
        isFeedHooks: true,
        isRecordingHooks: false,
        isThumbnailHooks: false,
        createdOn: new Date(T0).toISOString(),
        updatedOn: new Date(T0).toISOString(),
      });

      it('creates, reads, updates atomically, lists from a starting id, and deletes webhooks per account', async () => {
        const s = await fresh();
        const a = await s.createWebhook(hook('A'));
        const b = await s.createWebhook(hook('A', 'https://example.com/2'));
        const c = await s.createWebhook(hook('A', 'https://example.com/3'));
        await s.createWebhook(hook('B'));
        assert.deepEqual(await s.getWebhook('A', a.id), a);
        assert.equal(await s.getWebhook('B', a.id), null);
        const ids = async (q: { startingId?: number; itemCount: number; descending: boolean }) => (await s.listWebhooks('A', q)).map((w) => w.id);
        assert.deepEqual(await ids({ itemCount: 10, descending: false }), [a.id, b.id, c.id]);
        assert.deepEqual(await ids({ startingId: b.id, itemCount: 10, descending: false }), [b.id, c.id]);
        assert.deepEqual(await ids({ itemCount: 2, descending: true }), [c.id, b.id]);
        assert.deepEqual(await ids({ startingId: b.id, itemCount: 10, descending: true }), [b.id, a.id]);
        await Promise.all(Array.from({ length: 10 }, (_, i) => s.updateWebhook('A', a.id, (w) => ({ ...w, url: `${w.url}/${i}` }))));
        const after = await s.getWebhook('A', a.id);
        assert.equal(after!.url.split('/').length, 4 + 10, 'no update lost');
        assert.equal(after!.rev, 11);
        assert.equal(await s.updateWebhook('B', a.id, (w) => w), null);
        assert.equal(await s.deleteWebhook('B', a.id), false);
        assert.equal(await s.deleteWebhook('A', a.id), true);
        assert.equal(await s.getWebhook('A', a.id), null);
      });

      it('keeps the newest 100 deliveries, newest first, and forgets them with the webhook', async () => {
        const s = await fresh();
        const w = await s.createWebhook(hook('A'));
        for (let i = 0; i < 105; i++) {
          await s.addDelivery('A', w.id, { deliveryId: `d${i}`, at: new Date(T0 + i).toISOString(), event: 'feeds.started', attempt: 1, statusCode: 200, durationMs: 3 });
        }
        const log = await s.listDeliveries('A', w.id);
        assert.equal(log.length, 100);
        assert.deepEqual([log[0].deliveryId, log[99].deliveryId], ['d104', 'd5']);
        assert.deepEqual(await s.listDeliveries('B', w.id), []);
        await s.deleteWebhook('A', w.id);
        const again = await s.createWebhook(hook('A'));
        assert.deepEqual(await s.listDeliveries('A', again.id), []);
      });

      it('starts and completes recordings by stream and path, lists newest first, deletes once', async () => {
        const s = await fresh();
        const base = { accountId: 'A', streamName: 'cam1', tokenId: 3, recordedOn: new Date(T0).toISOString() };
        const started = await s.startRecording({ ...base, path: '/r/1.mp4' });
        assert.equal(started.status, 'recording');
        const done = await s.completeRecording({ ...base, path: '/r/1.mp4', completedOn: new Date(T0 + 5000).toISOString(), recordedOn: new Date(T0 + 5000).toISOString() });
        assert.deepEqual([done.id, done.status, done.recordedOn, done.completedOn], [started.id, 'completed', base.recordedOn, new Date(T0 + 5000).toISOString()]);
        const other = await s.completeRecording({ ...base, streamName: 'cam2', path: '/r/2.flv', completedOn: base.recordedOn });
        assert.notEqual(other.id, started.id);
        await s.completeRecording({ ...base, accountId: 'B', completedOn: base.recordedOn });
        assert.deepEqual((await s.listRecordings('A')).map((r) => r.id), [other.id, started.id]);
        assert.deepEqual((await s.listRecordings('A', 'cam1')).map((r) => r.id), [started.id]);
        assert.equal(await s.deleteRecording('B', started.id), null);
        assert.equal((await s.deleteRecording('A', started.id))?.id, started.id);
        assert.equal(await s.deleteRecording('A', started.id), null);
        assert.deepEqual((await s.listRecordings('A')).map((r) => r.id), [other.id]);
      });
    });

    describe('usage', () => {
      it('sums 1,000 concurrent reports for one tracking id exactly', async () => {
        const s = await fresh();
        await Promise.all(
          Array.from({ length: 1000 }, (_, i) => s.addUsage({ accountId: 'A', trackingId: 'trk', tokenId: 1, streamName: 'cam1', day: '2026-03-01', bytesOut: i + 1, bytesIn: 1 })),
        );
        assert.deepEqual(await s.usageByTracking('A', ['trk'], '2026-03-01', '2026-03-02'), [
          { trackingId: 'trk', streamName: 'cam1', bytesOut: 500500, bytesIn: 1000 },
        ]);
      });

      it('counts a reportId once per account, and sums per stream over [start, stop) days', async () => {
        const s = await fresh();
        const u = (day: string, streamName: string, bytesOut: number, trackingId: string | undefined = 'a', accountId = 'A') => ({ accountId, trackingId, tokenId: 2, streamName, day, bytesOut, bytesIn: 0 });
        assert.equal(await s.addUsage(u('2026-01-31', 'cam1', 100), 'r1'), true);
        assert.equal(await s.addUsage(u('2026-01-31', 'cam1', 100), 'r1'), false);
        assert.equal(await s.addUsage(u('2026-01-31', 'cam1', 7, 'a', 'B'), 'r1'), true, 'another account may use the same id');
        await s.addUsage(u('2026-02-01', 'cam1', 10));
        await s.addUsage(u('2026-02-01', 'cam2', 5));
        await s.addUsage(u('2026-02-03', 'cam1', 1));
        await s.addUsage(u('2026-02-01', 'cam1', 1000, 'b'));
        await s.addUsage({ accountId: 'A', tokenId: 2, streamName: 'cam1', day: '2026-02-01', bytesOut: 9999, bytesIn: 0 }); // untracked
        assert.deepEqual(await s.usageByTracking('A', ['a', 'b', 'none'], '2026-01-31', '2026-02-04'), [
          { trackingId: 'a', streamName: 'cam1', bytesOut: 111, bytesIn: 0 },
          { trackingId: 'a', streamName: 'cam2', bytesOut: 5, bytesIn: 0 },
          { trackingId: 'b', streamName: 'cam1', bytesOut: 1000, bytesIn: 0 },
        ]);
        assert.deepEqual(await s.usageByTracking('A', ['a'], '2026-02-01', '2026-02-03'), [
          { trackingId: 'a', streamName: 'cam1', bytesOut: 10, bytesIn: 0 },
          { trackingId: 'a', streamName: 'cam2', bytesOut: 5, bytesIn: 0 },
        ]);
        assert.deepEqual(await s.usageByTracking('A', ['a'], '2026-02-04', '2026-03-01'), []);
      });

      // usageDaily answers in no particular order: compare sorted by (trackingId, streamName, day)
      const key = (r: { day: string; trackingId?: string; streamName: string }) => `${r.trackingId ?? ''}\u0000${r.streamName}\u0000${r.day}`;
      const sorted = <R extends { day: string; trackingId?: string; streamName: string }>(rows: R[]) => [...rows].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));

      it('reads usage per day: by tracking id and stream, and by stream over every tracking id and untracked usage', async () => {
        const s = await fresh();
        const add = (day: string, streamName: string, bytesOut: number, bytesIn: number, trackingId?: string, tokenId = 1, accountId = 'A', reportId?: string) =>
          s.addUsage({ accountId, trackingId, tokenId, streamName, day, bytesOut, bytesIn }, reportId);
        await add('2026-01-31', 'cam1', 1, 10, 'a');
        await add('2026-02-01', 'cam1', 2, 20, 'a', 1);
        await add('2026-02-01', 'cam1', 3, 30, 'a', 2); // another token of the same tracking id
        await add('2026-02-01', 'cam2', 4, 40, 'a');
        await add('2026-02-01', 'cam1', 5, 50, 'b');
        await add('2026-02-01', 'cam1', 6, 60, undefined, 7); // untracked, token 7
        await add('2026-02-01', 'cam1', 7, 70, undefined, 8); // untracked, token 8
        await add('2026-02-03', 'cam1', 8, 80, undefined, 0); // untracked, no token
        await add('2026-02-03', 'cam3', 9, 90, 'a');
        assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), true);
        assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), false, 'a repeated report counts in no read');
        await add('2026-02-01', 'cam1', 1000, 1000, 'a', 1, 'B'); // another account
        await add('2026-02-04', 'cam1', 2000, 2000, 'a'); // on stopDay

        assert.deepEqual(sorted(await s.usageDaily('A', { trackingIds: ['a', 'b', 'none', 'a'] }, '2026-01-31', '2026-02-04')), [
          { day: '2026-01-31', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
          { day: '2026-02-01', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
          { day: '2026-02-01', trackingId: 'a', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
          { day: '2026-02-03', trackingId: 'a', streamName: 'cam3', bytesOut: 109, bytesIn: 190 },
          { day: '2026-02-01', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        ]);
        assert.deepEqual(sorted(await s.usageDaily('A', { streamNames: ['cam1', 'cam3', 'nothing', 'cam1'] }, '2026-01-31', '2026-02-04')), [
          { day: '2026-01-31', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
          { day: '2026-02-01', streamName: 'cam1', bytesOut: 2 + 3 + 5 + 6 + 7, bytesIn: 20 + 30 + 50 + 60 + 70 },
          { day: '2026-02-03', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
          { day: '2026-02-03', streamName: 'cam3', bytesOut: 109, bytesIn: 190 },
        ]);
        assert.deepEqual(await s.usageDaily('A', { streamNames: ['cam2'] }, '2026-02-02', '2026-02-03'), [], 'a day without usage has no row');
        assert.deepEqual(await s.usageDaily('A', { streamNames: ['cam1'] }, '2026-02-04', '2026-02-05'), [
          { day: '2026-02-04', streamName: 'cam1', bytesOut: 2000, bytesIn: 2000 },
        ]);
        assert.deepEqual(await s.usageDaily('B', { streamNames: ['cam1'] }, '2026-01-01', '2026-03-01'), [
          { day: '2026-02-01', streamName: 'cam1', bytesOut: 1000, bytesIn: 1000 },
        ]);
        assert.deepEqual(await s.usageDaily('A', { trackingIds: [] }, '2026-01-01', '2026-03-01'), []);
        assert.deepEqual(await s.usageDaily('A', { streamNames: [''] }, '2026-01-01', '2026-03-01'), [], 'the empty name is no stream');
        assert.deepEqual(await s.usageDaily('A', { trackingIds: [''] }, '2026-01-01', '2026-03-01'), [], 'the empty tracking id is not the untracked usage');
        assert.deepEqual(await s.usageDaily('C', { streamNames: ['cam1'] }, '2026-01-01', '2026-03-01'), []);
      });

      it('keeps per-day reads of 1,000 concurrent reports on one stream exact, tracked and untracked', async () => {
        const s = await fresh();
        await Promise.all(
          Array.from({ length: 1000 }, (_, i) =>
            s.addUsage({ accountId: 'A', trackingId: i % 2 === 0 ? 'even' : undefined, tokenId: i % 5, streamName: 'cam1', day: i < 600 ? '2026-03-01' : '2026-03-02', bytesOut: i + 1, bytesIn: 1 }),
          ),
        );
        const sum = (from: number, to: number, pick: (i: number) => boolean = () => true) => {
          let n = 0;
          for (let i = from; i < to; i++) if (pick(i)) n += i + 1;
          return n;
        };
        assert.deepEqual(sorted(await s.usageDaily('A', { streamNames: ['cam1'] }, '2026-03-01', '2026-03-03')), [
          { day: '2026-03-01', streamName: 'cam1', bytesOut: sum(0, 600), bytesIn: 600 },
          { day: '2026-03-02', streamName: 'cam1', bytesOut: sum(600, 1000), bytesIn: 400 },
        ]);
        assert.deepEqual(sorted(await s.usageDaily('A', { trackingIds: ['even'] }, '2026-03-01', '2026-03-03')), [
          { day: '2026-03-01', trackingId: 'even', streamName: 'cam1', bytesOut: sum(0, 600, (i) => i % 2 === 0), bytesIn: 300 },
          { day: '2026-03-02', trackingId: 'even', streamName: 'cam1', bytesOut: sum(600, 1000, (i) => i % 2 === 0), bytesIn: 200 },
        ]);
      });

      it('reads usage per day by stream and tracking id: a row per tracking id, the untracked usage summed under "" when not zero', async () => {
        const s = await fresh();
        const add = (day: string, streamName: string, bytesOut: number, bytesIn: number, trackingId?: string, tokenId = 1, accountId = 'A', reportId?: string) =>
          s.addUsage({ accountId, trackingId, tokenId, streamName, day, bytesOut, bytesIn }, reportId);
        await add('2026-01-31', 'cam1', 1, 10, 'a');
        await add('2026-02-01', 'cam1', 2, 20, 'a', 1);
        await add('2026-02-01', 'cam1', 3, 30, 'a', 2);
        await add('2026-02-01', 'cam2', 4, 40, 'a');
        await add('2026-02-01', 'cam1', 5, 50, 'b');
        await add('2026-02-01', 'cam1', 6, 60, undefined, 7); // untracked, token 7
        await add('2026-02-01', 'cam1', 7, 70, undefined, 8); // untracked, token 8
        await add('2026-02-03', 'cam1', 8, 80, undefined, 0); // untracked, no token
        await add('2026-02-03', 'cam2', 0, 0, undefined, 3); // untracked, nothing: no row
        await add('2026-02-03', 'cam3', 9, 90, 'a');
        assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), true);
        assert.equal(await add('2026-02-03', 'cam3', 100, 100, 'a', 1, 'A', 'rep-1'), false);
        await add('2026-02-01', 'cam1', 1000, 1000, 'a', 1, 'B'); // another account
        await add('2026-02-04', 'cam1', 2000, 2000, 'a'); // on stopDay

        assert.deepEqual(sorted(await s.usageDaily('A', { streamTracking: ['cam1', 'cam3', 'nothing', 'cam1'] }, '2026-01-31', '2026-02-04')), [
          { day: '2026-02-01', trackingId: '', streamName: 'cam1', bytesOut: 13, bytesIn: 130 },
          { day: '2026-02-03', trackingId: '', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
          { day: '2026-01-31', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
          { day: '2026-02-01', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
          { day: '2026-02-03', trackingId: 'a', streamName: 'cam3', bytesOut: 109, bytesIn: 190 },
          { day: '2026-02-01', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        ]);
        assert.deepEqual(await s.usageDaily('A', { streamTracking: ['cam2'] }, '2026-02-01', '2026-02-05'), [
          { day: '2026-02-01', trackingId: 'a', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
        ]);
        assert.deepEqual(await s.usageDaily('B', { streamTracking: ['cam1'] }, '2026-01-01', '2026-03-01'), [
          { day: '2026-02-01', trackingId: 'a', streamName: 'cam1', bytesOut: 1000, bytesIn: 1000 },
        ]);
        assert.deepEqual(await s.usageDaily('A', { streamTracking: [''] }, '2026-01-01', '2026-03-01'), [], 'the empty name is no stream');
        assert.deepEqual(await s.usageDaily('C', { streamTracking: ['cam1'] }, '2026-01-01', '2026-03-01'), []);
      });

      // usageHourly answers in no particular order, as usageDaily
      const hourKey = (r: { hour: string; trackingId?: string; streamName: string }) => `${r.trackingId ?? ''}\u0000${r.streamName}\u0000${r.hour}`;
      const byHour = <R extends { hour: string; trackingId?: string; streamName: string }>(rows: R[]) => [...rows].sort((x, y) => (hourKey(x) < hourKey(y) ? -1 : hourKey(x) > hourKey(y) ? 1 : 0));
      const byPeriod = <R extends { period: string }>(rows: R[]) => [...rows].sort((x, y) => (x.period < y.period ? -1 : 1));

      it('reads usage per hour for every selector, only reports added with an hour whose keepUntilMs has not passed; and per account by day and hour', async () => {
        const s = await fresh();
        const keep = Date.now() + 86400000;
        const add = (hour: string, streamName: string, bytesOut: number, bytesIn: number, trackingId?: string, tokenId = 1, accountId = 'A', reportId?: string, keepUntilMs = keep) =>
          s.addUsage({ accountId, trackingId, tokenId, streamName, day: hour.slice(0, 10), bytesOut, bytesIn, hourly: { hour, keepUntilMs } }, reportId);
        await add('2026-02-01T09', 'cam1', 1, 10, 'a');
        await add('2026-02-01T10', 'cam1', 2, 20, 'a', 1);
        await add('2026-02-01T10', 'cam1', 3, 30, 'a', 2); // another token of the same tracking id
        await add('2026-02-01T10', 'cam2', 4, 40, 'a');
        await add('2026-02-01T10', 'cam1', 5, 50, 'b');
        await add('2026-02-01T10', 'cam1', 6, 60, undefined, 7); // untracked, token 7
        await add('2026-02-01T10', 'cam1', 7, 70, undefined, 8); // untracked, token 8
        await add('2026-02-01T23', 'cam1', 8, 80, undefined, 0); // untracked, no token
        await add('2026-02-02T00', 'cam1', 9, 90, 'a'); // the next day
        assert.equal(await add('2026-02-02T00', 'cam1', 100, 100, 'a', 1, 'A', 'rep-h'), true);
        assert.equal(await add('2026-02-02T00', 'cam1', 100, 100, 'a', 1, 'A', 'rep-h'), false, 'a repeated report counts in no read');
        await add('2026-02-01T10', 'cam1', 1000, 1000, 'a', 1, 'B'); // another account
        await add('2026-02-02T01', 'cam1', 2000, 2000, 'a'); // on stopHour
        await s.addUsage({ accountId: 'A', trackingId: 'a', tokenId: 1, streamName: 'cam1', day: '2026-02-01', bytesOut: 50000, bytesIn: 0 }); // per day only
        await add('2026-02-01T11', 'cam1', 70000, 0, 'a', 1, 'A', undefined, Date.now() - 1); // its hour no longer kept: per day only

        assert.deepEqual(byHour(await s.usageHourly('A', { trackingIds: ['a', 'b', 'none', 'a'] }, '2026-02-01T09', '2026-02-02T01')), [
          { hour: '2026-02-01T09', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
          { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
          { hour: '2026-02-02T00', trackingId: 'a', streamName: 'cam1', bytesOut: 109, bytesIn: 190 },
          { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
          { hour: '2026-02-01T10', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        ]);
        assert.deepEqual(byHour(await s.usageHourly('A', { streamNames: ['cam1', 'cam2', 'nothing'] }, '2026-02-01T09', '2026-02-02T01')), [
          { hour: '2026-02-01T09', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
          { hour: '2026-02-01T10', streamName: 'cam1', bytesOut: 2 + 3 + 5 + 6 + 7, bytesIn: 20 + 30 + 50 + 60 + 70 },
          { hour: '2026-02-01T23', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
          { hour: '2026-02-02T00', streamName: 'cam1', bytesOut: 109, bytesIn: 190 },
          { hour: '2026-02-01T10', streamName: 'cam2', bytesOut: 4, bytesIn: 40 },
        ]);
        assert.deepEqual(byHour(await s.usageHourly('A', { streamTracking: ['cam1'] }, '2026-02-01T09', '2026-02-02T01')), [
          { hour: '2026-02-01T10', trackingId: '', streamName: 'cam1', bytesOut: 13, bytesIn: 130 },
          { hour: '2026-02-01T23', trackingId: '', streamName: 'cam1', bytesOut: 8, bytesIn: 80 },
          { hour: '2026-02-01T09', trackingId: 'a', streamName: 'cam1', bytesOut: 1, bytesIn: 10 },
          { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
          { hour: '2026-02-02T00', trackingId: 'a', streamName: 'cam1', bytesOut: 109, bytesIn: 190 },
          { hour: '2026-02-01T10', trackingId: 'b', streamName: 'cam1', bytesOut: 5, bytesIn: 50 },
        ]);
        assert.deepEqual(await s.usageHourly('A', { streamNames: ['cam1'] }, '2026-02-01T11', '2026-02-01T12'), [], 'an hour whose keepUntilMs had passed is not kept');
        assert.deepEqual(await s.usageHourly('B', { streamTracking: ['cam1'] }, '2026-02-01T00', '2026-02-03T00'), [
          { hour: '2026-02-01T10', trackingId: 'a', streamName: 'cam1', bytesOut: 1000, bytesIn: 1000 },
        ]);
        assert.deepEqual(await s.usageHourly('A', { trackingIds: [''] }, '2026-02-01T00', '2026-02-03T00'), [], 'the empty tracking id is not the untracked usage');
        assert.deepEqual(await s.usageHourly('C', { streamNames: ['cam1'] }, '2026-02-01T00', '2026-02-03T00'), []);

        assert.deepEqual(byPeriod(await s.usageAccount('A', 'hour', '2026-02-01T09', '2026-02-02T01')), [
          { period: '2026-02-01T09', bytesOut: 1, bytesIn: 10 },
          { period: '2026-02-01T10', bytesOut: 2 + 3 + 4 + 5 + 6 + 7, bytesIn: 270 },
          { period: '2026-02-01T23', bytesOut: 8, bytesIn: 80 },
          { period: '2026-02-02T00', bytesOut: 109, bytesIn: 190 },
        ]);
        assert.deepEqual(byPeriod(await s.usageAccount('A', 'day', '2026-01-31', '2026-02-03')), [
          { period: '2026-02-01', bytesOut: 1 + 27 + 8 + 50000 + 70000, bytesIn: 10 + 270 + 80 },
          { period: '2026-02-02', bytesOut: 109 + 2000, bytesIn: 190 + 2000 },
        ]);
        assert.deepEqual(await s.usageAccount('A', 'day', '2026-02-02', '2026-02-03'), [{ period: '2026-02-02', bytesOut: 2109, bytesIn: 2190 }]);
        assert.deepEqual(await s.usageAccount('B', 'hour', '2026-02-01T00', '2026-02-03T00'), [{ period: '2026-02-01T10', bytesOut: 1000, bytesIn: 1000 }]);
        assert.deepEqual(await s.usageAccount('C', 'day', '2026-01-01', '2026-03-01'), []);
      });

      it('keeps per-hour and per-account reads of 1,000 concurrent reports exact, tracked and untracked', async () => {
        const s = await fresh();
        const keepUntilMs = Date.now() + 86400000;
        await Promise.all(
          Array.from({ length: 1000 }, (_, i) => {
            const hour = i < 600 ? '2026-03-01T23' : '2026-03-02T00';
            return s.addUsage({ accountId: 'A', trackingId: i % 2 === 0 ? 'even' : undefined, tokenId: i % 5, streamName: 'cam1', day: hour.slice(0, 10), bytesOut: i + 1, bytesIn: 1, hourly: { hour, keepUntilMs } });
          }),
        );
        const sum = (from: number, to: number, pick: (i: number) => boolean = () => true) => {
          let n = 0;
          for (let i = from; i < to; i++) if (pick(i)) n += i + 1;
          return n;
        };
        const odd = (i: number) => i % 2 === 1;
        assert.deepEqual(byHour(await s.usageHourly('A', { streamTracking: ['cam1'] }, '2026-03-01T23', '2026-03-02T01')), [
          { hour: '2026-03-01T23', trackingId: '', streamName: 'cam1', bytesOut: sum(0, 600, odd), bytesIn: 300 },
          { hour: '2026-03-02T00', trackingId: '', streamName: 'cam1', bytesOut: sum(600, 1000, odd), bytesIn: 200 },
          { hour: '2026-03-01T23', trackingId: 'even', streamName: 'cam1', bytesOut: sum(0, 600, (i) => !odd(i)), bytesIn: 300 },
          { hour: '2026-03-02T00', trackingId: 'even', streamName: 'cam1', bytesOut: sum(600, 1000, (i) => !odd(i)), bytesIn: 200 },
        ]);
        assert.deepEqual(byPeriod(await s.usageAccount('A', 'hour', '2026-03-01T23', '2026-03-02T01')), [
          { period: '2026-03-01T23', bytesOut: sum(0, 600), bytesIn: 600 },
          { period: '2026-03-02T00', bytesOut: sum(600, 1000), bytesIn: 400 },
        ]);
        assert.deepEqual(byPeriod(await s.usageAccount('A', 'day', '2026-03-01', '2026-03-03')), [
          { period: '2026-03-01', bytesOut: sum(0, 600), bytesIn: 600 },
          { period: '2026-03-02', bytesOut: sum(600, 1000), bytesIn: 400 },
        ]);
      });
    });

    describe('sessions', () => {
      const session = (over: Partial<Session> & { sessionId: string }): Session => sessionRecord({ accountId: 'A', tokenId: 4, ...over }, T0);
      const end = (reason: SessionEndReason, at = T0) => ({ reason, at: new Date(at).toISOString(), keepSeconds: 600 });

      it('starts, reads and ends a session once (kept, marked ended), and expires a lost one', async () => {
        let now = T0;
        const s = await fresh(() => now);
        const sess = session({ sessionId: '5f1c2b0e-6a3d-4c1e-9d0b-1d2f3a4b5c6d', trackingId: 'grp', clientIp: '192.0.2.7', native: { id: 'x', path: 'cam1' } });
        await s.startSession(sess, 60);
        await s.startSession(session({ caller: 'srs', sessionId: 'x1' }), 1);
        assert.deepEqual(await s.getSession('mediamtx', sess.sessionId), sess);
        assert.deepEqual(await s.getSessionById('A', sess.id), sess);
        assert.equal(await s.getSessionById('B', sess.id), null, "another account's session is invisible");
        assert.equal(await s.getSession('srs', sess.sessionId), null);
        const ends = await Promise.all([s.endSession('mediamtx', sess.sessionId, end('done')), s.endSession('mediamtx', sess.sessionId, end('done'))]);
        const ended = { ...sess, endedReason: 'done', endedOn: new Date(T0).toISOString() };
        assert.deepEqual(ends.filter(Boolean), [ended]);
        assert.deepEqual(await s.getSession('mediamtx', sess.sessionId), ended, 'kept after its end, marked ended');
        assert.deepEqual((await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['x1']);
        if (s.kind === 'sqlite') now += 1001;
        else await new Promise((r) => setTimeout(r, 1100)); // Redis expires keys on its own clock
        assert.equal(await s.getSession('srs', 'x1'), null);
        assert.equal((await s.listSessions('A', {}, { offset: 0, limit: 10 })).total, 0);
      });

      it('touch keeps a live session alive and answers an ended one as it is', async () => {
        const s = await fresh(() => Date.now());
        const t0 = Date.now();
        await s.startSession(session({ sessionId: 'r1', lastSeenOn: new Date(t0).toISOString() }), 1);
        await new Promise((r) => setTimeout(r, 600));
        const at = new Date(Date.now()).toISOString();
        assert.equal((await s.touchSession('mediamtx', 'r1', 1, at))?.lastSeenOn, at);
        await new Promise((r) => setTimeout(r, 600));
        assert.equal((await s.getSession('mediamtx', 'r1'))?.endedReason, undefined, 'alive past its first second');
        await s.endSession('mediamtx', 'r1', end('token_revoked', Date.now()));
        assert.equal((await s.touchSession('mediamtx', 'r1', 60, new Date().toISOString()))?.endedReason, 'token_revoked');
        assert.equal(await s.touchSession('mediamtx', 'nope', 60, at), null);
      });

      it('admits exactly maxConcurrent of concurrent starts, and frees a slot when one ends', async () => {
        const s = await fresh(() => Date.now());
        const at = new Date().toISOString();
        const tries = Array.from({ length: 20 }, (_, i) => session({ sessionId: `c${i}`, lastSeenOn: at }));
        const results = await Promise.all(tries.map((t) => s.admitSession(t, 60, { maxConcurrent: 3 })));
        assert.equal(results.filter((r) => r.admitted).length, 3);
        assert.deepEqual([...new Set(results.filter((r) => !r.admitted).map((r) => (r.admitted ? '' : r.reason)))], ['session_limit']);
        const admitted = tries.filter((_, i) => results[i]!.admitted);
        assert.equal((await s.listSessions('A', { tokenId: 4 }, { offset: 0, limit: 10 })).total, 3);
        await s.endSession('mediamtx', admitted[0]!.sessionId, end('done'));
        assert.equal((await s.admitSession(session({ sessionId: 'late', lastSeenOn: at }), 60, { maxConcurrent: 3 })).admitted, true);
        assert.deepEqual(await s.admitSession(session({ sessionId: 'later', lastSeenOn: at }), 60, { maxConcurrent: 3 }), { admitted: false, reason: 'session_limit' });
      });

      it('admits exactly maxUses admissions ever, counting the unlimited starts too', async () => {
        const s = await fresh(() => Date.now());
        const at = new Date().toISOString();
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.admitSession(session({ sessionId: `u${i}`, tokenId: 9, lastSeenOn: at }), 60, { maxUses: 1 })));
        assert.equal(results.filter((r) => r.admitted).length, 1);
        const first = results.findIndex((r) => r.admitted);
        await s.endSession('mediamtx', `u${first}`, end('done'));
        assert.deepEqual(await s.admitSession(session({ sessionId: 'again', tokenId: 9, lastSeenOn: at }), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
        await s.startSession(session({ sessionId: 'free', tokenId: 10, lastSeenOn: at }), 60);
        assert.deepEqual(await s.admitSession(session({ sessionId: 'second', tokenId: 10, lastSeenOn: at }), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
      });

      it('with tokenRev, admits only while the token is at that revision; a changed or deleted token registers nothing', async () => {
        const s = await fresh(() => Date.now());
        const at = new Date().toISOString();
        const t = await s.createToken(tok('A', 'subscribe', 'limited', T0, { maxConcurrentSessions: 5 }));
        const mine = (sid: string) => session({ sessionId: sid, tokenId: t.id, lastSeenOn: at });
        assert.equal((await s.admitSession(mine('r1'), 60, { maxConcurrent: 5, tokenRev: t.rev })).admitted, true);
        const edited = await s.updateToken('A', 'subscribe', t.id, (cur) => applyTokenUpdate(cur, { label: 'renamed' }, T0, newSecret));
        assert.ok(edited && edited.rev !== t.rev);
        assert.deepEqual(await s.admitSession(mine('r2'), 60, { maxConcurrent: 5, tokenRev: t.rev }), { admitted: false, reason: 'token_changed' });
        assert.equal(await s.getSession('mediamtx', 'r2'), null, 'nothing registered');
        assert.deepEqual((await s.listSessions('A', { tokenId: t.id }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['r1']);
        // no use counted for the refused one: one use left of two
        assert.equal((await s.admitSession(mine('r3'), 60, { maxUses: 2, tokenRev: edited!.rev })).admitted, true);
        assert.deepEqual(await s.admitSession(mine('r4'), 60, { maxUses: 2, tokenRev: edited!.rev }), { admitted: false, reason: 'uses_exhausted' });
        // the same connection asking again with a stale revision keeps its earlier record
        assert.deepEqual(await s.admitSession(mine('r1'), 60, { tokenRev: t.rev }), { admitted: false, reason: 'token_changed' });
        assert.equal((await s.getSession('mediamtx', 'r1'))?.endedReason, undefined);
        assert.equal(await s.deleteToken('A', 'subscribe', t.id), true);
        assert.deepEqual(await s.admitSession(mine('r5'), 60, { tokenRev: edited!.rev }), { admitted: false, reason: 'token_changed' });
        // without tokenRev nothing is checked (a token-less session, or a caller that does not ask)
        assert.equal((await s.admitSession(mine('r6'), 60, {})).admitted, true);
      });

      it('a second publisher is refused (reject) or ends the first (replace)', async () => {
        const s = await fresh(() => Date.now());
        const at = new Date().toISOString();
        const pub = (sid: string, tokenId: number) => session({ sessionId: sid, action: 'publish', tokenId, lastSeenOn: at, feedId: `f-${sid}` });
        assert.equal((await s.admitSession(pub('p1', 1), 60, { publishConflict: 'reject' })).admitted, true);
        assert.deepEqual(await s.admitSession(pub('p2', 2), 60, { publishConflict: 'reject' }), { admitted: false, reason: 'stream_taken' });
        await s.startSession(session({ sessionId: 'v1', lastSeenOn: at }), 60);
        const r = await s.admitSession(pub('p3', 3), 60, { publishConflict: 'replace' });
        assert.equal(r.admitted, true);
        assert.deepEqual(r.admitted ? r.replaced.map((x) => [x.sessionId, x.endedReason]) : [], [['p1', 'replaced']]);
        assert.equal((await s.getSession('mediamtx', 'p1'))?.endedReason, 'replaced');
        const live = await s.listSessions('A', { streamName: 'cam1' }, { offset: 0, limit: 10 });
        assert.deepEqual(live.items.map((x) => x.sessionId).sort(), ['p3', 'v1']);
        assert.deepEqual((await s.listSessions('A', { streamName: 'cam1', action: 'publish' }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['p3']);
        // the same token taking over frees its own slot
        assert.equal((await s.admitSession(pub('p4', 3), 60, { publishConflict: 'replace', maxConcurrent: 1 })).admitted, true);
      });

      it('a refused admission leaves the connection\'s earlier record as it was; an admitted one replaces it without counting it', async () => {
        const s = await fresh(() => Date.now());
        const at = new Date().toISOString();
        const rec = (sid: string, id: string, over: Partial<Session> = {}) => session(Object.assign({ sessionId: sid, id, startedOn: at, lastSeenOn: at }, over));
        const ids = async () => (await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => `${x.sessionId}:${x.id}:${x.action}`).sort();
        assert.equal((await s.admitSession(rec('p1', 'a1', { action: 'publish', tokenId: 1, feedId: 'f1' }), 60, { publishConflict: 'reject' })).admitted, true);
        assert.equal((await s.admitSession(rec('c7', 'a2', { tokenId: 2 }), 60, {})).admitted, true);
        // the same connection (c7) asking to publish the taken stream: refused, its viewing record stays
        assert.deepEqual(await s.admitSession(rec('c7', 'a3', { action: 'publish', tokenId: 2, feedId: 'f3' }), 60, { publishConflict: 'reject' }), { admitted: false, reason: 'stream_taken' });
        assert.deepEqual(await ids(), ['c7:a2:subscribe', 'p1:a1:publish']);
        assert.equal((await s.getSession('mediamtx', 'c7'))?.id, 'a2');
        // refused by the token's limits: the same
        assert.deepEqual(await s.admitSession(rec('c7', 'a4', { tokenId: 2 }), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
        assert.deepEqual(await s.admitSession(rec('c9', 'a5', { tokenId: 2 }), 60, { maxConcurrent: 1 }), { admitted: false, reason: 'session_limit' });
        assert.deepEqual(await ids(), ['c7:a2:subscribe', 'p1:a1:publish']);
        // admitted again, the connection's earlier record is not one of the token's sessions it counts, and goes
        assert.deepEqual(await s.admitSession(rec('c7', 'a6', { tokenId: 2 }), 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
        assert.deepEqual(await ids(), ['c7:a6:subscribe', 'p1:a1:publish']);
        // the publishing connection registering again does not conflict with itself
        assert.deepEqual(await s.admitSession(rec('p1', 'a7', { action: 'publish', tokenId: 1, feedId: 'f7' }), 60, { publishConflict: 'reject' }), { admitted: true, replaced: [] });
        assert.deepEqual(await ids(), ['c7:a6:subscribe', 'p1:a7:publish']);
      });

      it('lists an account\'s live sessions by stream, token and action, oldest first, a page at a time', async () => {
        const s = await fresh(() => Date.now());
        const t = Date.now();
        const iso = (ms: number) => new Date(ms).toISOString();
        for (let i = 0; i < 5; i++) {
          await s.startSession(session({ sessionId: `l${i}`, tokenId: i % 2 === 0 ? 4 : 5, streamName: i < 3 ? 'cam1' : 'cam2', startedOn: iso(t + i), lastSeenOn: iso(t) }), 60);
        }
        await s.startSession(session({ sessionId: 'other', accountId: 'B', lastSeenOn: iso(t) }), 60);
        const all = await s.listSessions('A', {}, { offset: 1, limit: 2 });
        assert.deepEqual([all.total, all.items.map((x) => x.sessionId)], [5, ['l1', 'l2']]);
        assert.deepEqual((await s.listSessions('A', { tokenId: 4 }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['l0', 'l2', 'l4']);
        assert.deepEqual((await s.listSessions('A', { streamName: 'cam2', tokenId: 5 }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['l3']);
        assert.equal((await s.listSessions('A', { action: 'publish' }, { offset: 0, limit: 10 })).total, 0);
        assert.deepEqual((await s.listSessions('B', {}, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['other']);
        // The gauge's counts are written after the admission without a wait (on Redis Cluster they
        // live on another node, so they may land a moment later): read until they settle, 2 s at most.
        const want = [{ caller: 'mediamtx', action: 'subscribe', count: 6 }];
        let counts = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx');
        for (let i = 0; i < 40 && JSON.stringify(counts) !== JSON.stringify(want); i++) {
          await new Promise((r) => setTimeout(r, 50));
          counts = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx');
        }
        assert.deepEqual(counts, want);
      });

      it('a connection registered again is one live session in the gauge, whatever its action', async () => {
        const s = await fresh(() => Date.now());
        const t = new Date().toISOString();
        const counts = async (want: Array<{ action: string; count: number }>) => {
          const key = (c: Array<{ action: string; count: number }>) => JSON.stringify(c.map((x) => [x.action, x.count]).sort());
          // on Redis Cluster the gauge lives on another node and lands a moment later: 2 s at most
          let got = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx' && c.count > 0);
          for (let i = 0; i < 40 && key(got) !== key(want); i++) {
            await new Promise((r) => setTimeout(r, 50));
            got = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx' && c.count > 0);
          }
          assert.equal(key(got), key(want));
        };
        assert.deepEqual(await s.admitSession(session({ sessionId: 'again', id: 'g1', startedOn: t, lastSeenOn: t }), 60, {}), { admitted: true, replaced: [] });
        assert.deepEqual(await s.admitSession(session({ sessionId: 'again', id: 'g2', startedOn: t, lastSeenOn: t }), 60, {}), { admitted: true, replaced: [] });
        await counts([{ action: 'subscribe', count: 1 }]);
        const asPublisher = session({ sessionId: 'again', id: 'g3', action: 'publish', startedOn: t, lastSeenOn: t });
        assert.deepEqual(await s.admitSession(asPublisher, 60, {}), { admitted: true, replaced: [] });
        await counts([{ action: 'publish', count: 1 }]);
        assert.deepEqual((await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => x.id), ['g3']);
      });

      it('hands each due expiry cut to exactly one taker', async () => {
        const s = await fresh(() => Date.now());
        await s.scheduleExpiry('A', 7, T0 + 1000);
        await s.scheduleExpiry('A', 8, T0 + 5000);
        await s.scheduleExpiry('A', 8, T0 + 500); // replaced: due earlier
        assert.deepEqual(await s.takeDueExpiries(T0, 10), []);
        const takes = await Promise.all([s.takeDueExpiries(T0 + 1000, 10), s.takeDueExpiries(T0 + 1000, 10), s.takeDueExpiries(T0 + 1000, 10)]);
        assert.deepEqual(takes.flat().sort((a, b) => a.tokenId - b.tokenId), [{ accountId: 'A', tokenId: 7 }, { accountId: 'A', tokenId: 8 }]);
        assert.deepEqual(await s.takeDueExpiries(T0 + 9000, 10), []);
      });
    });

    describe('live streams', () => {
      it('lists publishing tokens per stream and per account, ends streams, and expires lost ones', async () => {
        let now = T0;
        const s = await fresh(() => now);
        const live = (accountId: string, streamName: string, tokenId: number, feedId: string) => ({
          accountId,
          streamName,
          tokenId,
          feedId,
          startedOn: new Date(now).toISOString(),
          caller: 'test',
        });
        await s.startLiveStream(live('A', 'cam1', 7, 'f1'), 60);
        await s.startLiveStream(live('A', 'cam2', 3, 'f2'), 600);
        await s.startLiveStream(live('B', 'cam1', 9, 'f3'), 600);
        assert.deepEqual(await s.activePublishTokenIds('A', 'cam1'), [7]);
        assert.deepEqual(await s.getLiveStream('A', 'cam1'), live('A', 'cam1', 7, 'f1'));
        assert.equal(await s.getLiveStream('A', 'nope'), null);
        assert.deepEqual(await s.activePublishTokenIds('A'), [3, 7]);
        assert.deepEqual(await s.activePublishTokenIds('A', 'nope'), []);
        assert.equal(await s.endLiveStream('A', 'cam2', 'other-feed'), null);
        assert.deepEqual(await s.endLiveStream('A', 'cam2', 'f2'), live('A', 'cam2', 3, 'f2'));
        assert.deepEqual(await s.activePublishTokenIds('A'), [7]);
        now += 61_000;
        assert.deepEqual(await s.activePublishTokenIds('A'), []);
        assert.deepEqual(await s.activePublishTokenIds('B'), [9]);
        // an expired entry cleared by a read does not stand in the way of the stream starting again
        await s.startLiveStream({ ...live('A', 'cam1', 8, 'f4'), startedOn: new Date(now).toISOString() }, 60);
        assert.deepEqual(await s.activePublishTokenIds('A'), [8]);
        assert.equal((await s.getLiveStream('A', 'cam1'))?.feedId, 'f4');
      });

      it("moves the account version when a stream's publishing token changes, once the account has viewer-rule tokens", async () => {
        let now = T0;
        const s = await fresh(() => now);
        await s.createAccount(account('A'));
        const live = (streamName: string, tokenId: number, feedId: string) => ({ accountId: 'A', streamName, tokenId, feedId, startedOn: new Date(now).toISOString(), caller: 'test' });
        const ver = () => s.accountVersion('A');
        let v = await ver();
        // no token of the account sets viewer rules: whoever publishes, no viewer decision changes
        await s.startLiveStream(live('cam1', 7, 'f1'), 60);
        await s.endLiveStream('A', 'cam1', 'f1');
        assert.equal(await ver(), v);
        await s.createToken(tok('A', 'publish', 'geo', T0, { deniedCountries: ['FR'] }));
        v = await ver();
        await s.startLiveStream(live('cam1', 7, 'f1'), 60);
        assert.equal(await ver(), v + 1, 'live now');
        await s.startLiveStream(live('cam1', 7, 'f2'), 60);
        assert.equal(await ver(), v + 1, 'the same token again: nothing changes for viewers');
        await s.startLiveStream(live('cam1', 8, 'f3'), 60);
        assert.equal(await ver(), v + 2, 'another publishing token');
        assert.equal(await s.endLiveStream('A', 'cam1', 'f2'), null);
        assert.equal(await ver(), v + 2, 'a feed that is not the live one ends nothing');
        await s.endLiveStream('A', 'cam1', 'f3');
        assert.equal(await ver(), v + 3, 'ended');
        await s.startLiveStream(live('cam2', 7, 'f4'), 60);
        now += 61_000;
        assert.equal(await s.getLiveStream('A', 'cam2'), null);
        await s.startLiveStream(live('cam2', 7, 'f5'), 60);
        assert.equal(await ver(), v + 5, 'the same token after its entry expired: live again');
        await s.startLiveStream(live('cam3', 7, 'f6'), 60);
        assert.equal(await s.accountVersion('B'), 0, 'other accounts untouched');
      });
    });

    describe('marks', () => {
      it("swapMark answers the value held before; 'absent' and 'present' write only then; marks are per account and expire by the store's clock", async () => {
        let now = T0;
        const s = await fresh(() => now);
        assert.equal(await s.swapMark('M', 'viewers:cam1', 'watched', 1000, 'present'), null, 'none held');
        assert.equal(await s.swapMark('M', 'viewers:cam1', 'd:1', 1000, 'present'), null, "'present' set nothing");
        assert.equal(await s.swapMark('M', 'viewers:cam1', 'watched', 1000, 'absent'), null);
        assert.equal(await s.swapMark('M', 'viewers:cam1', 'other', 1000, 'absent'), 'watched', "held: 'absent' writes nothing");
        assert.equal(await s.swapMark('M', 'viewers:cam1', 'd:1', 1000, 'present'), 'watched');
        assert.equal(await s.swapMark('N', 'viewers:cam1', 'x', 1000), null, "another account's mark of the same name");
        assert.equal(await s.takeMark('M', 'viewers:cam1', 'watched'), false, 'it holds d:1');
        assert.equal(await s.takeMark('M', 'viewers:cam1', 'd:1'), true);
        assert.equal(await s.takeMark('M', 'viewers:cam1', 'd:1'), false, 'taken');
        assert.equal(await s.swapMark('M', 'viewers:cam1', 'watched', 1000, 'present'), null, 'taken: none held');
        assert.equal(await s.swapMark('N', 'viewers:cam1', 'y', 1000), 'x');

        assert.equal(await s.swapMark('M', 'a', 'v', 1000), null);
        now += 999;
        assert.equal(await s.swapMark('M', 'a', 'w', 1000, 'absent'), 'v', 'alive 1 ms before its time');
        now += 1;
        assert.equal(await s.takeMark('M', 'a', 'v'), false, 'expired');
        assert.equal(await s.swapMark('M', 'a', 'w', 1000, 'present'), null, 'expired: none held');
        assert.equal(await s.swapMark('M', 'a', 'w', 1000, 'absent'), null);
        assert.equal(await s.swapMark('M', 'a', 'x', 5000), 'w', "'always' replaces");
        now += 4000;
        assert.equal(await s.swapMark('M', 'a', 'y', 5000, 'present'), 'x', 'and renews: alive after the old ttl');
      });

      it("concurrent 'absent' swaps: exactly one finds none; concurrent takes: exactly one removes it", async () => {
        const s = await fresh();
        const swaps = await Promise.all(Array.from({ length: 10 }, (_, i) => s.swapMark('M', 'attempt:cam1', `v${i}`, 10_000, 'absent')));
        assert.equal(swaps.filter((v) => v === null).length, 1);
        const winner = `v${swaps.indexOf(null)}`;
        assert.deepEqual(new Set(swaps.filter((v) => v !== null)), new Set([winner]));
        const takes = await Promise.all(Array.from({ length: 10 }, () => s.takeMark('M', 'attempt:cam1', winner)));
        assert.equal(takes.filter(Boolean).length, 1);
      });
    });

    describe('concurrent writes', () => {
      const at = (ms: number) => new Date(T0 + ms).toISOString();

      it('20 recordings started and completed concurrently each complete their own start', async () => {
        const s = await fresh();
        const runs = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const base = { accountId: 'A', streamName: 'cam1', tokenId: i + 1, path: `/r/${i}.mp4` };
            const started = await s.startRecording({ ...base, recordedOn: at(i) });
            const done = await s.completeRecording({ ...base, tokenId: undefined, recordedOn: at(1000 + i), completedOn: at(2000 + i) });
            return { started, done };
          }),
        );
        for (const [i, { started, done }] of runs.entries()) {
          assert.deepEqual(done, { ...started, status: 'completed', completedOn: at(2000 + i) }, `path ${i}`);
        }
        const listed = await s.listRecordings('A');
        assert.deepEqual(
          listed.map((r) => [r.id, r.status, r.recordedOn]).sort((a, b) => Number(a[0]) - Number(b[0])),
          runs.map(({ started }) => [started.id, 'completed', started.recordedOn]).sort((a, b) => Number(a[0]) - Number(b[0])),
        );
      });

      it('10 concurrent completions of one open recording: exactly one completes it, each other one is stored as a new completed recording', async () => {
        const s = await fresh();
        const base = { accountId: 'A', streamName: 'cam1', path: '/r/x.mp4' };
        const started = await s.startRecording({ ...base, tokenId: 7, recordedOn: at(0) });
        const done = await Promise.all(Array.from({ length: 10 }, (_, i) => s.completeRecording({ ...base, recordedOn: at(100 + i), completedOn: at(200 + i) })));
        const merged = done.filter((r) => r.id === started.id);
        assert.equal(merged.length, 1);
        assert.deepEqual([merged[0].recordedOn, merged[0].tokenId, merged[0].status], [at(0), 7, 'completed']);
        assert.equal(new Set(done.map((r) => r.id)).size, 10, 'distinct ids');
        const listed = await s.listRecordings('A');
        assert.equal(listed.length, 10);
        assert.deepEqual(new Set(listed.map((r) => r.status)), new Set(['completed']));
        assert.deepEqual(listed.map((r) => r.id).sort((a, b) => a - b), done.map((r) => r.id).sort((a, b) => a - b));
      });

      it('deleting a completed recording leaves the open recording of the same stream and path to be completed', async () => {
        const s = await fresh();
        const base = { accountId: 'A', streamName: 'cam1', path: '/r/same.mp4' };
        const first = await s.startRecording({ ...base, recordedOn: at(0) });
        await s.completeRecording({ ...base, recordedOn: at(0), completedOn: at(10) });
        const second = await s.startRecording({ ...base, recordedOn: at(20) });
        assert.equal((await s.deleteRecording('A', first.id))?.id, first.id);
        const done = await s.completeRecording({ ...base, recordedOn: at(25), completedOn: at(30) });
        assert.deepEqual([done.id, done.recordedOn, done.status], [second.id, at(20), 'completed']);
        assert.deepEqual((await s.listRecordings('A')).map((r) => r.id), [second.id]);
      });

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
  });
}
