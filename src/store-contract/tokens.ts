// The tokens: ids, scoped reads, lists, atomic updates, deletes; and the lookups the decision path
// makes (by value, by id, the securing and viewer-rule tokens, the secured streams), with the
// account version their writes move (src/store/tokens.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyTokenUpdate, tokenHash } from '../domain/tokens.js';
import { newSecret } from '../domain/secrets.js';
import type { AccountStore, BindStore, StoreLifecycle, TokenStore } from '../store/store.js';
import { account, T0, tok } from './fixtures.js';
import type { Fresh } from './factory.js';

/** What the tokens part runs on: the tokens, the accounts whose version they move, and the binds that do not. */
export type TokensUnderTest = TokenStore & AccountStore & BindStore & StoreLifecycle;

export function tokenTests(fresh: Fresh<TokensUnderTest>): void {
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
  });
}
