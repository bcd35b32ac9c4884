// The credential issuers: ids, scoped reads, lists, patches with revisions, deletes, the
// deployment-wide lookup by `iss`, and the uniqueness of `(iss, kid)` across every account, racing
// writes included, with the account version every write moves (src/store/issuers.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IssuerRecord } from '../domain/issuers.js';
import type { AccountStore, IssuerStore, NewIssuer, StoreLifecycle } from '../store/store.js';
import { named, T0 } from './fixtures.js';
import type { Fresh } from './factory.js';

/** What the issuers part runs on: the issuers, and the accounts whose version their writes move. */
export type IssuersUnderTest = IssuerStore & AccountStore & StoreLifecycle;

/** An issuer's fields: `iss` and key ids as given, everything else a plain RS256 issuer's. */
export const issuerFields = (iss: string | null, keyIds: string[] = [], extra: Partial<NewIssuer> = {}): NewIssuer => ({
  label: `idp ${iss ?? '(none)'}`,
  type: 'jwt',
  isActive: true,
  policyTokenId: 7,
  issuer: iss,
  keyIds,
  audience: ['streamgate'],
  algorithms: ['RS256'],
  jwks: { keys: [{ kty: 'RSA', kid: 'k1', n: 'sXch', e: 'AQAB' }] },
  jwksUrl: null,
  secret: null,
  clockSkewSeconds: 30,
  maxLifetimeSeconds: null,
  claims: { stream: 'sub' },
  cookieName: null,
  revoked: { jti: [], sub: [], kid: [] },
  settings: null,
  signingKey: null,
  secretFrom: null,
  signingKeyFrom: null,
  ...extra,
});

const ISS = 'https://idp.example.com/';

