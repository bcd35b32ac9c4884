// /api/issuers over HTTP on every store (docs/api.md#managing-issuers): each verb's exact answer,
// every validation problem a 400 naming its field with nothing stored, the secret in no answer,
// conflicts across accounts that name neither the other account nor its issuer, another
// account's issuer invisible, the policy token's deletion, revisions, and the OpenAPI document.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { JWK } from 'jose';
import type { StoreFactory } from '../helpers/stores.js';
import type { Store } from '../../src/store/store.js';
import { PassThrough } from 'node:stream';
import { generateKeyPairSync } from 'node:crypto';
import { testApp, ADMIN_KEY, type TestApp } from '../helpers/app.js';
import { keyPair } from '../helpers/issuers.js';
import { loadConfig } from '../../src/config/load.js';
import { createServices } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { createLogger, flushLogs } from '../../src/observability/logger.js';

const T0 = Date.parse('2026-11-27T12:00:00.000Z');
const AT0 = new Date(T0).toISOString();
const SECRET = 'livekit-api-secret-0123456789abcdef';
const SECRET2 = 'another-secret-of-twenty-eight';
const ISS = 'https://idp.example.com/realms/media';

export function issuersSuite(factory: StoreFactory): void {
  describe(`issuers API: ${factory.name}`, () => {
    let t: TestApp;
    let store: Store;
    let now = T0;
    let a: { id: string; secret: string };
    let b: { id: string; secret: string };
    /** A's subscribe token, A's publish token, B's subscribe token. */
    let tok: { sub: number; pub: number; other: number };
    let jwk: JWK;

    before(async () => {
      await factory.setup();
      jwk = (await keyPair('ES256', 'k1')).jwk;
    });
    after(() => factory.teardown());

    const fresh = async (config: Record<string, unknown> = {}) => {
      now = T0;
      store = await factory.make({ now: () => now });
      t = await testApp(store, config);
      a = await t.account('issuers a');
      b = await t.account('issuers b');
      const token = async (who: { secret: string }, kind: string) => {
        const r = await as(who).post(`/api/${kind}_token`, { label: kind, streams: [{ streamName: 'cam1' }] });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body.data.id as number;
      };
      tok = { sub: await token(a, 'subscribe'), pub: await token(a, 'publish'), other: await token(b, 'subscribe') };
    };
    const as = (who: { secret: string }) => {
      const auth = { authorization: `Bearer ${who.secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, body?: unknown) => request(t.app).post(p).set(auth).send(body as object),
        put: (p: string, body?: unknown, headers: Record<string, string> = {}) => request(t.app).put(p).set(auth).set(headers).send(body as object),
        del: (p: string) => request(t.app).delete(p).set(auth),
      };
    };
    /** A LiveKit-style HMAC issuer of account A. */
    const hmacBody = (over: Record<string, unknown> = {}) => ({
      label: 'livekit',
      policyTokenId: tok.sub,
      issuer: 'APIkey1',
      algorithms: ['HS256'],
      secret: SECRET,
      clockSkewSeconds: 10,
      claims: { stream: 'video.room', canSubscribe: 'video.canSubscribe', viewerId: 'sub' },
      ...over,
    });
    /** An OIDC-style issuer with inline public keys. */
    const publicBody = (over: Record<string, unknown> = {}) => ({
      label: 'keycloak',
      policyTokenId: tok.pub,
      issuer: ISS,
      keyIds: ['k1'],
      audience: ['streamgate'],
      algorithms: ['ES256'],
      jwks: { keys: [jwk] },
      claims: { permissions: 'mediamtx_permissions' },
      ...over,
    });
    const create = async (body: Record<string, unknown>, who = a) => {
      const r = await as(who).post('/api/issuers', body);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.ok(!r.text.includes(SECRET) && !r.text.includes(SECRET2), 'no secret in the answer');
      return r.body.data as Record<string, unknown> & { id: number; rev: number };
    };
    /** What account A's issuers and version are in the store. */
    const storedA = async () => JSON.stringify({ issuers: await store.listIssuers(a.id), version: await store.accountVersion(a.id) });

    describe('each verb', () => {
      before(() => fresh());

      it('creates (201, the record with its defaults, hasSecret and never the secret), reads, lists, updates and deletes', async () => {
        const r = await as(a).post('/api/issuers', hmacBody());
        const lk = {
          id: r.body.data.id,
          label: 'livekit',
          type: 'jwt',
          isActive: true,
          policyTokenId: tok.sub,
          policyTokenKind: 'subscribe',
          issuer: 'APIkey1',
          keyIds: [],
          audience: [],
          algorithms: ['HS256'],
          jwks: null,
          jwksUrl: null,
          hasSecret: true,
          clockSkewSeconds: 10,
          maxLifetimeSeconds: null,
          claims: { stream: 'video.room', canSubscribe: 'video.canSubscribe', viewerId: 'sub' },
          cookieName: null,
          revoked: { jti: [], sub: [], kid: [] },
          settings: null,
          hasSigningKey: false,
          secretFrom: null,
          signingKeyFrom: null,
          addedOn: AT0,
          updatedOn: AT0,
          rev: 1,
        };
        assert.deepEqual([r.status, r.body], [201, { status: 'success', data: lk }]);
        assert.ok(!r.text.includes(SECRET));
        assert.equal((await store.getIssuer(a.id, lk.id))?.secret, SECRET, 'the secret is stored, only never answered');

        now += 1000;
        const kc = await create(publicBody({ maxLifetimeSeconds: 600, cookieName: 'idp_jwt', isActive: false }));
        assert.deepEqual(kc, {
          id: kc.id,
          label: 'keycloak',
          type: 'jwt',
          isActive: false,
          policyTokenId: tok.pub,
          policyTokenKind: 'publish',
          issuer: ISS,
          keyIds: ['k1'],
          audience: ['streamgate'],
          algorithms: ['ES256'],
          jwks: { keys: [jwk] },
          jwksUrl: null,
          hasSecret: false,
          clockSkewSeconds: 30,
          maxLifetimeSeconds: 600,
          claims: { stream: 'sub', permissions: 'mediamtx_permissions' },
          cookieName: 'idp_jwt',
          revoked: { jti: [], sub: [], kid: [] },
          settings: null,
          hasSigningKey: false,
          secretFrom: null,
          signingKeyFrom: null,
          addedOn: new Date(T0 + 1000).toISOString(),
          updatedOn: new Date(T0 + 1000).toISOString(),
          rev: 1,
        });

        const one = await as(a).get(`/api/issuers/${lk.id}`);
        assert.deepEqual([one.status, one.body], [200, { status: 'success', data: lk }]);
        const list = await as(a).get('/api/issuers');
        assert.deepEqual([list.status, list.body], [200, { status: 'success', data: [lk, kc] }]);
        assert.ok(!list.text.includes(SECRET), 'no secret in the list');

        now += 1000;
        const u = await as(a).put(`/api/issuers/${lk.id}`, { label: 'livekit eu', claims: { canSubscribe: null, canPublish: 'video.canPublish' }, revoked: { jti: ['j1', 'j2'] }, secret: SECRET2 });
        const lk2 = {
          ...lk,
          label: 'livekit eu',
          claims: { stream: 'video.room', canPublish: 'video.canPublish', viewerId: 'sub' },
          revoked: { jti: ['j1', 'j2'], sub: [], kid: [] },
          updatedOn: new Date(T0 + 2000).toISOString(),
          rev: 2,
        };
        assert.deepEqual([u.status, u.body], [200, { status: 'success', data: lk2 }]);
        assert.ok(!u.text.includes(SECRET2) && !u.text.includes(SECRET));
        assert.equal((await store.getIssuer(a.id, lk.id))?.secret, SECRET2, 'a new secret replaces the old');

        // a claim map entry set to null is removed; stream goes back to sub; a revoked list given replaces that list only
        const u2 = await as(a).put(`/api/issuers/${lk.id}`, { claims: { stream: null }, revoked: { sub: ['banned'] } });
        assert.deepEqual(u2.body.data.claims, { stream: 'sub', canPublish: 'video.canPublish', viewerId: 'sub' });
        assert.deepEqual(u2.body.data.revoked, { jti: ['j1', 'j2'], sub: ['banned'], kid: [] });
        assert.equal(u2.body.data.rev, 3);

        // from HMAC to public keys in one update: the secret removed with null
        const u3 = await as(a).put(`/api/issuers/${lk.id}`, { algorithms: ['ES256', 'ES384'], secret: null, jwksUrl: 'https://idp.example.com/jwks' });
        assert.deepEqual([u3.status, u3.body.data.hasSecret, u3.body.data.algorithms, u3.body.data.jwksUrl], [200, false, ['ES256', 'ES384'], 'https://idp.example.com/jwks']);
        assert.equal((await store.getIssuer(a.id, lk.id))?.secret, null);

        const d = await as(a).del(`/api/issuers/${kc.id}`);
        assert.deepEqual([d.status, d.body], [200, { status: 'success', data: kc }]);
        const gone = await as(a).get(`/api/issuers/${kc.id}`);
        assert.deepEqual([gone.status, gone.body], [404, { status: 'fail', data: { message: `No issuer with id: ${kc.id}`, issuerId: `No issuer with id: ${kc.id}` } }]);
        assert.deepEqual((await as(a).get('/api/issuers')).body.data.map((i: { id: number }) => i.id), [lk.id]);
        assert.equal(await store.getIssuer(a.id, kc.id), null);
      });

      it('writes no secret to the log, at debug level, for a create, an update and a refusal', async () => {
        const sink = new PassThrough();
        const lines: string[] = [];
        sink.on('data', (c: Buffer) => lines.push(c.toString('utf8')));
        const logger = createLogger('debug', sink);
        const config = loadConfig({ env: {}, overrides: { adminKey: ADMIN_KEY } });
        const services = await createServices(config, { store: await factory.make(), logger });
        const app = createApp(services);
        const acct = (await request(app).post('/admin/accounts').set('authorization', `Bearer ${ADMIN_KEY}`).send({ name: 'logged' })).body.data;
        const auth = { authorization: `Bearer ${acct.apiSecret}` };
        const token = (await request(app).post('/api/subscribe_token').set(auth).send({ label: 's', streams: [{ streamName: 'cam1' }] })).body.data.id;
        // an ignored field is logged at debug (by name only)
        const made = await request(app).post('/api/issuers').set(auth).send(hmacBody({ policyTokenId: token, unknownField: SECRET2 }));
        assert.equal(made.status, 201);
        assert.equal((await request(app).put(`/api/issuers/${made.body.data.id}`).set(auth).send({ secret: SECRET2 })).status, 200);
        assert.equal((await request(app).put(`/api/issuers/${made.body.data.id}`).set(auth).send({ secret: SECRET2, algorithms: ['ES256'] })).status, 400);
        await flushLogs(logger);
        const log = lines.join('');
        assert.match(log, /ignored unknown body fields/, 'the debug lines were written');
        assert.match(log, /"path":"\/api\/issuers"/);
        assert.ok(!log.includes(SECRET) && !log.includes(SECRET2), 'no secret in the log');
        await services.close();
      });

      it('needs the API secret', async () => {
        const r = await request(t.app).get('/api/issuers');
        assert.deepEqual([r.status, r.body], [401, { status: 'fail', data: { message: 'Unauthorized' } }]);
        const w = await request(t.app).post('/api/issuers').send(hmacBody());
        assert.equal(w.status, 401);
      });
    });

    describe('validation', () => {
      before(() => fresh());

      const failsCreate = async (body: Record<string, unknown>, errors: Record<string, string[]>) => {
        const before = await storedA();
        const r = await as(a).post('/api/issuers', body);
        assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors } }], JSON.stringify(body).slice(0, 300));
        assert.ok(!r.text.includes(SECRET), 'no secret in a refusal');
        assert.equal(await storedA(), before, 'nothing stored');
      };

      it('a create naming a problem in each field is a 400 that names the field, and stores nothing', async () => {
        const long = (n: number) => 'x'.repeat(n);
        const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
          [hmacBody({ label: '' }), { label: ['Too small: expected string to have >=1 characters'] }],
          [hmacBody({ label: long(101) }), { label: ['Too big: expected string to have <=100 characters'] }],
          [hmacBody({ label: undefined }), { label: ['Invalid input: expected string, received undefined'] }],
          [hmacBody({ policyTokenId: undefined }), { policyTokenId: ['Invalid input: expected number, received undefined'] }],
          [hmacBody({ policyTokenId: 0 }), { policyTokenId: ['Too small: expected number to be >=1'] }],
          [hmacBody({ policyTokenId: tok.other }), { policyTokenId: ['no such token in this account'] }],
          [hmacBody({ policyTokenId: 999_999 }), { policyTokenId: ['no such token in this account'] }],
          [hmacBody({ issuer: undefined }), { issuer: ['required for a jwt issuer: the iss its JWTs carry, or null for none'] }],
          [hmacBody({ issuer: '' }), { issuer: ['Too small: expected string to have >=1 characters'] }],
          [hmacBody({ keyIds: Array.from({ length: 21 }, (_, i) => `k${i}`) }), { keyIds: ['Too big: expected array to have <=20 items'] }],
          [hmacBody({ keyIds: ['k1', ''] }), { 'keyIds[1]': ['Too small: expected string to have >=1 characters'] }],
          [hmacBody({ keyIds: [long(257)] }), { 'keyIds[0]': ['Too big: expected string to have <=256 characters'] }],
          [hmacBody({ keyIds: ['k1', 'k2', 'k1'] }), { 'keyIds[2]': ['given twice'] }],
          [hmacBody({ audience: Array.from({ length: 21 }, (_, i) => `a${i}`) }), { audience: ['Too big: expected array to have <=20 items'] }],
          [hmacBody({ algorithms: [] }), { algorithms: ['Too small: expected array to have >=1 items'] }],
          [hmacBody({ algorithms: ['none'] }), { 'algorithms[0]': ["none is never accepted: an issuer's JWTs must be signed"] }],
          [hmacBody({ algorithms: ['HS256', 'NONE'] }), { 'algorithms[1]': ["none is never accepted: an issuer's JWTs must be signed"] }],
          [hmacBody({ algorithms: ['HS1'] }), { 'algorithms[0]': ['expected one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, HS256, HS384, HS512'] }],
          [hmacBody({ algorithms: ['HS256', 'HS256'] }), { 'algorithms[1]': ['given twice'] }],
          [hmacBody({ secret: undefined }), { secret: ['required for HS256: the HMAC secret its JWTs are signed with (at least 16 characters; 32 bytes or more recommended)'] }],
          [hmacBody({ secret: long(15) }), { secret: ['at least 16 characters (32 bytes or more recommended)'] }],
          [hmacBody({ algorithms: ['ES256'], jwks: { keys: [jwk] } }), { secret: ['only HS256, HS384 and HS512 use a secret and algorithms lists none of them: list one, or remove the secret (null)'] }],
          [publicBody({ jwks: undefined }), { jwks: ['required for ES256, or jwksUrl: the public keys that verify its JWTs'] }],
          [hmacBody({ jwks: { keys: [jwk] } }), { jwks: ['public keys verify only RS*, PS*, ES* and EdDSA and algorithms lists none of them: list one, or remove the keys (null)'] }],
          [hmacBody({ jwksUrl: 'https://idp.example.com/jwks' }), { jwksUrl: ['public keys verify only RS*, PS*, ES* and EdDSA and algorithms lists none of them: list one, or remove the keys (null)'] }],
          [publicBody({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }), { jwks: ['keys[0] is a symmetric key: only public keys verify here'] }],
          [publicBody({ jwks: { keys: [{ ...jwk, d: 'private' }] } }), { jwks: ['keys[0] holds private key material'] }],
          [publicBody({ jwks: { keys: Array.from({ length: 21 }, () => jwk) } }), { jwks: ['more than 20 keys'] }],
          [publicBody({ jwks: { key: [jwk] } }), { jwks: ['not a JWK set (an object with a keys array)'] }],
          [publicBody({ jwks: { keys: [{ ...jwk, use: 'enc' }] } }), { jwks: ['holds no key that verifies signatures (a public RSA, EC or OKP key whose use, when given, is sig); give null for none'] }],
          [publicBody({ jwks: undefined, jwksUrl: 'http://idp.example.com/jwks' }), { jwksUrl: ['must use https'] }],
          [publicBody({ jwks: undefined, jwksUrl: 'https://10.0.0.1/jwks' }), { jwksUrl: ['resolves to a private address (10.0.0.1)'] }],
          [publicBody({ jwks: undefined, jwksUrl: 'https://169.254.169.254/latest' }), { jwksUrl: ['resolves to a cloud metadata address (169.254.169.254)'] }],
          [publicBody({ jwks: undefined, jwksUrl: 'https://u:p@idp.example.com/jwks' }), { jwksUrl: ['must not contain a username or password'] }],
          [hmacBody({ clockSkewSeconds: -1 }), { clockSkewSeconds: ['Too small: expected number to be >=0'] }],
          [hmacBody({ clockSkewSeconds: 301 }), { clockSkewSeconds: ['Too big: expected number to be <=300'] }],
          [hmacBody({ clockSkewSeconds: 1.5 }), { clockSkewSeconds: ['Invalid input: expected int, received number'] }],
          [hmacBody({ maxLifetimeSeconds: 0 }), { maxLifetimeSeconds: ['Too small: expected number to be >=1'] }],
          [hmacBody({ maxLifetimeSeconds: 31_536_001 }), { maxLifetimeSeconds: ['Too big: expected number to be <=31536000'] }],
          [hmacBody({ cookieName: 'a b' }), { cookieName: ["a cookie name (an RFC 6265 token): letters, digits and !#$%&'*+-.^_`|~"] }],
          [hmacBody({ cookieName: 'a;b=c' }), { cookieName: ["a cookie name (an RFC 6265 token): letters, digits and !#$%&'*+-.^_`|~"] }],
          [hmacBody({ cookieName: long(65) }), { cookieName: ['Too big: expected string to have <=64 characters'] }],
          [hmacBody({ cookieName: 'streamgate_session' }), { cookieName: ["streamgate_session is the viewer sessions' own cookie (sessions.http.cookieName): choose another name"] }],
          [hmacBody({ claims: { stream: '' } }), { 'claims.stream': ['Too small: expected string to have >=1 characters'] }],
          [hmacBody({ claims: { action: long(201) } }), { 'claims.action': ['Too big: expected string to have <=200 characters'] }],
          [hmacBody({ revoked: { jti: Array.from({ length: 1001 }, (_, i) => `j${i}`) } }), { 'revoked.jti': ['Too big: expected array to have <=1000 items'] }],
          [hmacBody({ revoked: { sub: [long(1025)] } }), { 'revoked.sub[0]': ['Too big: expected string to have <=1024 characters'] }],
          [hmacBody({ revoked: { kid: [''] } }), { 'revoked.kid[0]': ['Too small: expected string to have >=1 characters'] }],
          [hmacBody({ type: 'oidc' }), { type: ['Invalid option: expected one of "jwt"|"akamai-edgeauth"|"cloudfront"|"cat"|"wowza-securetoken"|"nimble-wmsauth"'] }],
          [hmacBody({ isActive: 'yes' }), { isActive: ['Invalid input: expected boolean, received string'] }],
        ];
        for (const [body, errors] of cases) await failsCreate(body, errors);
        // every problem the service finds is named at once
        await failsCreate(publicBody({ policyTokenId: tok.other, jwks: { keys: [{ kty: 'oct' }] }, jwksUrl: 'https://10.0.0.1/jwks', secret: SECRET, cookieName: 'streamgate_session' }), {
          policyTokenId: ['no such token in this account'],
          jwks: ['keys[0] is a symmetric key: only public keys verify here'],
          jwksUrl: ['resolves to a private address (10.0.0.1)'],
          cookieName: ["streamgate_session is the viewer sessions' own cookie (sessions.http.cookieName): choose another name"],
          secret: ['only HS256, HS384 and HS512 use a secret and algorithms lists none of them: list one, or remove the secret (null)'],
        });
        assert.deepEqual(await store.listIssuers(a.id), []);
      });

      it('an unknown field is left out and named (api.unknownFields: ignore), or refused with reject', async () => {
        const r = await as(a).post('/api/issuers', hmacBody({ label: 'unknown fields', claims: { stream: 'room', room: 'x' }, hasSecret: true }));
        assert.equal(r.status, 201);
        assert.equal(r.headers['x-streamgate-ignored-fields'], 'claims.room, hasSecret');
        assert.deepEqual(r.body.data.claims, { stream: 'room' });
        await as(a).del(`/api/issuers/${r.body.data.id}`);
        await fresh({ api: { unknownFields: 'reject' } });
        await failsCreate(hmacBody({ claims: { stream: 'room', room: 'x' } }), { 'claims.room': ['unknown field'] });
        await failsCreate(hmacBody({ hasSecret: true }), { hasSecret: ['unknown field'] });
      });

      it('an update is judged on the record it makes: a 400 names the field and changes nothing', async () => {
        await fresh();
        const pub = await create(publicBody());
        const lk = await create(hmacBody());
        const failsUpdate = async (id: number, body: Record<string, unknown>, errors: Record<string, string[]>) => {
          const before = await storedA();
          const r = await as(a).put(`/api/issuers/${id}`, body);
          assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors } }], JSON.stringify(body));
          assert.equal(await storedA(), before, 'nothing stored');
        };
        await failsUpdate(pub.id, { algorithms: ['HS256'] }, {
          secret: ['required for HS256: the HMAC secret its JWTs are signed with (at least 16 characters; 32 bytes or more recommended)'],
          jwks: ['public keys verify only RS*, PS*, ES* and EdDSA and algorithms lists none of them: list one, or remove the keys (null)'],
        });
        await failsUpdate(pub.id, { jwks: null }, { jwks: ['required for ES256, or jwksUrl: the public keys that verify its JWTs'] });
        await failsUpdate(lk.id, { secret: null }, { secret: ['required for HS256: the HMAC secret its JWTs are signed with (at least 16 characters; 32 bytes or more recommended)'] });
        await failsUpdate(lk.id, { policyTokenId: tok.other }, { policyTokenId: ['no such token in this account'] });
        await failsUpdate(lk.id, { label: '' }, { label: ['Too small: expected string to have >=1 characters'] });
        await failsUpdate(lk.id, { algorithms: ['none'] }, { 'algorithms[0]': ["none is never accepted: an issuer's JWTs must be signed"] });
        await failsUpdate(lk.id, { rev: 0 }, { rev: ['Too small: expected number to be >=1'] });
        const before = await storedA();
        const empty = await as(a).put(`/api/issuers/${lk.id}`, {});
        assert.deepEqual([empty.status, empty.body], [400, { status: 'fail', data: { message: 'No properties specified to update.' } }]);
        const badMatch = await as(a).put(`/api/issuers/${lk.id}`, { label: 'x' }, { 'if-match': 'abc' });
        assert.deepEqual([badMatch.status, badMatch.body.data.errors], [400, { 'If-Match': ['expected the rev of the issuer as read, e.g. "3"'] }]);
        const both = await as(a).put(`/api/issuers/${lk.id}`, { label: 'x', rev: 1 }, { 'if-match': '"2"' });
        assert.deepEqual([both.status, both.body.data.errors], [400, { rev: ['1 differs from If-Match (2): give one rev'] }]);
        assert.equal(await storedA(), before);
      });
    });

    describe('the limit per account', () => {
      before(() => fresh({ issuers: { maxPerAccount: 2 } }));

      it('a create past issuers.maxPerAccount is a 400 naming the limit, and stores nothing; another account is not counted', async () => {
        const create = (who: { secret: string }, policyTokenId: number, n: number) =>
          as(who).post('/api/issuers', { label: `idp ${n}`, policyTokenId, issuer: `https://idp-${n}.example`, algorithms: ['ES256'], jwks: { keys: [jwk] } });
        assert.equal((await create(a, tok.sub, 1)).status, 201);
        assert.equal((await create(a, tok.sub, 2)).status, 201);
        const third = await create(a, tok.sub, 3);
        assert.deepEqual([third.status, third.body.data.message], [400, 'Issuer limit reached: an account may hold at most 2 issuers; delete one first']);
        assert.deepEqual((await store.listIssuers(a.id)).map((i) => i.label), ['idp 1', 'idp 2']);
        assert.equal((await create(b, tok.other, 4)).status, 201);
      });
    });

    describe('revisions', () => {
      before(() => fresh());

      it('rev in the body or If-Match updates only the rev it names; another is a 409 that changes nothing', async () => {
        const lk = await create(hmacBody());
        const ok = await as(a).put(`/api/issuers/${lk.id}`, { isActive: false }, { 'if-match': '"1"' });
        assert.deepEqual([ok.status, ok.body.data.isActive, ok.body.data.rev], [200, false, 2]);
        const before = await storedA();
        const stale = await as(a).put(`/api/issuers/${lk.id}`, { isActive: true, rev: 1 });
        const changed = { status: 'fail', data: { message: `Issuer ${lk.id} changed since rev 1: it is at rev 2; read it again and send its current rev`, rev: 2 } };
        assert.deepEqual([stale.status, stale.body], [409, changed]);
        const staleHeader = await as(a).put(`/api/issuers/${lk.id}`, { isActive: true }, { 'if-match': '1' });
        assert.deepEqual([staleHeader.status, staleHeader.body], [409, changed]);
        assert.equal(await storedA(), before);
        const current = await as(a).put(`/api/issuers/${lk.id}`, { isActive: true, rev: 2 }, { 'if-match': 'W/"2"' });
        assert.deepEqual([current.status, current.body.data.isActive, current.body.data.rev], [200, true, 3]);
      });
    });

    describe('accounts', () => {
      before(() => fresh());

      it("another account's issuer is a 404 on every verb and stays as it was", async () => {
        const lk = await create(hmacBody());
        const before = await storedA();
        const notFound = { status: 'fail', data: { message: `No issuer with id: ${lk.id}`, issuerId: `No issuer with id: ${lk.id}` } };
        for (const r of [await as(b).get(`/api/issuers/${lk.id}`), await as(b).put(`/api/issuers/${lk.id}`, { isActive: false, secret: SECRET2 }), await as(b).del(`/api/issuers/${lk.id}`)]) {
          assert.deepEqual([r.status, r.body], [404, notFound]);
        }
        assert.deepEqual((await as(b).get('/api/issuers')).body, { status: 'success', data: [] });
        assert.equal(await storedA(), before);
      });

      it('an overlapping issuer of another account is a 409 that names neither that account nor its issuer, and stores nothing', async () => {
        await fresh();
        const theirs = await create(publicBody({ keyIds: ['k1', 'k9'] }));
        const mine = async (over: Record<string, unknown>) => as(b).post('/api/issuers', publicBody({ policyTokenId: tok.other, ...over }));
        const expected = (keyIds: string[], which: string) => ({
          status: 'fail',
          data: {
            message: `An issuer of iss "${ISS}" is declared already ${which}: a JWT must select one issuer, so no two issuers of the deployment share an iss and a key id (an issuer naming no key ids takes every key id of its iss)`,
            issuer: ISS,
            keyIds,
          },
        });
        const shared = await mine({ keyIds: ['k2', 'k1'] });
        assert.deepEqual([shared.status, shared.body], [409, expected(['k1'], 'for key id "k1"')]);
        assert.ok(!shared.text.includes(a.id), "the other account's id is not in the answer");
        const any = await mine({ keyIds: [] });
        assert.deepEqual([any.status, any.body], [409, expected(['k1', 'k9'], 'for key ids "k1", "k9"')]);
        assert.deepEqual(await store.listIssuers(b.id), [], 'nothing stored for B');
        // B's own issuer moved onto A's key id: refused the same way, B's record unchanged
        const own = await create(publicBody({ policyTokenId: tok.other, keyIds: ['k2'] }), b);
        const moved = await as(b).put(`/api/issuers/${own.id}`, { keyIds: ['k2', 'k9'] });
        assert.deepEqual([moved.status, moved.body], [409, expected(['k9'], 'for key id "k9"')]);
        assert.deepEqual((await as(b).get(`/api/issuers/${own.id}`)).body.data, own);
        // within one account the answer says so
        const twice = await as(a).post('/api/issuers', publicBody({ keyIds: ['k9'] }));
        assert.deepEqual([twice.status, twice.body], [409, expected(['k9'], 'for key id "k9" in this account')]);
        // a deleted issuer's (iss, key ids) may be declared again at once
        await as(a).del(`/api/issuers/${theirs.id}`);
        assert.equal((await mine({ keyIds: ['k1'] })).status, 201);
      });

      it('a deleted policy token leaves the issuer, answered with policyTokenKind null; an update names a token of the account', async () => {
        await fresh();
        const lk = await create(hmacBody());
        assert.equal((await as(a).del(`/api/subscribe_token/${tok.sub}`)).status, 200);
        const r = await as(a).get(`/api/issuers/${lk.id}`);
        assert.deepEqual(r.body.data, { ...lk, policyTokenKind: null });
        const disabled = await as(a).put(`/api/issuers/${lk.id}`, { isActive: false });
        assert.deepEqual([disabled.status, disabled.body.data.policyTokenId, disabled.body.data.policyTokenKind], [200, tok.sub, null]);
        const fixed = await as(a).put(`/api/issuers/${lk.id}`, { policyTokenId: tok.pub });
        assert.deepEqual([fixed.status, fixed.body.data.policyTokenId, fixed.body.data.policyTokenKind], [200, tok.pub, 'publish']);
      });
    });

    describe('signed-URL issuers', () => {
      before(() => fresh());
      const HEX_KEY = '0123456789abcdef0123456789abcdef';
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const PUBLIC_PEM = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
      const PRIVATE_PEM = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const OTHER_PRIVATE = other.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const common = { isActive: true, policyTokenId: 0, policyTokenKind: 'subscribe', issuer: null, keyIds: [], audience: [], algorithms: [], jwks: null, jwksUrl: null, clockSkewSeconds: 30, maxLifetimeSeconds: null, claims: { stream: 'sub' }, cookieName: null, revoked: { jti: [], sub: [], kid: [] }, hasSigningKey: false, secretFrom: null, signingKeyFrom: null, rev: 1 };
      const failsCreate = async (body: Record<string, unknown>, errors: Record<string, string[]>) => {
        const before = await storedA();
        const r = await as(a).post('/api/issuers', body);
        assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors } }], JSON.stringify(body).slice(0, 300));
        assert.ok(!r.text.includes(HEX_KEY) && !r.text.includes('PRIVATE KEY'), 'no key in a refusal');
        assert.equal(await storedA(), before, 'nothing stored');
      };

      it('creates one issuer of each format with its defaults: settings answered whole, keyIds from the keys, never a secret or the private key', async () => {
        const ea = await create({ label: 'akamai', type: 'akamai-edgeauth', policyTokenId: tok.sub, secret: HEX_KEY });
        assert.deepEqual(ea, { ...common, id: ea.id, label: 'akamai', type: 'akamai-edgeauth', policyTokenId: tok.sub, hasSecret: true, settings: { format: 'akamai-edgeauth', algorithm: 'sha256', fieldDelimiter: '~', aclDelimiter: '!', escapeEarly: false, names: ['hdnts', '__token__'], salt: null }, addedOn: AT0, updatedOn: AT0 });
        const cfBody = { label: 'cloudfront', type: 'cloudfront', policyTokenId: tok.sub, settings: { publicKeys: [{ id: 'K2JCJMDEHXQW5F', key: PUBLIC_PEM }], urls: ['https://d111111abcdef8.cloudfront.net'], signingKeyId: 'K2JCJMDEHXQW5F' }, signingKey: PRIVATE_PEM };
        const cf = await create(cfBody);
        assert.deepEqual(cf, { ...common, id: cf.id, label: 'cloudfront', type: 'cloudfront', policyTokenId: tok.sub, keyIds: ['K2JCJMDEHXQW5F'], hasSecret: false, hasSigningKey: true, settings: { format: 'cloudfront', publicKeys: [{ id: 'K2JCJMDEHXQW5F', key: PUBLIC_PEM }], urls: ['https://d111111abcdef8.cloudfront.net'], signingKeyId: 'K2JCJMDEHXQW5F', hashAlgorithm: 'SHA256' }, addedOn: AT0, updatedOn: AT0 });
        assert.equal((await store.getIssuer(a.id, cf.id))?.signingKey, PRIVATE_PEM, 'the private key is stored, only never answered');
        const cat = await create({ label: 'cat', type: 'cat', policyTokenId: tok.sub, issuer: 'eyevinn', audience: ['cdn'], secret: `${HEX_KEY}${HEX_KEY}`, settings: { secretKeyId: 'Symmetric256', signingKeyId: 'Symmetric256' } });
        assert.deepEqual([cat.keyIds, cat.issuer, cat.audience, cat.settings], [['Symmetric256'], 'eyevinn', ['cdn'], { format: 'cat', publicKeys: [], secretKeyId: 'Symmetric256', urls: [], queryParam: 'cat', signingKeyId: 'Symmetric256' }]);
        const wz = await create({ label: 'wowza', type: 'wowza-securetoken', policyTokenId: tok.sub, secret: 'mySharedSecret-0001', settings: { includeClientIp: true } });
        assert.deepEqual(wz.settings, { format: 'wowza-securetoken', prefix: 'wowzatoken', algorithm: 'sha256', includeClientIp: true, requireEndTime: true });
        const nm = await create({ label: 'nimble', type: 'nimble-wmsauth', policyTokenId: tok.pub, secret: 'defaultpassword-01', clockSkewSeconds: 90 });
        assert.deepEqual([nm.policyTokenKind, nm.clockSkewSeconds, nm.settings], ['publish', 90, { format: 'nimble-wmsauth', maxValidMinutes: 1440 }]);
        const listed = await as(a).get('/api/issuers');
        assert.deepEqual(listed.body.data.map((i: { type: string }) => i.type), ['akamai-edgeauth', 'cloudfront', 'cat', 'wowza-securetoken', 'nimble-wmsauth']);
        assert.ok(!listed.text.includes('PRIVATE KEY') && !listed.text.includes(HEX_KEY));

        // an update merges the settings given; the keys follow the settings; the type never changes
        const up = await as(a).put(`/api/issuers/${ea.id}`, { settings: { algorithm: 'md5', names: ['hdnts'] } });
        assert.deepEqual([up.status, up.body.data.settings.algorithm, up.body.data.settings.names, up.body.data.settings.fieldDelimiter], [200, 'md5', ['hdnts'], '~']);
        const moved = await as(a).put(`/api/issuers/${cf.id}`, { settings: { publicKeys: [{ id: 'K2JCJMDEHXQW5F', key: PUBLIC_PEM }, { id: 'KNEXT', key: PUBLIC_PEM }] } });
        assert.deepEqual([moved.status, moved.body.data.keyIds, moved.body.data.hasSigningKey], [200, ['K2JCJMDEHXQW5F', 'KNEXT'], true]);
        const retyped = await as(a).put(`/api/issuers/${ea.id}`, { type: 'cloudfront' });
        assert.deepEqual([retyped.status, retyped.body.data.errors], [400, { type: ['is akamai-edgeauth and cannot change: create a cloudfront issuer instead'] }]);
        const wrongSettings = await as(a).put(`/api/issuers/${ea.id}`, { settings: { prefix: 'x' } });
        assert.deepEqual([wrongSettings.status, wrongSettings.body.data.errors], [400, { settings: ['Unrecognized key: "prefix"'] }]);
      });

      it('one issuer per account for a format whose credentials name no key; by key id for CloudFront and CAT; accounts and JWT issuers apart', async () => {
        await fresh();
        await create({ label: 'wowza 1', type: 'wowza-securetoken', policyTokenId: tok.sub, secret: 'mySharedSecret-0001' });
        const second = await as(a).post('/api/issuers', { label: 'wowza 2', type: 'wowza-securetoken', policyTokenId: tok.sub, secret: 'mySharedSecret-0002' });
        assert.equal(second.status, 409);
        assert.equal(second.body.data.message, 'Another wowza-securetoken issuer of this account answers for every credential of the format (one names no key id): a credential must select one issuer, so an account\'s wowza-securetoken issuers share no key id');
        // another account, and a JWT issuer without iss, are apart
        await create({ label: 'wowza b', type: 'wowza-securetoken', policyTokenId: tok.other, secret: 'mySharedSecret-0003' }, b);
        await create(hmacBody({ issuer: null }));
        const cf = (id: string) => ({ label: `cf ${id}`, type: 'cloudfront', policyTokenId: tok.sub, settings: { publicKeys: [{ id, key: PUBLIC_PEM }], urls: ['https://video.example.com'] } });
        await create(cf('KA'));
        await create(cf('KB'));
        const shared = await as(a).post('/api/issuers', cf('KA'));
        assert.deepEqual([shared.status, shared.body.data.keyIds], [409, ['KA']]);
      });

      it('each format refuses what it cannot use, naming the field; nothing is stored', async () => {
        await fresh();
        const ea = (over: Record<string, unknown> = {}) => ({ label: 'akamai', type: 'akamai-edgeauth', policyTokenId: tok.sub, secret: HEX_KEY, ...over });
        await failsCreate(ea({ secret: 'not-hex-but-long-enough' }), { secret: ["required: the EdgeAuth key as Akamai's property holds it, hex (an even number of digits, 16 bytes or more)"] });
        await failsCreate(ea({ secret: undefined }), { secret: ["required: the EdgeAuth key as Akamai's property holds it, hex (an even number of digits, 16 bytes or more)"] });
        await failsCreate(ea({ settings: { algorithm: 'sha512' } }), { 'settings.algorithm': ['Invalid option: expected one of "sha256"|"sha1"|"md5"'] });
        await failsCreate(ea({ settings: { fieldDelimiter: '!' } }), { 'settings.fieldDelimiter': ['the field and ACL delimiters are one character each, and differ'] });
        await failsCreate(ea({ settings: { names: ['a b'] } }), { 'settings.names.0': ["a parameter or cookie name: letters, digits and !#$%&'*+-.^_`|~"] });
        await failsCreate(ea({ algorithms: ['HS256'], cookieName: 'x', issuer: 'iss' }), {
          algorithms: ['only a jwt issuer has algorithms; a akamai-edgeauth issuer\'s format is set in settings'],
          cookieName: ['only a jwt issuer has cookieName; a akamai-edgeauth issuer\'s format is set in settings'],
          issuer: ['only jwt and cat issuers check an iss; a akamai-edgeauth credential carries none'],
        });
        await failsCreate(ea({ signingKey: PRIVATE_PEM }), { signingKey: ['a akamai-edgeauth issuer signs with its secret; it has no private key'] });
        const cf = (over: Record<string, unknown> = {}, settings: Record<string, unknown> = {}) => ({ label: 'cf', type: 'cloudfront', policyTokenId: tok.sub, settings: { publicKeys: [{ id: 'K1', key: PUBLIC_PEM }], urls: ['https://video.example.com'], ...settings }, ...over });
        await failsCreate(cf({}, { publicKeys: [], urls: [] }), {
          'settings.publicKeys': ["required: the public keys of the distribution's trusted key group, by their ids"],
          'settings.urls': ['required: the addresses viewers request through (the distribution domain, alternate domains), which policies name'],
        });
        await failsCreate(cf({}, { urls: ['https://video.example.com/hls/'] }), { 'settings.urls.0': ['https://video.example.com/hls/: give the scheme and host only (no path, query or trailing /), e.g. https://d111111abcdef8.cloudfront.net'] });
        await failsCreate(cf({}, { publicKeys: [{ id: 'K1', key: 'not a key' }] }), { 'settings.publicKeys.0': ['key K1 is not a public key (PEM, or base64 DER SubjectPublicKeyInfo)'] });
        const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
        await failsCreate(cf({}, { publicKeys: [{ id: 'K1', key: small }] }), { 'settings.publicKeys.0': ['key K1 is rsa 1024: expected RSA of 2048 bits or more, or EC P-256'] });
        await failsCreate(cf({ secret: 'a-secret-of-enough-length' }), { secret: ['a cloudfront issuer verifies with public keys (settings.publicKeys); it has no secret'] });
        await failsCreate(cf({ signingKey: OTHER_PRIVATE }, { signingKeyId: 'K1' }), { signingKey: ['not the private half of public key K1'] });
        await failsCreate(cf({ signingKey: 'junk' }, { signingKeyId: 'K1' }), { signingKey: ['not a private key in PEM (PKCS#8, PKCS#1 or SEC1)'] });
        await failsCreate(cf({}, { signingKeyId: 'K9' }), { 'settings.signingKeyId': ['K9 is not the id of one of settings.publicKeys'] });
        await failsCreate(cf({}, { signingKeyId: 'K1' }), { signingKey: ['required with signingKeyId: the private key (PEM) of K1'] });
        await failsCreate(cf({}, { region: 'eu' }), { settings: ['Unrecognized key: "region"'] });
        await failsCreate({ label: 'cat', type: 'cat', policyTokenId: tok.sub }, { 'settings.publicKeys': ['a cat issuer needs a key: ES256 public keys by kid, or an HS256 secret (secretKeyId and secret)'] });
        await failsCreate({ label: 'cat', type: 'cat', policyTokenId: tok.sub, secret: HEX_KEY, settings: { secretKeyId: 'k' } }, { secret: ['the HS256 key as hex, 32 bytes or more'] });
        await failsCreate({ label: 'cat', type: 'cat', policyTokenId: tok.sub, settings: { publicKeys: [{ id: 'k', key: PUBLIC_PEM }] } }, { 'settings.publicKeys.0': ['key k is rsa 2048: expected EC P-256'] });
        await failsCreate({ label: 'w', type: 'wowza-securetoken', policyTokenId: tok.sub, settings: { prefix: 'a-b' } }, { 'settings.prefix': ['letters, digits and _'] });
        await failsCreate({ label: 'w', type: 'wowza-securetoken', policyTokenId: tok.sub }, { secret: ['required: the SecureToken shared secret'] });
        await failsCreate({ label: 'n', type: 'nimble-wmsauth', policyTokenId: tok.sub, settings: { maxValidMinutes: 0 } }, { 'settings.maxValidMinutes': ['Too small: expected number to be >=1'] });
        await failsCreate(hmacBody({ settings: { algorithm: 'md5' } }), { settings: ['only a signed-URL issuer (akamai-edgeauth, cloudfront, cat, wowza-securetoken, nimble-wmsauth) has settings'] });
        await failsCreate(hmacBody({ algorithms: undefined }), { algorithms: ['required for a jwt issuer: the signature algorithms its JWTs may use'] });
      });
    });

    describe('the OpenAPI document', () => {
      before(() => fresh());

      it('lists the five routes under the API secret, with their schemas; no secret in the answer schema', async () => {
        const doc = (await request(t.app).get('/api/openapi.json')).body;
        const ops = Object.fromEntries(['/api/issuers', '/api/issuers/{id}'].map((p) => [p, Object.keys(doc.paths[p]).sort()]));
        assert.deepEqual(ops, { '/api/issuers': ['get', 'post'], '/api/issuers/{id}': ['delete', 'get', 'put'] });
        for (const [p, methods] of Object.entries(ops)) {
          for (const m of methods) {
            const op = doc.paths[p][m];
            assert.deepEqual([op.tags, op.security], [['Issuers'], [{ ApiSecret: [] }]], `${m} ${p}`);
          }
        }
        const create = doc.paths['/api/issuers'].post;
        assert.ok(create.responses['201'], 'a create answers 201');
        const body = create.requestBody.content['application/json'].schema;
        assert.deepEqual(body.required.sort(), ['label', 'policyTokenId']);
        assert.equal(body.additionalProperties, false);
        assert.deepEqual(body.properties.claims.properties.stream.anyOf.map((s: { type: string }) => s.type), ['string', 'null']);
        const out = create.responses['201'].content['application/json'].schema.properties.data;
        assert.equal(out.properties.hasSecret.type, 'boolean');
        assert.equal('secret' in out.properties, false);
        assert.equal(out.properties.hasSigningKey.type, 'boolean');
        assert.equal('signingKey' in out.properties, false);
        assert.deepEqual(doc.paths['/api/issuers/{id}'].put.requestBody.content['application/json'].schema.required ?? [], []);
      });
    });
  });
}
