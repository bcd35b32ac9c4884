// Country rules as the hosted platform applies them, over HTTP, against every store backend: a
// publish token's lists restrict the viewers of the streams it publishes (never its publisher), a
// subscribe token's own lists override them, and the account's defaults (/api/geo/account) apply
// when no token sets any. Countries come from a fixed table, or a trusted proxy's header.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { SignJWT } from 'jose';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { idChecked } from '../helpers/decision-id.js';

const FR = '192.0.2.1';
const DE = '192.0.2.2';
const US = '192.0.2.3';
/** An address no table knows: the country is unknown. */
const NOWHERE = '10.0.0.1';
const GEO = { [FR]: 'FR', [DE]: 'DE', [US]: 'US' };

const HOOKS = { secret: '', trustedProxies: [], omeSecret: '', mediamtx: { allowApiFrom: [] } };

export function geoSuite(factory: StoreFactory): void {
  describe(`viewer country rules over HTTP: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });
    const fresh = async (overrides: Record<string, unknown> = {}) => {
      t = await testApp(await factory.make(), { hooks: HOOKS, ...overrides }, { geo: fixedGeo(GEO) });
      acct = await t.account();
    };
    const api = (secret = acct.secret) => {
      const auth = { authorization: `Bearer ${secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, b?: object) => request(t.app).post(p).set(auth).send(b),
        put: (p: string, b: object) => request(t.app).put(p).set(auth).send(b),
        del: (p: string) => request(t.app).delete(p).set(auth),
      };
    };
    const mk = async (kind: 'publish' | 'subscribe', body: Record<string, unknown> = {}) => {
      const r = await api().post(`/api/${kind}_token`, { label: 'x', streams: [{ streamName: 'cam1' }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string };
    };
    /** A viewer through the generic decision endpoint: [status, reason]. */
    const view = async (clientIp: string, token?: string, streamName = 'cam1') => {
      const r = await request(t.app)
        .post('/hooks/authorize')
        .send({ action: 'subscribe', token, streamName, accountId: token ? undefined : acct.id, clientIp });
      return `${r.status} ${r.body.reason}`;
    };
    const ALLOWED = '200 allowed';
    const REFUSED = '403 country_not_allowed';
    /** Publishes through nginx-rtmp (which feeds the live registry) and waits until it is applied. */
    const rtmp = async (call: 'publish' | 'publish_done', token: string, clientid: string, name = 'cam1') => {
      const r = await request(t.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=${FR}&clientid=${clientid}&call=${call}&name=${name}&type=live&token=${token}`);
      assert.equal(r.status, 200, r.text);
      await t.services.lifecycle.idle();
    };
    const check = async (kind: 'publish' | 'subscribe', id: number, clientIp: string, streamName = 'cam1') => {
      const r = await api().post(`/api/${kind}_token/${id}/check`, { streamName, clientIp });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const rule = (r.body.data.rules as Array<Record<string, unknown>>).find((x) => x.rule === 'country allowed');
      return { reason: r.body.data.reason as string, rule };
    };

    describe('publishers and token-less viewers', () => {
      before(() => fresh());

      it('admits a publisher from a country its own token denies; its lists hold its viewers', async () => {
        const p = await mk('publish', { deniedCountries: ['FR'], streams: [{ streamName: 'solo' }] });
        const pub = await request(t.app).post('/hooks/authorize').send({ action: 'publish', token: p.token, streamName: 'solo', clientIp: FR });
        assert.deepEqual([pub.status, pub.body.reason], [200, 'allowed']);
        assert.deepEqual([await view(FR, undefined, 'solo'), await view(US, undefined, 'solo')], [REFUSED, ALLOWED]);
        const c = await check('publish', p.id, FR, 'solo');
        assert.equal(c.reason, 'allowed');
        assert.deepEqual(c.rule, {
          rule: 'country allowed',
          reason: 'country_not_allowed',
          result: 'skipped',
          detail: 'publishers are not restricted by country; these lists apply to viewers',
        });
      });

      it("holds viewers to every matching publish token's lists before the stream is live, to the publishing token's while it is", async () => {
        const deniesFr = await mk('publish', { deniedCountries: ['FR'] });
        const deniesDe = await mk('publish', { deniedCountries: ['DE'], streams: [{ streamName: 'cam[0-9]+', isRegex: true }] });
        const none = await mk('publish');
        await mk('publish', { deniedCountries: ['US'], streams: [{ streamName: 'elsewhere' }] }); // matches no cam
        const viewer = await mk('subscribe'); // no lists of its own: inherits

        // not live: both matching tokens' lists, each must pass
        assert.deepEqual([await view(FR), await view(DE), await view(US), await view(NOWHERE)], [REFUSED, REFUSED, ALLOWED, ALLOWED]);
        let c = await check('subscribe', viewer.id, DE);
        assert.deepEqual(c.rule, {
          rule: 'country allowed',
          reason: 'country_not_allowed',
          result: 'fail',
          detail: `country DE is denied by publish token ${deniesDe.id}'s deniedCountries`,
          source: `publish token ${deniesDe.id}`,
        });
        c = await check('subscribe', viewer.id, US);
        assert.deepEqual(c.rule, {
          rule: 'country allowed',
          reason: 'country_not_allowed',
          result: 'pass',
          detail: `country US: passes publish token ${deniesFr.id}'s deniedCountries and publish token ${deniesDe.id}'s deniedCountries`,
          source: `publish tokens ${deniesFr.id}, ${deniesDe.id}`,
        });

        // live, published by the FR-denying token (from France: publishers are not restricted)
        await rtmp('publish', deniesFr.token, '1');
        assert.deepEqual([await view(FR), await view(DE), await view(US)], [REFUSED, ALLOWED, ALLOWED]);
        assert.deepEqual([await view(FR, viewer.token), await view(DE, viewer.token)], [REFUSED, ALLOWED]);
        c = await check('subscribe', viewer.id, FR);
        assert.deepEqual([c.rule?.result, c.rule?.detail, c.rule?.source], ['fail', `country FR is denied by publish token ${deniesFr.id}'s deniedCountries`, `publish token ${deniesFr.id}`]);
        // cam2 is not live: the DE-denying token's lists alone
        assert.deepEqual([await view(FR, undefined, 'cam2'), await view(DE, undefined, 'cam2')], [ALLOWED, REFUSED]);

        // ended: both again
        await rtmp('publish_done', deniesFr.token, '1');
        assert.deepEqual([await view(FR), await view(DE)], [REFUSED, REFUSED]);

        // live, published by the DE-denying token: only its lists
        await rtmp('publish', deniesDe.token, '2');
        assert.deepEqual([await view(FR), await view(DE)], [ALLOWED, REFUSED]);
        await rtmp('publish_done', deniesDe.token, '2');

        // live, published by a token without lists: no list applies (and no account default is set)
        await rtmp('publish', none.token, '3');
        assert.deepEqual([await view(FR), await view(DE), await view(US)], [ALLOWED, ALLOWED, ALLOWED]);
        c = await check('subscribe', viewer.id, FR);
        assert.deepEqual(c.rule, { rule: 'country allowed', reason: 'country_not_allowed', result: 'skipped', detail: 'any country' });
        await rtmp('publish_done', none.token, '3');
        assert.deepEqual([await view(FR), await view(DE)], [REFUSED, REFUSED]);
      });

      it("follows a publish token's list changes, disabling and deletion at the next decision", async () => {
        const p = await mk('publish', { allowedCountries: ['US'], streams: [{ streamName: 'news' }] });
        assert.deepEqual([await view(US, undefined, 'news'), await view(FR, undefined, 'news'), await view(NOWHERE, undefined, 'news')], [ALLOWED, REFUSED, REFUSED]);
        await api().put(`/api/publish_token/${p.id}`, { updateAllowedCountries: ['FR'] });
        assert.deepEqual([await view(US, undefined, 'news'), await view(FR, undefined, 'news')], [REFUSED, ALLOWED]);
        // disabling the token never lifts its lists
        await api().put(`/api/publish_token/${p.id}`, { isActive: false });
        assert.deepEqual([await view(US, undefined, 'news'), await view(FR, undefined, 'news')], [REFUSED, ALLOWED]);
        await api().put(`/api/publish_token/${p.id}`, { isActive: true });
        assert.equal(await view(US, undefined, 'news'), REFUSED);
        const del = await request(t.app).delete(`/api/publish_token/${p.id}`).set('authorization', `Bearer ${acct.secret}`);
        assert.equal(del.status, 200);
        // deleted, its lists stay on the account's secured streams until the account removes them
        assert.deepEqual([await view(US, undefined, 'news'), await view(FR, undefined, 'news')], [REFUSED, ALLOWED]);
        const lift = await request(t.app).delete('/api/secured_streams/news').set('authorization', `Bearer ${acct.secret}`);
        assert.equal(lift.status, 200);
        assert.equal(await view(US, undefined, 'news'), ALLOWED);
      });

      it("never applies one account's lists to another account's viewers", async () => {
        await mk('publish', { deniedCountries: ['FR'], streams: [{ streamName: 'shared' }] });
        const mine = acct;
        acct = await t.account('other');
        try {
          assert.equal(await view(FR, undefined, 'shared'), ALLOWED);
          const theirs = await mk('subscribe', { streams: [{ streamName: 'shared' }] });
          assert.equal(await view(FR, theirs.token, 'shared'), ALLOWED);
        } finally {
          acct = mine;
        }
        assert.equal(await view(FR, undefined, 'shared'), REFUSED);
      });
    });

    describe('subscribe tokens', () => {
      before(() => fresh());

      it('a subscribe token with lists of its own is held to them alone; one without inherits', async () => {
        const deniesFr = await mk('publish', { deniedCountries: ['FR'] });
        const own = await mk('subscribe', { allowedCountries: ['FR', 'DE'] });
        const inherits = await mk('subscribe');
        for (const live of [false, true]) {
          if (live) await rtmp('publish', deniesFr.token, '1');
          assert.deepEqual([await view(FR, own.token), await view(DE, own.token), await view(US, own.token), await view(NOWHERE, own.token)], [ALLOWED, ALLOWED, REFUSED, REFUSED], `live ${live}`);
          assert.deepEqual([await view(FR, inherits.token), await view(DE, inherits.token), await view(US, inherits.token)], [REFUSED, ALLOWED, ALLOWED], `live ${live}`);
        }
        const c = await check('subscribe', own.id, US);
        assert.deepEqual(c.rule, {
          rule: 'country allowed',
          reason: 'country_not_allowed',
          result: 'fail',
          detail: `country US is not in subscribe token ${own.id}'s allowedCountries`,
          source: `subscribe token ${own.id}`,
        });
        const unknown = await check('subscribe', own.id, NOWHERE);
        assert.equal(unknown.rule?.detail, `the client country is unknown, and subscribe token ${own.id}'s allowedCountries allows only some countries`);
        // the token's lists change: its holder follows at once
        await api().put(`/api/subscribe_token/${own.id}`, { updateAllowedCountries: [] });
        assert.deepEqual([await view(FR, own.token), await view(US, own.token)], [REFUSED, ALLOWED]);
      });

      it("a self-signed JWT is held to its parent's own lists, else to the stream's", async () => {
        const parentOwn = await mk('subscribe', { allowedCountries: ['FR'] });
        const parentInherits = await mk('subscribe');
        const jwt = (parent: { id: number; token: string }) =>
          new SignJWT({ streaming: { tokenId: parent.id, tokenType: 'Subscribe', streamName: 'cam1' } })
            .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
            .setIssuedAt()
            .setExpirationTime(Math.floor(Date.now() / 1000) + 600)
            .sign(new TextEncoder().encode(parent.token));
        const own = await jwt(parentOwn);
        const inherits = await jwt(parentInherits);
        // cam1 is live by the FR-denying token (previous test)
        assert.deepEqual([await view(FR, own), await view(US, own)], [ALLOWED, REFUSED]);
        assert.deepEqual([await view(FR, inherits), await view(US, inherits)], [REFUSED, ALLOWED]);
      });

      it('a bind-on-usage token, decided from its cached copy, follows a change of the lists it inherits at once', async () => {
        const binds = await mk('subscribe', { bindIpsOnUsage: 5, streams: [{ streamName: 'cam1' }, { streamName: 'other' }] });
        for (let i = 0; i < 3; i++) {
          assert.deepEqual([await view(FR, binds.token), await view(US, binds.token), await view(US, binds.token, 'other')], [REFUSED, ALLOWED, ALLOWED], `round ${i}`);
        }
        await api().post('/api/geo/account', { updateDeniedCountries: ['US'] });
        // 'other' has no publish token with lists: the new default; cam1 is live by the FR-denying token: its lists
        assert.deepEqual([await view(US, binds.token, 'other'), await view(FR, binds.token, 'other')], [REFUSED, ALLOWED]);
        assert.deepEqual([await view(FR, binds.token), await view(US, binds.token)], [REFUSED, ALLOWED]);
        await api().post('/api/geo/account', { updateDeniedCountries: [] });
        assert.equal(await view(US, binds.token, 'other'), ALLOWED);
      });
    });

    describe('account defaults', () => {
      before(() => fresh());

      it('reads and changes the defaults as the hosted API does', async () => {
        assert.deepEqual((await api().get('/api/geo/account')).body, { status: 'success', data: { allowedCountries: [], deniedCountries: [] } });
        let r = await api().post('/api/geo/account', { updateDeniedCountries: ['us', 'GB', 'us'] });
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: { allowedCountries: [], deniedCountries: ['US', 'GB'] } }]);
        assert.deepEqual((await api().get('/api/geo/account')).body.data, { allowedCountries: [], deniedCountries: ['US', 'GB'] });
        // nothing given (the hosted client sends {} or nulls): unchanged
        for (const body of [{}, { updateAllowedCountries: null, updateDeniedCountries: null }]) {
          r = await api().post('/api/geo/account', body);
          assert.deepEqual([r.status, r.body.data], [200, { allowedCountries: [], deniedCountries: ['US', 'GB'] }], JSON.stringify(body));
        }
        // both non-empty is refused, naming the list, and nothing changes
        r = await api().post('/api/geo/account', { updateAllowedCountries: ['FR'] });
        assert.equal(r.status, 400);
        assert.equal(r.body.data.message, 'Validation errors');
        assert.deepEqual(Object.keys(r.body.data.errors), ['updateAllowedCountries']);
        assert.match(r.body.data.errors.updateAllowedCountries[0], /give allowedCountries or deniedCountries, not both/);
        assert.deepEqual((await api().get('/api/geo/account')).body.data, { allowedCountries: [], deniedCountries: ['US', 'GB'] });
        // switching lists in one request
        r = await api().post('/api/geo/account', { updateAllowedCountries: ['FR'], updateDeniedCountries: [] });
        assert.deepEqual(r.body.data, { allowedCountries: ['FR'], deniedCountries: [] });
        r = await api().post('/api/geo/account', { updateAllowedCountries: [] });
        assert.deepEqual(r.body.data, { allowedCountries: [], deniedCountries: [] });
        // the record's names (the Python client sends them) are aliases of the update* names
        r = await api().post('/api/geo/account', { allowedCountries: ['us'], deniedCountries: [] });
        assert.deepEqual([r.status, r.headers['x-streamgate-ignored-fields'], r.body.data], [200, undefined, { allowedCountries: ['US'], deniedCountries: [] }]);
        r = await api().post('/api/geo/account', { allowedCountries: ['DE'], updateAllowedCountries: ['FR'] });
        assert.equal(r.status, 400);
        assert.deepEqual(r.body.data.errors, { allowedCountries: ['give either allowedCountries or updateAllowedCountries, not both'] });
        r = await api().post('/api/geo/account', { allowedCountries: [] });
        assert.deepEqual(r.body.data, { allowedCountries: [], deniedCountries: [] });
        // a token's effectiveSettings show the lists its viewers get: its own, else the account's
        await api().post('/api/geo/account', { updateDeniedCountries: ['RU'] });
        const own = await api().post('/api/subscribe_token', { label: 'own', streams: [{ streamName: 'cam1' }], allowedCountries: ['FR'] });
        const none = await api().post('/api/publish_token', { label: 'none', streams: [{ streamName: 'cam1' }] });
        assert.deepEqual(own.body.data.effectiveSettings, { originCluster: 'auto', allowedCountries: ['FR'], deniedCountries: [] });
        assert.deepEqual(none.body.data.effectiveSettings, { originCluster: 'auto', allowedCountries: [], deniedCountries: ['RU'], geoCascade: { isEnabled: false, clusters: [] } });
        const listed = await api().get('/api/publish_token/list?itemsOnPage=100');
        assert.deepEqual(listed.body.data.find((x: { id: number }) => x.id === none.body.data.id).effectiveSettings.deniedCountries, ['RU']);
        await api().del(`/api/subscribe_token/${own.body.data.id}`);
        await api().del(`/api/publish_token/${none.body.data.id}`);
        await api().post('/api/geo/account', { updateDeniedCountries: [] });
      });

      it('refuses bad lists with a 400 naming each field, and stores nothing', async () => {
        await api().post('/api/geo/account', { updateDeniedCountries: ['DE'] });
        const cases: Array<[Record<string, unknown>, string[]]> = [
          [{ updateAllowedCountries: ['XX'] }, ['updateAllowedCountries[0]']],
          [{ updateDeniedCountries: ['USA', 'FR', 'f'] }, ['updateDeniedCountries[0]', 'updateDeniedCountries[2]']],
          [{ updateDeniedCountries: 'FR' }, ['updateDeniedCountries']],
          [{ updateAllowedCountries: [7] }, ['updateAllowedCountries[0]']],
          [{ updateDeniedCountries: Array.from({ length: 101 }, () => 'FR') }, ['updateDeniedCountries']],
          [{ updateAllowedCountries: ['ZZ'], updateDeniedCountries: ['QQ'] }, ['updateAllowedCountries[0]', 'updateDeniedCountries[0]']],
        ];
        for (const [body, fields] of cases) {
          const r = await api().post('/api/geo/account', body);
          assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
          assert.deepEqual(Object.keys(r.body.data.errors).sort(), fields, JSON.stringify(body).slice(0, 80));
        }
        assert.deepEqual((await api().get('/api/geo/account')).body.data, { allowedCountries: [], deniedCountries: ['DE'] });
        assert.equal((await request(t.app).get('/api/geo/account')).status, 401);
        assert.equal((await request(t.app).post('/api/geo/account').send({ updateDeniedCountries: [] })).status, 401);
        const other = await t.account('other');
        assert.deepEqual((await api(other.secret).get('/api/geo/account')).body.data, { allowedCountries: [], deniedCountries: [] });
        await api().post('/api/geo/account', { updateDeniedCountries: [] });
      });

      it('apply to viewers when no token sets lists, and give way to any token that does', async () => {
        const deniesFr = await mk('publish', { deniedCountries: ['FR'], streams: [{ streamName: 'covered' }] });
        const plain = await mk('publish', { streams: [{ streamName: 'covered' }, { streamName: 'cam1' }] });
        const inherits = await mk('subscribe', { streams: [{ streamName: '.*', isRegex: true }] });
        const own = await mk('subscribe', { allowedCountries: ['US'] });
        assert.deepEqual([await view(US), await view(US, inherits.token)], [ALLOWED, ALLOWED]);
        await api().post('/api/geo/account', { updateDeniedCountries: ['US'] });
        // cam1: no publish token with lists matches: the default
        assert.deepEqual([await view(US), await view(FR), await view(US, inherits.token), await view(US, own.token)], [REFUSED, ALLOWED, REFUSED, ALLOWED]);
        const c = await check('subscribe', inherits.id, US);
        assert.deepEqual(c.rule, {
          rule: 'country allowed',
          reason: 'country_not_allowed',
          result: 'fail',
          detail: 'country US is denied by the account default deniedCountries',
          source: 'account default',
        });
        // covered, not live: the FR-denying token's lists, not the default
        assert.deepEqual([await view(US, undefined, 'covered'), await view(FR, undefined, 'covered')], [ALLOWED, REFUSED]);
        // covered, live by a token without lists: the default again
        await rtmp('publish', plain.token, '9', 'covered');
        assert.deepEqual([await view(US, undefined, 'covered'), await view(FR, undefined, 'covered')], [REFUSED, ALLOWED]);
        await rtmp('publish_done', plain.token, '9', 'covered');
        assert.deepEqual([await view(US, undefined, 'covered'), await view(FR, undefined, 'covered')], [ALLOWED, REFUSED]);
        // the default changes: viewers follow at the next decision
        await api().post('/api/geo/account', { updateAllowedCountries: ['DE'], updateDeniedCountries: [] });
        assert.deepEqual([await view(US), await view(DE), await view(NOWHERE)], [REFUSED, ALLOWED, REFUSED]);
        await api().post('/api/geo/account', { updateAllowedCountries: [] });
        assert.deepEqual([await view(US), await view(NOWHERE)], [ALLOWED, ALLOWED]);
        assert.ok(deniesFr.id > 0);
      });
    });

    describe("a trusted proxy's country header", () => {
      before(() =>
        fresh({
          geo: { databasePath: '', trustedHeader: 'cf-ipcountry' },
          hooks: { ...HOOKS, trustedProxies: ['127.0.0.1'] },
        }),
      );

      it('decides the viewer country from the header through the director', async () => {
        await mk('publish', { deniedCountries: ['FR'] });
        const director = (country: string) =>
          request(t.app).post('/api/director/subscribe').set('cf-ipcountry', country).send({ streamName: 'cam1', streamAccountId: acct.id });
        const fr = await director('fr');
        assert.deepEqual([fr.status, idChecked(fr.body)], [403, { status: 'fail', data: { message: 'Unauthorized: Country not allowed', reason: 'country_not_allowed' } }]);
        assert.equal((await director('US')).status, 200);
        // from an address that is not a trusted proxy the header is not believed
        const untrusted = await testApp(t.services.store, { hooks: HOOKS, geo: { databasePath: '', trustedHeader: 'cf-ipcountry' } }, { geo: fixedGeo(GEO) });
        const direct = await request(untrusted.app).post('/api/director/subscribe').set('cf-ipcountry', 'FR').send({ streamName: 'cam1', streamAccountId: acct.id });
        assert.equal(direct.status, 200);
      });
    });
  });
}