export function issuerTests(fresh: Fresh<IssuersUnderTest>): void {
  describe('credential issuers', () => {
    it('creates with an id, rev 1 and the store clock; reads, lists in id order and deletes within the account only', async () => {
      let now = T0;
      const s = await fresh(() => now);
      const at = new Date(T0).toISOString();
      const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
      assert.ok(Number.isInteger(a.id) && a.id > 0);
      assert.deepEqual(a, { ...issuerFields(ISS, ['k1']), id: a.id, accountId: 'A', addedOn: at, updatedOn: at, rev: 1 });
      now += 5000;
      const hmac = issuerFields(null, [], { algorithms: ['HS256'], jwks: null, secret: 'c2VjcmV0LXNlY3JldA', maxLifetimeSeconds: 600, cookieName: 'sg_jwt' });
      const b = await s.createIssuer('A', hmac);
      const other = await s.createIssuer('B', issuerFields('https://other.example/'));
      assert.notEqual(a.id, b.id);
      assert.deepEqual(await s.getIssuer('A', a.id), a);
      assert.deepEqual(await s.getIssuer('A', b.id), { ...hmac, id: b.id, accountId: 'A', addedOn: new Date(T0 + 5000).toISOString(), updatedOn: new Date(T0 + 5000).toISOString(), rev: 1 });
      assert.equal(await s.getIssuer('B', a.id), null, "another account's issuer is invisible");
      assert.equal(await s.getIssuer('A', other.id), null);
      assert.equal(await s.getIssuer('A', b.id + other.id + 1000), null);
      assert.deepEqual((await s.listIssuers('A')).map((i) => i.id), [a.id, b.id].sort((x, y) => x - y));
      assert.deepEqual(await s.listIssuers('B'), [other]);
      assert.deepEqual(await s.listIssuers('C'), []);
      assert.equal(await s.deleteIssuer('B', a.id), false);
      assert.deepEqual(await s.getIssuer('A', a.id), a);
      assert.equal(await s.deleteIssuer('A', a.id), true);
      assert.equal(await s.deleteIssuer('A', a.id), false);
      assert.equal(await s.getIssuer('A', a.id), null);
      assert.deepEqual((await s.listIssuers('A')).map((i) => i.id), [b.id]);
      assert.deepEqual(await s.issuersOf(ISS), []);
    });

    it('updates by patch: rev + 1, updatedOn moved, other fields kept; a stale expected rev is refused with nothing written', async () => {
      let now = T0;
      const s = await fresh(() => now);
      const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
      now += 60_000;
      const later = new Date(T0 + 60_000).toISOString();
      const revoked = { jti: ['j1'], sub: [], kid: ['old'] };
      const u = await s.updateIssuer('A', a.id, { label: 'renamed', isActive: false, revoked, keyIds: ['k1', 'k2'] }, 1);
      const expected: IssuerRecord = { ...a, label: 'renamed', isActive: false, revoked, keyIds: ['k1', 'k2'], updatedOn: later, rev: 2 };
      assert.deepEqual(u, expected);
      assert.deepEqual(await s.getIssuer('A', a.id), expected);
      assert.deepEqual(await s.issuersOf(ISS), [expected]);
      await assert.rejects(s.updateIssuer('A', a.id, { label: 'lost' }, 1), named('IssuerChanged'));
      assert.deepEqual(await s.getIssuer('A', a.id), expected);
      assert.equal((await s.updateIssuer('A', a.id, { maxLifetimeSeconds: 300 }))?.rev, 3, 'without an expected rev, any');
      assert.equal(await s.updateIssuer('B', a.id, { label: 'x' }), null, "another account's issuer");
      assert.equal(await s.updateIssuer('A', a.id + 1000, { label: 'x' }), null);
      assert.equal((await s.getIssuer('A', a.id))?.label, 'renamed');
    });

    it('issuersOf answers every account’s issuers of one iss in id order, and nothing of another iss or of none', async () => {
      const s = await fresh();
      const a1 = await s.createIssuer('A', issuerFields(ISS, ['k1']));
      const b1 = await s.createIssuer('B', issuerFields(ISS, ['k2']));
      const a2 = await s.createIssuer('A', issuerFields(ISS, ['k3', 'k4']));
      const none = await s.createIssuer('C', issuerFields(null, ['mux-1']));
      const other = await s.createIssuer('C', issuerFields(`${ISS}other`));
      assert.deepEqual(await s.issuersOf(ISS), [a1, b1, a2]);
      assert.deepEqual(await s.issuersOf(null), [none]);
      assert.deepEqual(await s.issuersOf(`${ISS}other`), [other]);
      assert.deepEqual(await s.issuersOf('https://idp.example.com'), [], 'the iss exactly, not a prefix');
      assert.deepEqual(await s.issuersOf(''), [], 'the empty string is not "none"');
      // an update that moves to another iss leaves the first one's candidates
      const moved = await s.updateIssuer('B', b1.id, { issuer: null, keyIds: ['mux-2'] });
      assert.deepEqual(await s.issuersOf(ISS), [a1, a2]);
      assert.deepEqual(await s.issuersOf(null), [moved, none], 'id order');
      await s.deleteIssuer('A', a1.id);
      assert.deepEqual(await s.issuersOf(ISS), [a2]);
    });

    it('signed-URL issuers: settings and the signing key kept as written; one per format and account, or per key id; never among the candidates of an iss', async () => {
      const s = await fresh();
      const akamai = (over: Partial<NewIssuer> = {}) =>
        issuerFields(null, [], {
          type: 'akamai-edgeauth',
          algorithms: [],
          jwks: null,
          audience: [],
          secret: '0123456789abcdef0123456789abcdef',
          settings: { format: 'akamai-edgeauth', algorithm: 'sha256', fieldDelimiter: '~', aclDelimiter: '!', escapeEarly: false, names: ['hdnts'], salt: null },
          ...over,
        });
      const cloudfront = (ids: string[]) =>
        issuerFields(null, ids, {
          type: 'cloudfront',
          algorithms: [],
          jwks: null,
          audience: [],
          settings: { format: 'cloudfront', publicKeys: ids.map((id) => ({ id, key: 'MFkw' })), urls: ['https://cdn.example'], signingKeyId: null, hashAlgorithm: 'SHA256' },
          signingKey: ids.length > 0 ? '-----BEGIN PRIVATE KEY-----' : null,
        });
      const a = await s.createIssuer('A', akamai());
      assert.deepEqual(await s.getIssuer('A', a.id), a);
      assert.deepEqual([a.settings, a.signingKey], [akamai().settings, null]);
      await assert.rejects(s.createIssuer('A', akamai({ label: 'second' })), named('IssuerConflict'), 'a format whose credentials name no key: one per account');
      const b = await s.createIssuer('B', akamai());
      // a JWT issuer without iss and no key ids is apart from them
      const jwt = await s.createIssuer('A', issuerFields(null));
      const c1 = await s.createIssuer('A', cloudfront(['K1', 'K2']));
      assert.equal(c1.signingKey, '-----BEGIN PRIVATE KEY-----');
      await s.createIssuer('A', cloudfront(['K3']));
      await assert.rejects(s.createIssuer('A', cloudfront(['K2'])), named('IssuerConflict'));
      await assert.rejects(s.updateIssuer('A', c1.id, { keyIds: ['K3'] }), named('IssuerConflict'));
      await s.createIssuer('B', cloudfront(['K2']));
      assert.deepEqual(await s.issuersOf(null), [jwt], 'only JWT issuers are candidates of an iss');
      // deleting frees its place in the account
      assert.equal(await s.deleteIssuer('A', a.id), true);
      const again = await s.createIssuer('A', akamai({ label: 'again' }));
      assert.equal(again.label, 'again');
      // key references kept as written, and replaced by a patch like any field
      const refd = await s.updateIssuer('A', again.id, { secret: null, secretFrom: 'env:EDGE', signingKeyFrom: 'file:k.pem' });
      assert.deepEqual([refd?.secret, refd?.secretFrom, refd?.signingKeyFrom], [null, 'env:EDGE', 'file:k.pem']);
      assert.deepEqual(await s.getIssuer('A', again.id), refd);
      assert.deepEqual([a.secretFrom, a.signingKeyFrom], [null, null]);
      assert.deepEqual((await s.listIssuers('B')).map((i) => i.id), [b.id, (await s.listIssuers('B'))[1]!.id]);
    });

    describe('no two issuers of the deployment overlap', () => {
      const refusals: Array<{ name: string; first: [string | null, string[]]; second: [string | null, string[]]; keyIds: string[] }> = [
        { name: 'the same iss, both for any key id', first: [ISS, []], second: [ISS, []], keyIds: [] },
        { name: 'any key id, then listed ones', first: [ISS, []], second: [ISS, ['k1']], keyIds: [] },
        { name: 'listed key ids, then any', first: [ISS, ['k1', 'k2']], second: [ISS, []], keyIds: ['k1', 'k2'] },
        { name: 'a shared key id', first: [ISS, ['k1', 'k2']], second: [ISS, ['k3', 'k2']], keyIds: ['k2'] },
        { name: 'no iss, both for any key id', first: [null, []], second: [null, []], keyIds: [] },
        { name: 'no iss, a shared key id', first: [null, ['m1']], second: [null, ['m1']], keyIds: ['m1'] },
      ];
      for (const r of refusals) {
        it(`refuses ${r.name}, in another account and in the same one, storing nothing`, async () => {
          const s = await fresh();
          const first = await s.createIssuer('A', issuerFields(...r.first));
          const v = await s.accountVersion('B');
          for (const accountId of ['B', 'A']) {
            await assert.rejects(s.createIssuer(accountId, issuerFields(...r.second)), {
              name: 'IssuerConflict',
              issuer: r.second[0],
              keyIds: r.keyIds,
              sameAccount: accountId === 'A',
            });
          }
          assert.deepEqual(await s.listIssuers('B'), []);
          assert.deepEqual(await s.listIssuers('A'), [first]);
          assert.deepEqual(await s.issuersOf(r.first[0]), [first]);
          assert.equal(await s.accountVersion('B'), v, 'a refused write moves nothing');
        });
      }

      it('accepts issuers that do not overlap: another iss, none against one, disjoint key ids', async () => {
        const s = await fresh();
        await s.createIssuer('A', issuerFields(ISS, []));
        await s.createIssuer('B', issuerFields(`${ISS}2`, []));
        await s.createIssuer('B', issuerFields(null, []));
        const k1 = await s.createIssuer('C', issuerFields('https://kids.example/', ['k1', 'k2']));
        const k3 = await s.createIssuer('D', issuerFields('https://kids.example/', ['k3']));
        const k4 = await s.createIssuer('C', issuerFields('https://kids.example/', ['k4', 'k5']));
        assert.deepEqual(await s.issuersOf('https://kids.example/'), [k1, k3, k4]);
      });

      it('refuses an update into an overlap with nothing changed; an issuer never overlaps itself', async () => {
        const s = await fresh();
        const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
        const b = await s.createIssuer('B', issuerFields(ISS, ['k2']));
        const c = await s.createIssuer('B', issuerFields(null, []));
        const v = await s.accountVersion('B');
        await assert.rejects(s.updateIssuer('B', b.id, { keyIds: ['k2', 'k1'] }), { name: 'IssuerConflict', issuer: ISS, keyIds: ['k1'], sameAccount: false });
        await assert.rejects(s.updateIssuer('B', b.id, { keyIds: [] }), { name: 'IssuerConflict', issuer: ISS, keyIds: ['k1'], sameAccount: false });
        await assert.rejects(s.updateIssuer('B', c.id, { issuer: ISS, keyIds: ['k2'] }), { name: 'IssuerConflict', issuer: ISS, keyIds: ['k2'], sameAccount: true });
        assert.deepEqual(await s.getIssuer('B', b.id), b);
        assert.deepEqual(await s.getIssuer('B', c.id), c);
        assert.deepEqual(await s.issuersOf(ISS), [a, b]);
        assert.deepEqual(await s.issuersOf(null), [c]);
        assert.equal(await s.accountVersion('B'), v);
        // its own key ids, more of them, or any key id once it is the only one of its iss
        assert.equal((await s.updateIssuer('B', b.id, { keyIds: ['k2', 'k3'] }))?.rev, 2);
        assert.equal((await s.updateIssuer('A', a.id, { label: 'same key ids' }))?.rev, 2);
        await s.deleteIssuer('A', a.id);
        assert.deepEqual((await s.updateIssuer('B', b.id, { keyIds: [] }))?.keyIds, []);
      });

      it('frees an (iss, kid) when its issuer is deleted or moves off it', async () => {
        const s = await fresh();
        const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
        const b = await s.createIssuer('A', issuerFields(null, ['k9']));
        assert.equal(await s.deleteIssuer('A', a.id), true);
        const again = await s.createIssuer('B', issuerFields(ISS, ['k1']));
        assert.notEqual(again.id, a.id, 'ids are not reused');
        await s.updateIssuer('A', b.id, { keyIds: ['k8'] });
        const c = await s.createIssuer('B', issuerFields(null, ['k9']));
        await s.updateIssuer('B', again.id, { issuer: `${ISS}moved` });
        const d = await s.createIssuer('C', issuerFields(ISS, []));
        assert.deepEqual(await s.issuersOf(ISS), [d]);
        assert.deepEqual((await s.issuersOf(null)).map((i) => i.id), [b.id, c.id]);
      });

      it('of 10 concurrent overlapping creates from several accounts, exactly one succeeds', async () => {
        const s = await fresh();
        const settled = await Promise.allSettled(
          Array.from({ length: 10 }, (_, i) => s.createIssuer(`R${i % 3}`, issuerFields(ISS, i % 2 === 0 ? [] : ['k1', `k${i}`]))),
        );
        const won = settled.filter((r): r is PromiseFulfilledResult<IssuerRecord> => r.status === 'fulfilled');
        assert.equal(won.length, 1, JSON.stringify(settled.map((r) => r.status)));
        for (const r of settled) if (r.status === 'rejected') assert.equal((r.reason as Error).name, 'IssuerConflict');
        assert.deepEqual(await s.issuersOf(ISS), [won[0].value]);
      });

      it('of concurrent updates of two issuers into one key id, exactly one succeeds', async () => {
        const s = await fresh();
        const a = await s.createIssuer('A', issuerFields(ISS, ['k1']));
        const b = await s.createIssuer('B', issuerFields(ISS, ['k2']));
        const settled = await Promise.allSettled([s.updateIssuer('A', a.id, { keyIds: ['k1', 'k3'] }), s.updateIssuer('B', b.id, { keyIds: ['k2', 'k3'] })]);
        assert.deepEqual(settled.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
        const holders = (await s.issuersOf(ISS)).filter((i) => i.keyIds.includes('k3'));
        assert.equal(holders.length, 1);
      });
    });

    it('moves the account version on every write of its issuers, and no other account’s', async () => {
      const s = await fresh();
      const v0 = await s.accountVersion('A');
      const vb = await s.accountVersion('B');
      const a = await s.createIssuer('A', issuerFields(ISS));
      const v1 = await s.accountVersion('A');
      assert.notEqual(v1, v0, 'create');
      await s.updateIssuer('A', a.id, { isActive: false });
      const v2 = await s.accountVersion('A');
      assert.notEqual(v2, v1, 'update');
      await s.deleteIssuer('A', a.id);
      const v3 = await s.accountVersion('A');
      assert.notEqual(v3, v2, 'delete');
      assert.equal(await s.updateIssuer('A', a.id, { isActive: true }), null);
      assert.equal(await s.deleteIssuer('A', a.id), false);
      assert.equal(await s.accountVersion('A'), v3, 'nothing found, nothing moved');
      assert.equal(await s.accountVersion('B'), vb);
    });
  });
}
