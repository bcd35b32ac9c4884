// What one account may hold: tokens of each kind and regex rules across its securing publish
// tokens. A refusal is a 400 naming the limit and stores nothing; concurrent creates stop exactly
// at the limit.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';

const LIMITS = { tokensPerAccount: 5, regexStreamsPerAccount: 6 };
const regexes = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ streamName: `${prefix}${i}-[a-z]+`, isRegex: true }));
const REGEX_LIMIT = (others: number, adding: number) =>
  `an account's securing publish tokens (subscribeRequiresAuth, active or not) and its secured streams hold at most 6 regex stream rules together (limits.regexStreamsPerAccount); the others hold ${others}, this token would hold ${adding}: use exact stream names, fewer patterns, a pattern that covers several names, or remove secured streams you no longer need (DELETE /api/secured_streams/{name})`;

export function accountLimitsSuite(factory: StoreFactory): void {
  describe(`per-account limits: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });
    const fresh = async () => {
      t = await testApp(await factory.make(), { limits: LIMITS });
      acct = await t.account();
    };
    const auth = () => ({ authorization: `Bearer ${acct.secret}` });
    const post = (p: string, body: unknown) => request(t.app).post(p).set(auth()).send(body as object);
    const put = (p: string, body: unknown) => request(t.app).put(p).set(auth()).send(body as object);
    const list = async (kind: string) => (await request(t.app).get(`/api/${kind}_token/list?itemsOnPage=100`).set(auth())).body.data as Array<{ id: number; streams: unknown[] }>;
    const version = () => t.services.store.accountVersion(acct.id);

    it('refuses the token past tokensPerAccount with a 400 naming the limit, storing nothing; the other kind has its own count', async () => {
      await fresh();
      for (let i = 0; i < 5; i++) assert.equal((await post('/api/subscribe_token', { label: `s${i}`, streams: [{ streamName: 'cam1' }] })).status, 200);
      const ver = await version();
      const r = await post('/api/subscribe_token', { label: 'one too many', streams: [{ streamName: 'cam1' }] });
      assert.deepEqual([r.status, r.body], [
        400,
        { status: 'fail', data: { message: 'an account holds at most 5 subscribe tokens (limits.tokensPerAccount): delete unused ones first', limit: 'tokensPerAccount', max: 5 } },
      ]);
      assert.equal((await list('subscribe')).length, 5);
      assert.equal(await version(), ver, 'nothing written');
      assert.equal((await post('/api/publish_token', { label: 'p', streams: [{ streamName: 'cam1' }] })).status, 200);
      // Deleting one makes room again.
      const [first] = await list('subscribe');
      assert.equal((await request(t.app).delete(`/api/subscribe_token/${first.id}`).set(auth())).status, 200);
      assert.equal((await post('/api/subscribe_token', { label: 'room again', streams: [{ streamName: 'cam1' }] })).status, 200);
    });

    it('twenty concurrent creates on a full-but-four account store exactly four', async () => {
      await fresh();
      assert.equal((await post('/api/publish_token', { label: 'first', streams: [{ streamName: 'cam1' }] })).status, 200);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post('/api/publish_token', { label: `c${i}`, streams: [{ streamName: 'cam1' }] })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [...Array(4).fill(200), ...Array(16).fill(400)]);
      assert.equal((await list('publish')).length, 5);
    });

    it('counts regex rules across securing publish tokens only, and refuses the create that would pass regexStreamsPerAccount', async () => {
      await fresh();
      const secured = { subscribeRequiresAuth: true };
      assert.equal((await post('/api/publish_token', { label: 'a', streams: regexes('a', 4), ...secured })).status, 200);
      // Not securing: neither counted nor limited.
      assert.equal((await post('/api/publish_token', { label: 'open', streams: regexes('o', 10) })).status, 200);
      assert.equal((await post('/api/subscribe_token', { label: 'viewer', streams: regexes('v', 10) })).status, 200);
      const ver = await version();
      const r = await post('/api/publish_token', { label: 'b', streams: [{ streamName: 'exact' }, ...regexes('b', 3)], ...secured });
      assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors: { streams: [REGEX_LIMIT(4, 3)] } } }]);
      assert.equal(await version(), ver, 'nothing written');
      assert.equal((await post('/api/publish_token', { label: 'b', streams: regexes('b', 2), ...secured })).status, 200);
    });

    it('refuses an update that would bring a token over the regex limit (adding patterns, securing), and still allows edits that add none', async () => {
      await fresh();
      const a = (await post('/api/publish_token', { label: 'a', streams: regexes('a', 5), subscribeRequiresAuth: true })).body.data;
      const b = (await post('/api/publish_token', { label: 'b', streams: regexes('b', 2) })).body.data;
      const before = (await list('publish')).map((x) => x.streams);
      const ver = await version();
      const add = await put(`/api/publish_token/${a.id}`, { addTokenStreams: regexes('x', 2) });
      assert.deepEqual([add.status, add.body.data.errors], [400, { addTokenStreams: [REGEX_LIMIT(0, 7)] }]);
      const secure = await put(`/api/publish_token/${b.id}`, { subscribeRequiresAuth: true });
      assert.deepEqual([secure.status, secure.body.data.errors], [400, { subscribeRequiresAuth: [REGEX_LIMIT(5, 2)] }]);
      assert.equal(await version(), ver, 'nothing written');
      assert.deepEqual((await list('publish')).map((x) => x.streams), before);
      // Disabled, a token still secures its streams, so its patterns still count.
      assert.equal((await put(`/api/publish_token/${a.id}`, { isActive: false })).status, 200);
      const disabled = await put(`/api/publish_token/${b.id}`, { subscribeRequiresAuth: true });
      assert.deepEqual([disabled.status, disabled.body.data.errors], [400, { subscribeRequiresAuth: [REGEX_LIMIT(5, 2)] }]);
      // Deleted, its patterns stay secured streams and still count, until the account removes them.
      assert.equal((await request(t.app).delete(`/api/publish_token/${a.id}`).set(auth())).status, 200);
      const deleted = await put(`/api/publish_token/${b.id}`, { subscribeRequiresAuth: true });
      assert.deepEqual([deleted.status, deleted.body.data.errors], [400, { subscribeRequiresAuth: [REGEX_LIMIT(5, 2)] }]);
      for (const r of regexes('a', 5).slice(0, 3)) {
        assert.equal((await request(t.app).delete(`/api/secured_streams/${encodeURIComponent(r.streamName)}`).set(auth())).status, 200);
      }
      assert.equal((await put(`/api/publish_token/${b.id}`, { subscribeRequiresAuth: true })).status, 200);
      // A label edit adds no pattern: allowed even on an account at its limit.
      assert.equal((await put(`/api/publish_token/${b.id}`, { label: 'renamed' })).status, 200);
    });
  });
}
