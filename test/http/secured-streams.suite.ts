// Revoking never widens access: a publish token that secures its streams (subscribeRequiresAuth)
// keeps them secured when it is disabled, expires or is deleted; a deleted one leaves its stream
// rules on the account's secured streams until the account removes them. Only
// `subscribeRequiresAuth: false` or DELETE /api/secured_streams/{name} opens a stream.
import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';

export function securedStreamsSuite(factory: StoreFactory): void {
  describe(`secured streams after revocation: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    let now = Date.parse('2026-11-27T12:00:00Z');
    before(() => factory.setup());
    after(() => factory.teardown());
    beforeEach(async () => {
      now = Date.parse('2026-11-27T12:00:00Z');
      t = await testApp(await factory.make({ now: () => now }), {}, { now: () => now });
      acct = await t.account();
    });
    const auth = () => ({ authorization: `Bearer ${acct.secret}` });
    const api = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', p: string, body?: object) => {
      const r = request(t.app)[method](p).set(auth());
      return body ? r.send(body) : r;
    };
    const publish = async (body: Record<string, unknown>) => {
      const r = await api('post', '/api/publish_token', { label: 'p', streams: [{ streamName: 'live1' }], subscribeRequiresAuth: true, ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string };
    };
    /** A token-less viewer, as every caller asks (the generic endpoint names the account). */
    const view = async (streamName: string) => {
      const r = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName, accountId: acct.id });
      return [r.status, r.body.reason ?? 'allowed'];
    };
    const secured = async () => (await api('get', '/api/secured_streams?itemsOnPage=100')).body.data;

    it('a disabled securing token keeps its stream secured (bulk disable and update alike)', async () => {
      const p = await publish({});
      const q = await publish({ streams: [{ streamName: 'live2' }] });
      assert.deepEqual(await view('live1'), [401, 'token_required']);
      assert.deepEqual((await api('patch', '/api/publish_token/disable', { tokenIds: [p.id] })).body.data, { successfulTokens: [p.id], failedTokens: [] });
      assert.deepEqual(await view('live1'), [401, 'token_required']);
      assert.equal((await api('put', `/api/publish_token/${q.id}`, { isActive: false })).status, 200);
      assert.deepEqual(await view('live2'), [401, 'token_required']);
      // an open stream stays open
      assert.deepEqual(await view('other'), [200, 'allowed']);
    });

    it("a disabled publish token's country lists keep holding its viewers", async () => {
      const p = await publish({ streams: [{ streamName: 'geo1' }], subscribeRequiresAuth: false, allowedCountries: ['FR'] });
      const ask = async (country: string) => {
        const r = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'geo1', accountId: acct.id, country });
        return [r.status, r.body.reason ?? 'allowed'];
      };
      assert.deepEqual(await ask('US'), [403, 'country_not_allowed']);
      assert.equal((await api('put', `/api/publish_token/${p.id}`, { isActive: false })).status, 200);
      assert.deepEqual(await ask('US'), [403, 'country_not_allowed']);
      assert.deepEqual(await ask('FR'), [200, 'allowed']);
    });

    it('an expired securing token keeps its stream secured', async () => {
      await publish({ expiresOn: '2026-11-27T12:01:00Z' });
      now += 120_000;
      assert.deepEqual(await view('live1'), [401, 'token_required']);
    });

    it('a deleted securing token leaves its exact and regex rules secured, listed, and removable by the account only', async () => {
      const p = await publish({ streams: [{ streamName: 'live1' }, { streamName: 'cam[0-9]+', isRegex: true }] });
      await publish({ streams: [{ streamName: 'kept-open' }], subscribeRequiresAuth: false }).then((o) => api('delete', `/api/publish_token/${o.id}`));
      assert.deepEqual(await secured(), []);
      now += 1000;
      assert.equal((await api('delete', `/api/publish_token/${p.id}`)).status, 200);
      assert.deepEqual(await view('live1'), [401, 'token_required']);
      assert.deepEqual(await view('cam7'), [401, 'token_required']);
      assert.deepEqual(await view('kept-open'), [200, 'allowed'], 'a token that secured nothing leaves nothing');
      const addedOn = '2026-11-27T12:00:01.000Z';
      const rules = { subscribeRequiresAuth: true, allowedCountries: [], deniedCountries: [] };
      assert.deepEqual(await secured(), [
        { streamName: 'cam[0-9]+', isRegex: true, tokenId: p.id, addedOn, ...rules },
        { streamName: 'live1', isRegex: false, tokenId: p.id, addedOn, ...rules },
      ]);
      // another account sees none of them and cannot remove them
      const other = await t.account('other');
      const theirs = await request(t.app).get('/api/secured_streams').set('authorization', `Bearer ${other.secret}`);
      assert.deepEqual([theirs.status, theirs.body.data], [200, []]);
      const steal = await request(t.app).delete('/api/secured_streams/live1').set('authorization', `Bearer ${other.secret}`);
      assert.deepEqual([steal.status, steal.body.data], [404, { message: 'No secured stream named: live1', streamName: 'No secured stream named: live1' }]);
      assert.deepEqual(await view('live1'), [401, 'token_required']);
      // the account opens one deliberately
      const ver = await t.services.store.accountVersion(acct.id);
      const open = await api('delete', `/api/secured_streams/${encodeURIComponent('cam[0-9]+')}`);
      assert.deepEqual([open.status, open.body.data], [200, [{ streamName: 'cam[0-9]+', isRegex: true, tokenId: p.id, addedOn, ...rules }]]);
      assert.ok((await t.services.store.accountVersion(acct.id)) > ver, 'the account version moved');
      assert.deepEqual(await view('cam7'), [200, 'allowed']);
      assert.deepEqual(await view('live1'), [401, 'token_required']);
      const again = await api('delete', `/api/secured_streams/${encodeURIComponent('cam[0-9]+')}`);
      assert.equal(again.status, 404);
    });

    it('a deleted disabled securing token is kept too; each deleted token keeps its own entry of a name', async () => {
      const p = await publish({});
      assert.equal((await api('put', `/api/publish_token/${p.id}`, { isActive: false })).status, 200);
      assert.equal((await api('delete', `/api/publish_token/${p.id}`)).status, 200);
      now += 5000;
      const q = await publish({ allowedCountries: ['FR'] });
      assert.equal((await api('delete', `/api/publish_token/${q.id}`)).status, 200);
      assert.deepEqual(await secured(), [
        { streamName: 'live1', isRegex: false, tokenId: p.id, addedOn: '2026-11-27T12:00:00.000Z', subscribeRequiresAuth: true, allowedCountries: [], deniedCountries: [] },
        { streamName: 'live1', isRegex: false, tokenId: q.id, addedOn: '2026-11-27T12:00:05.000Z', subscribeRequiresAuth: true, allowedCountries: ['FR'], deniedCountries: [] },
      ]);
      assert.deepEqual(await view('live1'), [401, 'token_required']);
      const open = await api('delete', '/api/secured_streams/live1');
      assert.deepEqual([open.status, open.body.data.length], [200, 2]);
      assert.deepEqual(await view('live1'), [200, 'allowed']);
    });

    it("a deleted publish token's country lists keep holding the viewers of its streams, until the account removes them", async () => {
      const p = await publish({ streams: [{ streamName: 'geo1' }, { streamName: 'geo[2-3]', isRegex: true }], subscribeRequiresAuth: false, deniedCountries: ['US'] });
      const ask = async (streamName: string, country: string) => {
        const r = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName, accountId: acct.id, country });
        return [r.status, r.body.reason ?? 'allowed'];
      };
      assert.equal((await api('delete', `/api/publish_token/${p.id}`)).status, 200);
      assert.deepEqual([await ask('geo1', 'US'), await ask('geo2', 'US'), await ask('geo1', 'FR'), await ask('geo9', 'US')], [
        [403, 'country_not_allowed'],
        [403, 'country_not_allowed'],
        [200, 'allowed'],
        [200, 'allowed'],
      ]);
      // the check endpoint names them: a subscribe token without lists of its own inherits them
      const s = (await api('post', '/api/subscribe_token', { label: 's', streams: [{ streamName: 'geo1' }] })).body.data;
      const c = await api('post', `/api/subscribe_token/${s.id}/check`, { streamName: 'geo1', country: 'US' });
      assert.deepEqual(
        c.body.data.rules.find((r: { rule: string }) => r.rule === 'country allowed'),
        { rule: 'country allowed', reason: 'country_not_allowed', result: 'fail', detail: `country US is denied by deleted publish token ${p.id}'s deniedCountries`, source: `deleted publish token ${p.id}` },
      );
      assert.equal((await api('delete', '/api/secured_streams/geo1')).status, 200);
      assert.deepEqual([await ask('geo1', 'US'), await ask('geo2', 'US')], [[200, 'allowed'], [403, 'country_not_allowed']]);
    });

    it('subscribeRequiresAuth: false opens a token\'s names deliberately', async () => {
      const p = await publish({});
      assert.equal((await api('put', `/api/publish_token/${p.id}`, { subscribeRequiresAuth: false })).status, 200);
      assert.deepEqual(await view('live1'), [200, 'allowed']);
    });

    it('a subscribe token still opens a secured stream whose publish token was deleted', async () => {
      const p = await publish({});
      const s = (await api('post', '/api/subscribe_token', { label: 's', streams: [{ streamName: 'live1' }] })).body.data;
      assert.equal((await api('delete', `/api/publish_token/${p.id}`)).status, 200);
      const r = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'live1', accountId: acct.id, token: s.token });
      assert.deepEqual([r.status, r.body.allowed], [200, true]);
    });

    it('refuses a bad page with a 400 naming it', async () => {
      const r = await api('get', '/api/secured_streams?itemsOnPage=0');
      assert.deepEqual([r.status, Object.keys(r.body.data.errors)], [400, ['itemsOnPage']]);
    });
  });
}
