// Token sharing over HTTP on every store, two instances on one store (docs/api.md#token-sharing):
// a token used from 20 addresses in 5 countries within 10 minutes is flagged once — a signed
// tokenSharing webhook (verified with the `standardwebhooks` library) — `disable` refuses its next
// decision, `limit` ends the sessions of its earlier addresses; a household, a /24 with a mobile
// switch and one address with many sessions are not flagged; the policy and window routes; a
// credential issuer's subject (a JWT's sub) is counted on its own: disabled by revoking the subject
// at its issuer, limited by ending its own sessions only.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { SignJWT } from 'jose';
import type { StoreFactory } from '../helpers/stores.js';
import type { Store } from '../../src/store/store.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { SHARING_COUNTRIES as COUNTRIES, testPlaces } from '../helpers/places.js';

const KEY = 'sharing-suite-audit-key-0123456789abcdef';

export function sharingSuite(factory: StoreFactory): void {
  describe(`token sharing: ${factory.name}, two instances`, () => {
    let rx: Receiver;
    let store: Store;
    let a: TestApp;
    let b: TestApp;
    let acct: { id: string; secret: string };
    // the services' clock: real time, moved on by the uses (webhook signatures are checked against the real clock)
    let now = Date.now();

    before(async () => {
      await factory.setup();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await factory.teardown();
    });

    const fresh = async () => {
      now = Date.now();
      store = await factory.make({ now: () => now });
      const cfg = {
        audit: { key: KEY },
        webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: 2000, retries: 0 },
        enforcement: { terminatedHoldSeconds: 60, terminateOn: ['disable'] },
      };
      a = await testApp(store, cfg, { now: () => now, places: testPlaces });
      b = await testApp(store, cfg, { now: () => now, places: testPlaces });
      acct = await a.account('sharing');
      rx.received.length = 0;
      rx.respond = (_q, s) => void s.writeHead(204).end();
    };
    const api = (t: TestApp) => {
      const auth = { authorization: `Bearer ${acct.secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, body?: object) => request(t.app).post(p).set(auth).send(body),
        put: (p: string, body?: object) => request(t.app).put(p).set(auth).send(body),
      };
    };
    const subscribeToken = async (body: Record<string, unknown> = {}) => {
      const r = await api(a).post('/api/subscribe_token', { label: 'paid event', streams: [{ streamName: 'cam1' }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string; sharing?: unknown };
    };
    const authorize = (t: TestApp, token: string, clientIp: string) => request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'cam1', token, clientIp });
    /** Both instances write what they queued, then deliver. */
    const flush = async () => {
      await a.services.sharing.flush();
      await b.services.sharing.flush();
      await a.services.dispatcher.idle();
      await b.services.dispatcher.idle();
    };
    const flagged = async () => {
      let n = 0;
      for (const t of [a, b]) n += ((await t.services.metrics.registry.getSingleMetric('streamgate_sharing_flags_total')?.get())?.values ?? []).reduce((s, v) => s + v.value, 0);
      return n;
    };
    /**
     * 20 addresses in 5 countries within 10 minutes (a use every 10 s), alternating between the
     * instances, each writing its uses as its timer would (every second) after each.
     */
    const shared = async (token: string, from = 0, count = 20) => {
      for (let i = from; i < from + count; i++) {
        const inst = i % 2 === 0 ? a : b;
        const r = await authorize(inst, token, `198.51.${i}.1`);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        await inst.services.sharing.flush();
        now += 10_000;
      }
    };

    it('notify: 20 addresses in 5 countries within 10 minutes over two instances are flagged once, with a signed tokenSharing webhook', async () => {
      await fresh();
      assert.equal((await api(a).put('/api/sharing/policy', { enabled: true })).status, 200);
      const hook = (await api(a).post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: false, isTokenSharingHooks: true })).body.data as { secret: string; isTokenSharingHooks?: boolean };
      assert.equal(hook.isTokenSharingHooks, true);
      const t = await subscribeToken();
      await shared(t.token);
      await flush();
      assert.equal(rx.received.length, 1);
      const got = rx.received[0];
      // verified by the Standard Webhooks library, not Streamgate's code
      const body = new StandardWebhook(hook.secret).verify(got.body.toString(), got.headers as Record<string, string>) as { type: string; event: string; data: Record<string, unknown> };
      assert.deepEqual([body.type, body.event], ['tokenSharing', 'Flagged']);
      // flagged by the first instance at the third use, a third country, one of whose uses the other instance wrote
      assert.deepEqual(body.data, {
        accountId: acct.id,
        tokenId: t.id,
        tokenType: 'subscribe',
        label: 'paid event',
        flags: ['countries'],
        action: 'notify',
        windowSeconds: 3600,
        addresses: 3,
        networks: 3,
        asns: 3,
        countries: 3,
        countryCodes: ['DE', 'FR', 'US'],
      });
      // more uses in the window: still flagged, not notified again, on either instance
      await shared(t.token, 20);
      await flush();
      assert.equal(rx.received.length, 1);
      assert.equal(await flagged(), 1);
      // the window, as the dashboard reads it, from the other instance
      const w = await api(b).get(`/api/sharing/subscribe_token/${t.id}`);
      assert.equal(w.status, 200);
      assert.deepEqual([w.body.data.addresses, w.body.data.countries, w.body.data.flags, w.body.data.policy.enabled], [40, COUNTRIES.slice().sort(), ['networks', 'asns', 'countries'], true]);
      assert.deepEqual(w.body.data.uses[0], { ip: '198.51.39.1', network: '198.51.39.0/24', asn: 64_539, country: 'JP', at: new Date(now - 10_000).toISOString() });
      // the decisions themselves were allowed throughout
      assert.equal((await authorize(a, t.token, '198.51.99.1')).status, 200);
    });

    it('disable: the flagged token is disabled by the system actor, recorded in the audit log, and the next decision on either instance refuses it', async () => {
      await fresh();
      await api(a).put('/api/sharing/policy', { enabled: true, action: 'disable' });
      const t = await subscribeToken();
      // three uses in three countries, over both instances: the third is flagged
      await shared(t.token, 0, 3);
      await flush();
      for (const inst of [a, b]) {
        const r = await authorize(inst, t.token, '198.51.0.1');
        assert.deepEqual([r.status, r.body.reason], [401, 'token_disabled']);
      }
      assert.equal((await store.getToken(acct.id, 'subscribe', t.id))?.isActive, false);
      const entries = (await api(a).get('/api/audit?resource=subscribeToken')).body.data.entries as Array<{ actor: string; resourceId: string; changes: Record<string, unknown> }>;
      assert.deepEqual(
        entries.filter((e) => e.actor === 'system').map((e) => [e.resourceId, e.changes.isActive]),
        [[String(t.id), { from: true, to: false }]],
      );
    });

    it('limit: the newest device wins — the sessions of earlier addresses end and their re-asks are refused, the newest plays on', async () => {
      await fresh();
      await api(a).put('/api/sharing/policy', { enabled: true, action: 'limit' });
      const t = await subscribeToken();
      const play = (inst: TestApp, call: string, ip: string, clientid: string) =>
        request(inst.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=${ip}&clientid=${clientid}&call=${call}&name=cam1&type=live&token=${t.token}`);
      for (let i = 0; i < 6; i++) {
        assert.equal((await play(i % 2 === 0 ? a : b, 'play', `198.51.${i}.1`, String(100 + i))).status, 200);
        now += 30_000;
      }
      await a.services.lifecycle.idle();
      await b.services.lifecycle.idle();
      await flush();
      const live = (await api(a).get(`/api/sessions?tokenId=${t.id}`)).body.data as { data: Array<{ clientIp: string }> };
      assert.deepEqual(live.data.map((s) => s.clientIp), ['198.51.5.1'], 'only the newest device plays on');
      assert.equal((await play(b, 'update_play', '198.51.0.1', '100')).status, 403, 'an earlier device is cut at its re-ask');
      assert.equal((await play(a, 'update_play', '198.51.5.1', '105')).status, 200);
    });

    const ISSUER_SECRET = 'sharing-issuer-secret-0123456789abcdef';
    /** A LiveKit-style HMAC issuer whose policy token is a new subscribe token: its id and its policy token's. */
    const issuer = async () => {
      const policy = await subscribeToken({ label: 'idp viewers' });
      const made = await api(a).post('/api/issuers', {
        label: 'idp',
        policyTokenId: policy.id,
        issuer: 'https://idp.sharing.example/',
        keyIds: ['share-k1'],
        algorithms: ['HS256'],
        secret: ISSUER_SECRET,
        claims: { stream: 'room', viewerId: 'sub' },
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return { id: made.body.data.id as number, policyTokenId: policy.id };
    };
    /** A JWT of that issuer for `sub` (a fresh one each call: another jti, the same subject). */
    const jwtFor = (sub: string) =>
      new SignJWT({ sub, room: 'cam1' })
        .setProtectedHeader({ alg: 'HS256', kid: 'share-k1' })
        .setIssuer('https://idp.sharing.example/')
        .setJti(`${sub}-${Math.random().toString(36).slice(2)}`)
        .setIssuedAt(Math.floor(now / 1000))
        .setExpirationTime(Math.floor(now / 1000) + 3 * 3600)
        .sign(new TextEncoder().encode(ISSUER_SECRET));

    it("an issuer's subject: alice's JWTs from three countries over two instances are flagged apart from bob's, notified with the subject, and disabled by revoking her sub at the issuer", async () => {
      await fresh();
      await api(a).put('/api/sharing/policy', { enabled: true, action: 'disable' });
      const hook = (await api(a).post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: false, isTokenSharingHooks: true })).body.data as { secret: string };
      const iss = await issuer();
      // alice: a new JWT at each use, from three countries, over both instances; bob: many uses from one address
      for (let i = 0; i < 3; i++) {
        const inst = i % 2 === 0 ? a : b;
        assert.equal((await authorize(inst, await jwtFor('alice'), `198.51.${i}.1`)).status, 200);
        assert.equal((await authorize(inst, await jwtFor('bob'), '198.51.9.1')).status, 200);
        await inst.services.sharing.flush();
        now += 10_000;
      }
      await flush();
      assert.equal(rx.received.length, 1);
      const body = new StandardWebhook(hook.secret).verify(rx.received[0].body.toString(), rx.received[0].headers as Record<string, string>) as { data: Record<string, unknown> };
      assert.deepEqual(body.data, {
        accountId: acct.id,
        tokenId: iss.policyTokenId,
        tokenType: 'subscribe',
        label: 'idp viewers',
        flags: ['countries'],
        action: 'disable',
        windowSeconds: 3600,
        addresses: 3,
        networks: 3,
        asns: 3,
        countries: 3,
        countryCodes: ['DE', 'FR', 'US'],
        issuerId: iss.id,
        subject: 'alice',
        subjectClaim: 'sub',
      });
      // alice's sub is revoked at the issuer (by the system actor, audited): any JWT of hers is refused on both instances; bob plays on
      const stored = await store.getIssuer(acct.id, iss.id);
      assert.deepEqual(stored?.revoked.sub, ['alice']);
      for (const inst of [a, b]) {
        const r = await authorize(inst, await jwtFor('alice'), '198.51.0.1');
        assert.deepEqual([r.status, r.body.reason], [401, 'token_invalid'], JSON.stringify(r.body));
        assert.equal((await authorize(inst, await jwtFor('bob'), '198.51.9.1')).status, 200);
      }
      const entries = (await api(a).get('/api/audit?resource=issuer')).body.data.entries as Array<{ actor: string; resourceId: string; changes: Record<string, unknown> }>;
      assert.deepEqual(
        entries.filter((e) => e.actor === 'system').map((e) => e.resourceId),
        [String(iss.id)],
      );
      // the policy token itself is neither flagged nor disabled
      assert.equal((await store.getToken(acct.id, 'subscribe', iss.policyTokenId))?.isActive, true);
      // the subject's window, as the API answers it; bob's holds one address
      const w = await api(b).get(`/api/sharing/issuer/${iss.id}?subject=alice`);
      assert.equal(w.status, 200, JSON.stringify(w.body));
      assert.deepEqual([w.body.data.issuerId, w.body.data.subject, w.body.data.subjectClaim, w.body.data.addresses, w.body.data.flags], [iss.id, 'alice', 'sub', 3, ['countries']]);
      assert.equal((await api(a).get(`/api/sharing/issuer/${iss.id}?subject=bob&claim=sub`)).body.data.addresses, 1);
      assert.equal((await api(a).get(`/api/sharing/issuer/${iss.id}?subject=alice&claim=name`)).status, 400);
      assert.equal((await api(a).get('/api/sharing/issuer/999999?subject=alice')).status, 404);
    });

    it("an issuer's subject with limit: alice's earlier sessions end, bob's session on the same policy token plays on", async () => {
      await fresh();
      await api(a).put('/api/sharing/policy', { enabled: true, action: 'limit' });
      const iss = await issuer();
      const play = async (inst: TestApp, call: string, ip: string, clientid: string, jwt: string) =>
        request(inst.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=${ip}&clientid=${clientid}&call=${call}&name=cam1&type=live&token=${jwt}`);
      const alice = await jwtFor('alice');
      const bob = await jwtFor('bob');
      assert.equal((await play(b, 'play', '198.51.9.1', '200', bob)).status, 200);
      for (let i = 0; i < 3; i++) {
        assert.equal((await play(i % 2 === 0 ? a : b, 'play', `198.51.${i}.1`, String(100 + i), alice)).status, 200);
        now += 30_000;
      }
      await a.services.lifecycle.idle();
      await b.services.lifecycle.idle();
      await flush();
      const live = (await api(a).get(`/api/sessions?tokenId=${iss.policyTokenId}`)).body.data as { data: Array<{ clientIp: string }> };
      assert.deepEqual(live.data.map((s) => s.clientIp).sort(), ['198.51.2.1', '198.51.9.1'], "alice's newest device and bob play on");
      assert.equal((await play(b, 'update_play', '198.51.0.1', '100', alice)).status, 403, "alice's earlier device is cut at its re-ask");
      assert.equal((await play(a, 'update_play', '198.51.9.1', '200', bob)).status, 200);
      // the issuer revoked nothing
      assert.deepEqual((await store.getIssuer(acct.id, iss.id))?.revoked.sub, []);
    });

    it('not flagged: four devices on one /24 and a switch to a mobile network within an hour; one address with many sessions', async () => {
      await fresh();
      await api(a).put('/api/sharing/policy', { enabled: true });
      await api(a).post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: false, isTokenSharingHooks: true });
      const t = await subscribeToken();
      for (const d of [1, 2, 3, 4]) {
        assert.equal((await authorize(d % 2 ? a : b, t.token, `192.0.2.${d}`)).status, 200);
        now += 10 * 60_000;
      }
      assert.equal((await authorize(a, t.token, '100.64.7.9')).status, 200);
      const home = await subscribeToken({ label: 'household' });
      for (let i = 0; i < 30; i++) assert.equal((await authorize(i % 2 ? a : b, home.token, '192.0.2.200')).status, 200);
      await flush();
      assert.equal(rx.received.length, 0);
      assert.equal(await flagged(), 0);
      const w = (await api(a).get(`/api/sharing/subscribe_token/${t.id}`)).body.data;
      assert.deepEqual([w.addresses, w.networks, w.asns, w.countries, w.flags], [5, ['100.64.7.0/24', '192.0.2.0/24'], [3215, 20810], ['FR'], []]);
      assert.equal((await api(a).get(`/api/sharing/subscribe_token/${home.id}`)).body.data.addresses, 1);
    });

    it('the policy: defaults, replaced, validated with a 400 naming the field (nothing stored), overridden by a token, and off records nothing', async () => {
      await fresh();
      const defaults = { enabled: false, windowSeconds: 3600, maxAddresses: 0, maxNetworks: 6, maxAsns: 3, maxCountries: 2, travelKmh: 1000, travelMinKm: 500, action: 'notify' };
      assert.deepEqual((await api(a).get('/api/sharing/policy')).body.data, defaults);
      const bad = await api(a).put('/api/sharing/policy', { enabled: true, windowSeconds: 5, action: 'ban' });
      assert.equal(bad.status, 400);
      assert.deepEqual(Object.keys(bad.body.data.errors ?? bad.body.data.fields ?? {}).sort(), ['action', 'windowSeconds']);
      assert.deepEqual((await api(a).get('/api/sharing/policy')).body.data, defaults, 'nothing stored');
      assert.deepEqual((await api(a).put('/api/sharing/policy', { maxCountries: 4 })).body.data, { ...defaults, maxCountries: 4 });
      // off for the account: a token's own policy turns it on
      const off = await subscribeToken();
      const on = await subscribeToken({ sharing: { enabled: true, maxCountries: 1 } });
      assert.deepEqual(on.sharing, { enabled: true, maxCountries: 1 });
      await authorize(a, off.token, '198.51.1.1');
      await authorize(b, on.token, '198.51.1.1');
      await authorize(a, on.token, '198.51.2.1');
      await flush();
      assert.equal((await api(a).get(`/api/sharing/subscribe_token/${off.id}`)).body.data.addresses, 0);
      const w = (await api(a).get(`/api/sharing/subscribe_token/${on.id}`)).body.data;
      assert.deepEqual([w.addresses, w.flags, w.policy.maxCountries, w.policy.enabled], [2, ['countries'], 1, true]);
      // {} removes the override
      const cleared = await api(a).put(`/api/subscribe_token/${on.id}`, { sharing: {} });
      assert.equal(cleared.status, 200);
      assert.equal(cleared.body.data.sharing, undefined);
      assert.equal((await api(a).get(`/api/sharing/subscribe_token/${on.id}`)).body.data.policy.enabled, false);
      // another account's token is not there
      const other = await a.account('other');
      const foreign = await request(a.app).get(`/api/sharing/subscribe_token/${on.id}`).set('authorization', `Bearer ${other.secret}`);
      assert.equal(foreign.status, 404);
      assert.equal((await api(a).get('/api/sharing/publish_token/999999')).status, 404);
    });
  });
}
