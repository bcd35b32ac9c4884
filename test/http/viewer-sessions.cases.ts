// HTTP viewer sessions over auth_request, against every store backend
// (docs/callers.md#http-viewer-sessions): one full decision per viewer, then a signed credential
// checked in memory on every playlist and segment; refreshed while watched, ended when idle, cut
// like any session, following token disable / delete / refresh on this instance at once and on
// others within revalidateSeconds, counted by the token's limits once per viewer.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { counting } from '../helpers/counting-store.js';
import type { Store } from '../../src/store/store.js';
import { signSubscribeJwt } from '../../src/policy/self-signed.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { mintCredential, type ViewerClaims } from '../../src/sessions/viewer-credential.js';
import { CREDENTIAL_KEYS_META, CredentialKeys, keyFromSecret, parseCredentialKeys } from '../../src/sessions/credential-keys.js';
import { ViewerSessions } from '../../src/sessions/viewer-sessions.js';
import { ADMIN_KEY } from '../helpers/app.js';
import { hkdfSync } from 'node:crypto';
import { SESSION_ID } from '../helpers/sessions.js';

const IP_A = '203.0.113.7';
const IP_B = '203.0.113.8';
const COOKIE = 'streamgate_session';
const SECRET = 'viewer-credential-secret-0123456789abcdef';
/** An address in the United States (the geo table below); IP_A and IP_B are in France. */
const US_IP = '8.8.8.8';
const GEO = { [IP_A]: 'FR', [IP_B]: 'FR', [US_IP]: 'US' };
const HOOK_SECRET = 'hook-secret-viewer-suite-0123456789abcdef';

/** The claims of a credential, as anyone holding the cookie can read them (the body is not encrypted). */
const claimsOf = (credential: string): ViewerClaims => JSON.parse(Buffer.from(credential.split('.')[0], 'base64url').toString('utf8')) as ViewerClaims;

export function viewerSessionsSuite(factory: StoreFactory): void {
  describe(`HTTP viewer sessions: ${factory.name}`, () => {
    let clock = Date.parse('2026-11-26T12:00:00.000Z');
    const now = () => clock;
    let t: TestApp;
    let store: Store;
    let calls: string[];
    /** Set: every store call fails (the store is away). */
    let down = false;
    let acct: { id: string; secret: string };
    before(() => factory.setup());
    after(() => factory.teardown());

    const fresh = async (http: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
      clock = Date.parse('2026-11-26T12:00:00.000Z');
      down = false;
      const inner = await factory.make({ now });
      const switchable = new Proxy(inner, {
        get(target, prop, receiver) {
          const f = Reflect.get(target, prop, receiver);
          if (typeof f !== 'function' || prop === 'close' || prop === 'kind' || prop === 'inProcess') return f;
          // memory cannot vouch for a store that is away
          if (prop === 'accountVersionKnown') return (accountId: string) => (down ? undefined : (f as (a: string) => number | undefined).call(target, accountId));
          return (...args: unknown[]) => (down ? Promise.reject(new Error('store down')) : (f as (...a: unknown[]) => unknown).apply(target, args));
        },
      }) as Store;
      const c = counting(switchable);
      store = c.store;
      calls = c.calls;
      const hooks = { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'], ...(extra.hooks as object | undefined) };
      t = await testApp(store, { sessions: { http: { secret: SECRET, ...http } }, ...extra, hooks }, { now, geo: fixedGeo(GEO) });
      acct = await t.account();
    };
    const api = () => {
      const auth = { authorization: `Bearer ${acct.secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, b: object) => request(t.app).post(p).set(auth).send(b),
        put: (p: string, b: object) => request(t.app).put(p).set(auth).send(b),
        del: (p: string) => request(t.app).delete(p).set(auth),
      };
    };
    const mk = async (body: Record<string, unknown> = {}) => {
      const r = await api().post('/api/subscribe_token', { label: 'v', streams: [{ streamName: 'cam1' }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string };
    };
    /** One auth_request as nginx sends it: the original URI, the client address, the browser's cookie. */
    const ask = (uri: string, o: { cookie?: string; ip?: string; app?: TestApp; headers?: Record<string, string> } = {}) => {
      const r = request((o.app ?? t).app)
        .get('/hooks/auth-request')
        .set({ 'x-original-uri': uri, 'x-forwarded-for': o.ip ?? IP_A, ...o.headers });
      return o.cookie === undefined ? r : r.set('cookie', `other=1; ${COOKIE}=${o.cookie}`);
    };
    /** The credential a Set-Cookie carries. */
    const credentialOf = (r: { headers: Record<string, unknown> }): string | undefined => {
      const sc = r.headers['set-cookie'] as string[] | undefined;
      const m = sc?.map((c) => new RegExp(`^${COOKIE}=([^;]+)`).exec(c)).find(Boolean);
      return m?.[1];
    };
    const decisions = async (kind: 'full' | 'credential') => {
      const m = await t.services.metrics.registry.getSingleMetricAsString('streamgate_decisions_total');
      let n = 0;
      for (const line of m.split('\n')) if (line.includes('adapter="auth-request"') && line.includes(`kind="${kind}"`)) n += Number(line.split(' ').pop());
      return n;
    };
    const viewersLive = async () => {
      await t.services.lifecycle.idle();
      const r = await api().get('/api/sessions?direction=subscribe');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.data.data as Array<{ id: string; caller: string; callerSessionId: string; tokenId: number; clientIp: string }>).filter((s) => s.caller === 'auth-request');
    };
    const watch = async (token: string, o: { ip?: string } = {}) => {
      const first = await ask(`/hls/cam1/index.m3u8?token=${token}`, o);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const c = credentialOf(first);
      assert.ok(c, 'the allow carries a credential');
      return c;
    };

    it('one full decision per viewer: the allow sets the cookie, every later segment is a credential check that reads no store', async () => {
      await fresh();
      const v = await mk({ tracking: { trackingId: 'fans' } });
      const first = await ask(`/hls/cam1/index.m3u8?token=${v.token}`);
      assert.equal(first.status, 200);
      const sc = (first.headers['set-cookie'] as unknown as string[])[0];
      assert.match(sc, new RegExp(`^${COOKIE}=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+; Max-Age=60; Path=/; HttpOnly; SameSite=Lax$`));
      const cookie = credentialOf(first)!;
      const live = await viewersLive();
      assert.equal(live.length, 1);
      // registered under its own id, which Streamgate made as it makes registry ids
      assert.match(live[0].id, SESSION_ID);
      assert.equal(live[0].callerSessionId, live[0].id);
      calls.length = 0;
      for (let i = 0; i < 20; i++) {
        const r = await ask(`/hls/cam1/index-${i}.ts`, { cookie });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.deepEqual(
          [r.headers['x-streamgate-token-id'], r.headers['x-streamgate-tracking-id'], r.headers['x-streamgate-account-id'], r.headers['x-streamgate-stream'], r.headers['set-cookie']],
          [String(v.id), 'fans', acct.id, 'cam1', undefined],
        );
      }
      // the playlist reload still carries the token in its URL: the same viewer, the same session
      const reload = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { cookie });
      assert.equal(reload.status, 200);
      assert.deepEqual(calls, [], 'no store call for a credential check');
      assert.deepEqual([await decisions('full'), await decisions('credential')], [1, 21]);
      assert.equal((await viewersLive()).length, 1);
    });

    it('refreshes the credential past half its life, never past the token expiry; the registry is touched once per period', async () => {
      await fresh();
      const v = await mk({ expiresOn: new Date(clock + 100_000).toISOString() });
      const cookie = await watch(v.token);
      clock += 20_000;
      assert.equal(credentialOf(await ask('/hls/cam1/a.ts', { cookie })), undefined, 'not yet half way');
      await t.services.viewers!.revalidate();
      clock += 15_000;
      const r = await ask('/hls/cam1/b.ts', { cookie });
      const next = credentialOf(r);
      assert.ok(next && next !== cookie);
      assert.match((r.headers['set-cookie'] as unknown as string[])[0], /Max-Age=60;/);
      calls.length = 0;
      await t.services.viewers!.revalidate();
      assert.deepEqual(calls.filter((c) => c === 'touchSessions'), ['touchSessions']);
      await t.services.viewers!.revalidate();
      assert.deepEqual(calls.filter((c) => c === 'touchSessions'), ['touchSessions'], 'nothing presented since: no touch');
      const [s] = await viewersLive();
      assert.equal((await api().get(`/api/sessions/${s.id}`)).body.data.lastSeenAt, new Date(clock).toISOString());
      clock += 15_000;
      assert.equal((await ask('/hls/cam1/c.ts', { cookie: next })).status, 200);
      // 34 s before the token expires: the refreshed credential lives to the expiry, not 60 s
      clock += 16_000;
      const late = await ask('/hls/cam1/c.ts', { cookie: next });
      assert.match((late.headers['set-cookie'] as unknown as string[])[0], /Max-Age=34;/);
      clock += 35_000;
      const gone = await ask('/hls/cam1/d.ts', { cookie: credentialOf(late) });
      assert.deepEqual([gone.status, gone.body.reason], [401, 'credential_expired']);
    });

    it('follows disable, delete and refresh at once on this instance, on another within revalidateSeconds', async () => {
      await fresh();
      const other = await testApp(store, { sessions: { http: { secret: SECRET } }, hooks: { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'] } }, { now });
      const v = await mk();
      const cookie = await watch(v.token);
      const taken = await ask('/hls/cam1/1.ts', { cookie, app: other });
      assert.equal(taken.status, 200, `another instance takes the credential: ${JSON.stringify(taken.body)}`);
      assert.equal((await api().put(`/api/subscribe_token/${v.id}`, { isActive: false })).status, 200);
      const here = await ask('/hls/cam1/2.ts', { cookie });
      assert.deepEqual([here.status, here.body.reason], [401, 'token_disabled']);
      assert.equal((await ask('/hls/cam1/3.ts', { cookie, app: other })).status, 200, 'until it revalidates');
      await other.services.viewers!.revalidate();
      const there = await ask('/hls/cam1/4.ts', { cookie, app: other });
      assert.deepEqual([there.status, there.body.reason], [401, 'token_disabled']);

      const w = await mk();
      const plain = await ask(`/hls/cam1/index.m3u8?token=${w.token}`);
      assert.equal(plain.headers['x-streamgate-credential'], undefined, 'no bare credential without queryParam');
      const c2 = credentialOf(plain)!;
      assert.equal((await api().put(`/api/subscribe_token/${w.id}`, { refreshToken: true })).status, 200);
      assert.deepEqual((await ask('/hls/cam1/5.ts', { cookie: c2 })).body.reason, 'token_invalid');
      const x = await mk();
      const c3 = await watch(x.token);
      assert.equal((await api().del(`/api/subscribe_token/${x.id}`)).status, 200);
      assert.deepEqual((await ask('/hls/cam1/6.ts', { cookie: c3 })).body.reason, 'token_invalid');
      other.services.viewers?.stop();
    });

    it('serves only the granted stream: another stream, a dot segment or an encoded separator is decided without the credential', async () => {
      await fresh({ renditionSeparators: ['_'] });
      const v = await mk({ streams: [{ streamName: 'cam1' }, { streamName: 'premium' }] });
      const cookie = await watch(v.token);
      const other = await ask('/hls/premium/index.m3u8', { cookie });
      assert.deepEqual([other.status, other.body.reason], [401, 'token_required']);
      for (const uri of ['/hls/cam1/../premium/index.m3u8', '/hls/cam1%2F..%2Fpremium/index.m3u8', '/hls/cam1/%2e%2e/premium/x.ts']) {
        const r = await ask(uri, { cookie });
        assert.deepEqual([r.status, r.body.reason], [403, 'stream_not_allowed'], uri);
      }
      assert.equal((await ask('/hls/cam1_720p/index.m3u8', { cookie })).status, 200, 'a rendition, with renditionSeparators');
      assert.equal((await ask('/hls/cam1x/index.m3u8', { cookie })).body.reason, 'token_required');
    });

    it('refuses a tampered, expired or foreign-address credential with 401/403 naming it; with the token the viewer starts anew', async () => {
      await fresh({ bindAddress: 'always', idleSeconds: 600 });
      const v = await mk({ maxConcurrentSessions: 1 });
      const cookie = await watch(v.token);
      const flipped = cookie.slice(0, 5) + (cookie[5] === 'A' ? 'B' : 'A') + cookie.slice(6);
      for (const bad of [flipped, `${cookie}x`, 'garbage', `${cookie.split('.')[0]}.`]) {
        const r = await ask('/hls/cam1/1.ts', { cookie: bad });
        assert.deepEqual([r.status, r.body.reason], [401, 'credential_invalid'], bad);
      }
      const moved = await ask('/hls/cam1/1.ts', { cookie, ip: IP_B });
      assert.deepEqual([moved.status, moved.body.reason], [403, 'credential_address']);
      const refusals = await t.services.metrics.registry.getSingleMetricAsString('streamgate_viewer_credential_refusals_total');
      assert.match(refusals, /streamgate_viewer_credential_refusals_total\{reason="credential_invalid"\} 4/);
      assert.match(refusals, /streamgate_viewer_credential_refusals_total\{reason="credential_address"\} 1/);
      // the same viewer on its new address, with the token: the old session ends, the new one is counted
      const again = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { cookie, ip: IP_B });
      assert.equal(again.status, 200, JSON.stringify(again.body));
      const live = await viewersLive();
      assert.deepEqual(live.map((s) => s.clientIp), [IP_B]);
      clock += 61_000;
      const expired = await ask('/hls/cam1/2.ts', { cookie: credentialOf(again), ip: IP_B });
      assert.deepEqual([expired.status, expired.body.reason], [401, 'credential_expired']);
    });

    it('counts a viewer once against maxConcurrentSessions and maxUses, never per segment; an idle viewer ends and frees its place', async () => {
      await fresh({ idleSeconds: 30 });
      const v = await mk({ maxConcurrentSessions: 1, maxUses: 2 });
      const cookie = await watch(v.token);
      for (let i = 0; i < 5; i++) assert.equal((await ask(`/hls/cam1/${i}.ts`, { cookie })).status, 200);
      const second = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { ip: IP_B });
      assert.deepEqual([second.status, second.body.reason], [403, 'session_limit']);
      clock += 31_000;
      await t.services.viewers!.revalidate();
      const idle = await ask('/hls/cam1/9.ts', { cookie });
      assert.deepEqual([idle.status, idle.body.reason], [401, 'session_ended']);
      // the registry's record lapsed with the same idleSeconds: the place is free
      const third = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { ip: IP_B });
      assert.equal(third.status, 200, JSON.stringify(third.body));
      clock += 31_000;
      const fourth = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { ip: IP_A });
      assert.deepEqual([fourth.status, fourth.body.reason], [403, 'uses_exhausted']);
    });

    it("a self-signed JWT grants a credential like its parent, never living past the JWT's own exp", async () => {
      await fresh();
      const parent = await mk();
      const jwt = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 40, now: Math.floor(clock / 1000) });
      const first = await ask(`/hls/cam1/index.m3u8?token=${jwt}`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.match((first.headers['set-cookie'] as unknown as string[])[0], /Max-Age=40;/);
      const cookie = credentialOf(first)!;
      clock += 25_000;
      const r = await ask('/hls/cam1/1.ts', { cookie });
      assert.deepEqual([r.status, r.headers['x-streamgate-token-id'], credentialOf(r)], [200, String(parent.id), undefined], 'no refresh past the JWT exp');
      clock += 16_000;
      assert.deepEqual((await ask('/hls/cam1/2.ts', { cookie })).body.reason, 'credential_expired');
    });

    it('a client that sends the token on every request and no cookie is one viewer (token, address, stream), not a session per segment', async () => {
      await fresh();
      const v = await mk({ maxConcurrentSessions: 1 });
      for (let i = 0; i < 8; i++) {
        const r = await ask(`/hls/cam1/${i}.ts?token=${v.token}`);
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      assert.equal((await viewersLive()).length, 1);
      assert.deepEqual([await decisions('full'), await decisions('credential')], [8, 0], 'each a full decision: nothing to check without the cookie');
      const elsewhere = await ask(`/hls/cam1/1.ts?token=${v.token}`, { ip: IP_B });
      assert.deepEqual([elsewhere.status, elsewhere.body.reason], [403, 'session_limit'], 'another address is another viewer');
      const [s] = await viewersLive();
      assert.equal((await api().del(`/api/sessions/${s.id}`)).status, 200);
      const cut = await ask(`/hls/cam1/9.ts?token=${v.token}`);
      assert.deepEqual([cut.status, cut.body.reason], [403, 'session_terminated'], 'a cut viewer is held, not readmitted');
    });

    it('a cut viewer session (DELETE /api/sessions/{id}) is refused at once: session_terminated', async () => {
      await fresh();
      const v = await mk();
      const cookie = await watch(v.token);
      const [s] = await viewersLive();
      assert.equal((await api().del(`/api/sessions/${s.id}`)).status, 200);
      const r = await ask('/hls/cam1/1.ts', { cookie });
      assert.deepEqual([r.status, r.body.reason], [403, 'session_terminated']);
      assert.deepEqual(await viewersLive(), []);
    });

    it('with the store away, a viewer holding a credential is served while a new viewer is refused', async () => {
      await fresh();
      const v = await mk();
      const cookie = await watch(v.token);
      down = true;
      const app = t;
      const held = await ask('/hls/cam1/1.ts', { cookie, app });
      assert.equal(held.status, 200, JSON.stringify(held.body));
      await app.services.viewers!.revalidate();
      assert.equal((await ask('/hls/cam1/2.ts', { cookie, app })).status, 200);
      const fresher = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { app, ip: IP_B });
      assert.deepEqual([fresher.status, fresher.body.reason], [503, 'store_unavailable']);
      const tampered = await ask('/hls/cam1/3.ts', { cookie: `${cookie}x`, app });
      assert.deepEqual([tampered.status, tampered.body.reason], [401, 'credential_invalid'], 'never a 5xx for a bad credential');
    });

    it('a query-string credential only with sessions.http.queryParam; with viewer sessions off, limited tokens stay refused', async () => {
      await fresh({ queryParam: 'sgc' });
      const v = await mk();
      const granted = await ask(`/hls/cam1/index.m3u8?token=${v.token}`);
      const cookie = credentialOf(granted)!;
      assert.equal(granted.headers['x-streamgate-credential'], cookie, 'the bare credential for sub_filter');
      assert.equal((await ask(`/hls/cam1/1.ts?sgc=${cookie}`)).status, 200);
      await fresh();
      const w = await mk();
      const c2 = await watch(w.token);
      assert.equal((await ask(`/hls/cam1/1.ts?sgc=${c2}`)).body.reason, 'token_required');
      await fresh({ enabled: false });
      const limited = await mk({ maxConcurrentSessions: 2 });
      const r = await ask(`/hls/cam1/index.m3u8?token=${limited.token}`);
      assert.deepEqual([r.status, r.body.reason, r.headers['set-cookie']], [403, 'session_limit', undefined]);
      assert.match(r.body.message, /HTTP streaming/);
    });

    // ---- a credential never admits what the full decision would refuse on the same token ----

    it('a token with an address rule: its credential holds only from the address it was granted to, whatever bindAddress says', async () => {
      for (const bindAddress of ['limited', 'never'] as const) {
        await fresh({ bindAddress, queryParam: 'sgc' });
        const v = await mk({ allowedIpAddresses: [`${IP_A}/32`] });
        const full = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { ip: IP_B });
        assert.deepEqual([full.status, full.body.reason], [403, 'ip_not_allowed'], 'the full decision refuses IP_B');
        const cookie = await watch(v.token);
        assert.equal((await ask('/hls/cam1/1.ts', { cookie })).status, 200);
        const replayed = await ask('/hls/cam1/2.ts', { cookie, ip: IP_B });
        assert.deepEqual([replayed.status, replayed.body.reason], [403, 'credential_address'], `cookie replayed, bindAddress ${bindAddress}`);
        const query = await ask(`/hls/cam1/2.ts?sgc=${cookie}`, { ip: IP_B });
        assert.deepEqual([query.status, query.body.reason], [403, 'credential_address'], `query credential replayed, bindAddress ${bindAddress}`);
        // refreshed, it stays bound (presented within idleSeconds)
        clock += 20_000;
        assert.equal((await ask('/hls/cam1/2.ts', { cookie })).status, 200);
        clock += 15_000;
        const next = credentialOf(await ask('/hls/cam1/3.ts', { cookie }));
        assert.ok(next);
        assert.deepEqual((await ask('/hls/cam1/4.ts', { cookie: next, ip: IP_B })).body.reason, 'credential_address');
      }
    });

    it('a token with an origin rule: its credential holds only from the origin it was granted to, and follows the token\'s current list', async () => {
      await fresh({ queryParam: 'sgc' });
      const v = await mk({ allowedOrigins: ['*.example.com'] });
      const from = (origin?: string): Record<string, string> => (origin === undefined ? {} : { origin: `https://${origin}` });
      const evil = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { headers: from('evil.test') });
      assert.deepEqual([evil.status, evil.body.reason], [403, 'origin_not_allowed'], 'the full decision refuses evil.test');
      const first = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { headers: from('www.example.com') });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const cookie = credentialOf(first)!;
      assert.equal((await ask('/hls/cam1/1.ts', { cookie, headers: from('www.example.com') })).status, 200);
      for (const [origin, how] of [['evil.test', 'cookie'], [undefined, 'cookie'], ['tv.example.com', 'cookie'], ['evil.test', 'query']] as const) {
        const r = how === 'cookie' ? await ask('/hls/cam1/2.ts', { cookie, headers: from(origin) }) : await ask(`/hls/cam1/2.ts?sgc=${cookie}`, { headers: from(origin) });
        assert.deepEqual([r.status, r.body.reason], [403, 'origin_not_allowed'], `${how} from ${origin ?? 'no origin'}`);
      }
      // the token's list narrowed: the credential of an origin it no longer allows is refused at once
      assert.equal((await api().put(`/api/subscribe_token/${v.id}`, { updateAllowedOrigins: ['tv.example.com'] })).status, 200);
      const narrowed = await ask('/hls/cam1/3.ts', { cookie, headers: from('www.example.com') });
      assert.deepEqual([narrowed.status, narrowed.body.reason], [403, 'origin_not_allowed']);
    });

    it('a token with country lists, its own or inherited (a publish token, the account default): a cookie from France is refused from the US', async () => {
      await fresh({}, {});
      const own = await mk({ allowedCountries: ['FR'] });
      const full = await ask(`/hls/cam1/index.m3u8?token=${own.token}`, { ip: US_IP });
      assert.deepEqual([full.status, full.body.reason], [403, 'country_not_allowed'], 'the full decision refuses the US');
      const c1 = await watch(own.token);
      assert.deepEqual([(await ask('/hls/cam1/1.ts', { cookie: c1, ip: US_IP })).status, (await ask('/hls/cam1/1.ts', { cookie: c1, ip: US_IP })).body.reason], [403, 'credential_address']);
      assert.equal((await ask('/hls/cam1/1.ts', { cookie: c1 })).status, 200);

      // the account default
      await fresh();
      assert.equal((await api().post('/api/geo/account', { updateAllowedCountries: ['FR'] })).status, 200);
      const plain = await mk();
      assert.deepEqual((await ask(`/hls/cam1/index.m3u8?token=${plain.token}`, { ip: US_IP })).body.reason, 'country_not_allowed');
      const c2 = await watch(plain.token);
      const r2 = await ask('/hls/cam1/1.ts', { cookie: c2, ip: US_IP });
      assert.deepEqual([r2.status, r2.body.reason], [403, 'credential_address'], 'account default');

      // a publish token's lists for the stream
      await fresh();
      const pub = await api().post('/api/publish_token', { label: 'p', streams: [{ streamName: 'cam1' }], allowedCountries: ['FR'] });
      assert.equal(pub.status, 200, JSON.stringify(pub.body));
      const viewer = await mk();
      assert.deepEqual((await ask(`/hls/cam1/index.m3u8?token=${viewer.token}`, { ip: US_IP })).body.reason, 'country_not_allowed');
      const c3 = await watch(viewer.token);
      const r3 = await ask('/hls/cam1/1.ts', { cookie: c3, ip: US_IP });
      assert.deepEqual([r3.status, r3.body.reason], [403, 'credential_address'], "the publish token's lists");
    });

    it("a self-signed JWT's own allowedIpAddresses bind its credential", async () => {
      await fresh();
      const parent = await mk();
      const jwt = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 600, allowedIpAddresses: [`${IP_A}/32`], now: Math.floor(clock / 1000) });
      assert.deepEqual((await ask(`/hls/cam1/index.m3u8?token=${jwt}`, { ip: IP_B })).body.reason, 'ip_not_allowed');
      const cookie = await watch(jwt);
      const r = await ask('/hls/cam1/1.ts', { cookie, ip: IP_B });
      assert.deepEqual([r.status, r.body.reason], [403, 'credential_address']);
      assert.equal((await ask('/hls/cam1/1.ts', { cookie })).status, 200);
    });

    it("a token update that narrows its streams, addresses or countries refuses the credentials it granted at once here, within revalidateSeconds elsewhere", async () => {
      await fresh();
      const other = await testApp(store, { sessions: { http: { secret: SECRET } }, hooks: { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'] } }, { now, geo: fixedGeo(GEO) });
      const v = await mk({ streams: [{ streamName: 'cam1' }, { streamName: 'cam2' }] });
      const cookie = await watch(v.token);
      assert.equal((await ask('/hls/cam1/0.ts', { cookie, app: other })).status, 200);
      assert.equal((await api().put(`/api/subscribe_token/${v.id}`, { removeTokenStreams: ['cam1'] })).status, 200);
      const here = await ask('/hls/cam1/1.ts', { cookie });
      assert.deepEqual([here.status, here.body.reason], [403, 'stream_not_allowed'], 'a stream the token no longer covers');
      await other.services.viewers!.revalidate();
      const there = await ask('/hls/cam1/2.ts', { cookie, app: other });
      assert.deepEqual([there.status, there.body.reason], [403, 'stream_not_allowed'], 'on another instance after its round');
      other.services.viewers?.stop();

      const w = await mk({ allowedIpAddresses: [`${IP_A}/32`, `${IP_B}/32`] });
      const c2 = await watch(w.token);
      assert.equal((await api().put(`/api/subscribe_token/${w.id}`, { updateAllowedIpAddresses: [`${IP_B}/32`] })).status, 200);
      const ip = await ask('/hls/cam1/3.ts', { cookie: c2 });
      assert.deepEqual([ip.status, ip.body.reason], [403, 'ip_not_allowed']);

      const x = await mk({ allowedCountries: ['FR'] });
      const c3 = await watch(x.token);
      assert.equal((await api().put(`/api/subscribe_token/${x.id}`, { updateAllowedCountries: ['DE'] })).status, 200);
      const country = await ask('/hls/cam1/4.ts', { cookie: c3 });
      assert.deepEqual([country.status, country.body.reason], [403, 'country_not_allowed']);
      // with the token, the viewer is decided in full (and refused the same)
      assert.deepEqual((await ask(`/hls/cam1/index.m3u8?token=${x.token}`, { cookie: c3 })).body.reason, 'country_not_allowed');
    });

    it('a change of the country lists a credential inherited stops its refresh: it ends within one credential life', async () => {
      await fresh();
      assert.equal((await api().post('/api/geo/account', { updateAllowedCountries: ['FR'] })).status, 200);
      const v = await mk();
      const bound = await watch(v.token);
      const w = await mk({ streams: [{ streamName: 'cam1' }] });
      const stays = await watch(w.token);
      clock += 20_000;
      for (const cookie of [bound, stays]) assert.equal((await ask('/hls/cam1/0.ts', { cookie })).status, 200);
      // the same rules: refreshed as before
      clock += 15_000;
      const refreshed = await ask('/hls/cam1/1.ts', { cookie: stays });
      assert.ok(credentialOf(refreshed), 'refreshed while the lists are unchanged');
      assert.equal((await api().post('/api/geo/account', { updateAllowedCountries: ['DE'] })).status, 200);
      await t.services.viewers!.revalidate();
      const r = await ask('/hls/cam1/2.ts', { cookie: bound });
      assert.deepEqual([r.status, credentialOf(r)], [200, undefined], 'served, but not refreshed');
      clock += 20_000;
      assert.equal((await ask('/hls/cam1/3.ts', { cookie: bound })).status, 200);
      clock += 6_000;
      const gone = await ask('/hls/cam1/3.ts', { cookie: bound });
      assert.deepEqual([gone.status, gone.body.reason], [401, 'credential_expired']);
      const full = await ask(`/hls/cam1/index.m3u8?token=${v.token}`);
      assert.deepEqual([full.status, full.body.reason], [403, 'country_not_allowed'], 'the next full decision applies the new lists');

      // an account without country rules at the grant, given some later: the unbound credential is not refreshed either
      await fresh();
      const open = await mk();
      const c = await watch(open.token);
      assert.equal((await ask('/hls/cam1/1.ts', { cookie: c, ip: US_IP })).status, 200, 'no rule: not bound');
      assert.equal((await api().post('/api/geo/account', { updateAllowedCountries: ['FR'] })).status, 200);
      await t.services.viewers!.revalidate();
      clock += 20_000;
      assert.equal((await ask('/hls/cam1/1.ts', { cookie: c, ip: US_IP })).status, 200);
      clock += 15_000;
      const late = await ask('/hls/cam1/2.ts', { cookie: c, ip: US_IP });
      assert.deepEqual([late.status, credentialOf(late)], [200, undefined]);
    });

    // ---- renditions ----

    it('renditionSeparators: a credential opens only renditions whose suffix is a rendition and that no other token secures', async () => {
      await fresh({ renditionSeparators: ['_'], queryParam: 'sgc' });
      const pub = async (streams: Array<{ streamName: string; isRegex?: boolean }>) => {
        const r = await api().post('/api/publish_token', { label: 'p', streams, subscribeRequiresAuth: true });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body.data as { id: number };
      };
      await pub([{ streamName: 'cam1_secret' }, { streamName: 'cam1_720p' }]);
      const v = await mk();
      const cookie = await watch(v.token);
      const status = async (stream: string, how: 'cookie' | 'query' = 'cookie') => {
        const r = how === 'cookie' ? await ask(`/hls/${stream}/index.m3u8`, { cookie }) : await ask(`/hls/${stream}/index.m3u8?sgc=${cookie}`);
        return `${r.status} ${r.body.reason ?? ''}`.trim();
      };
      const FULL = '401 token_required'; // decided in full, without a token
      assert.deepEqual(
        [await status('cam1_secret'), await status('cam1_secret', 'query'), await status('cam1_720p'), await status('cam1_720p', 'query')],
        [FULL, FULL, FULL, FULL],
        'names another publish token secures',
      );
      assert.deepEqual([await status('cam1_1080p'), await status('cam1_low'), await status('cam1_src', 'query')], ['200', '200', '200'], 'renditions nothing else secures');
      assert.deepEqual([await status('cam1_mobile'), await status('cam1_720p_x'), await status('cam1_')], [FULL, FULL, FULL], 'a suffix that is no rendition');
      // the token securing cam1 secures its renditions too: that one is no obstacle
      await pub([{ streamName: 'cam1(_[0-9]{3,4}p)?', isRegex: true }]);
      assert.deepEqual([await status('cam1_480p'), await status('cam1_720p')], ['200', FULL], 'cam1_720p is still secured by a token that does not secure cam1');
      // a token created later takes the name at once (this instance)
      await pub([{ streamName: 'cam1_low' }]);
      assert.equal(await status('cam1_low'), FULL);
      // a securing token deleted: its stream stays secured, and stays closed to the credential
      const gone = await pub([{ streamName: 'cam1_high' }]);
      assert.equal((await api().del(`/api/publish_token/${gone.id}`)).status, 200);
      assert.equal(await status('cam1_high'), FULL);
      // one deleted that kept country lists alone (no subscribe token required) secures nothing
      const geo = (await api().post('/api/publish_token', { label: 'geo', streams: [{ streamName: 'cam1_mid' }], deniedCountries: ['FR'] })).body.data as { id: number };
      assert.equal((await api().del(`/api/publish_token/${geo.id}`)).status, 200);
      assert.equal(await status('cam1_mid'), '200');
      // secureViewer secures every name, cam1 included: alone, it blocks no rendition
      assert.equal((await request(t.app).put(`/admin/accounts/${acct.id}`).set('authorization', `Bearer ${ADMIN_KEY}`).send({ secureViewer: true })).status, 200);
      assert.equal(await status('cam1_360p'), '200');
    });

    // ---- the credential key and lifetime ----

    it('the key is never derived from hooks.secret: a cookie minted with it for any stream and any lifetime is refused', async () => {
      await fresh({ secret: '' }, { hooks: { secret: HOOK_SECRET } });
      const hook = { 'x-streamgate-hook-secret': HOOK_SECRET };
      const v = await mk();
      const first = await ask(`/hls/cam1/index.m3u8?token=${v.token}`, { headers: hook });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const claims = claimsOf(credentialOf(first)!);
      const nowS = Math.floor(clock / 1000);
      // what a holder of the hook secret could sign before: the key an HKDF of hooks.secret
      const hookKey = Buffer.from(hkdfSync('sha256', HOOK_SECRET, 'streamgate', 'viewer session credentials', 32));
      const forged = mintCredential(hookKey, { ...claims, n: 'premium', e: nowS + 10 * 365 * 86400, b: nowS });
      const r = await ask('/hls/premium/index.m3u8', { cookie: forged, headers: hook });
      assert.deepEqual([r.status, r.body.reason], [401, 'credential_invalid']);
      // the key Streamgate signs with is the one it keeps in the store
      const stored = parseCredentialKeys((await store.getMeta(CREDENTIAL_KEYS_META))!);
      const mine = mintCredential(Buffer.from(stored.current.key, 'base64url'), { ...claims, b: nowS, e: nowS + 60 });
      assert.equal((await ask('/hls/cam1/1.ts', { cookie: mine, headers: hook })).status, 200);
    });

    it("a check caps a credential's life and holds its stream to the token's: a signed credential claiming more is refused", async () => {
      await fresh();
      const key = keyFromSecret(SECRET);
      const v = await mk();
      const claims = claimsOf(await watch(v.token));
      const nowS = Math.floor(clock / 1000);
      const at = async (c: Partial<ViewerClaims>, stream = 'cam1') => {
        const r = await ask(`/hls/${stream}/1.ts`, { cookie: mintCredential(key, { ...claims, ...c }) });
        return `${r.status} ${r.body.reason ?? ''}`.trim();
      };
      assert.equal(await at({ b: nowS, e: nowS + 60 }), '200', 'within the cap (credentialSeconds 60 + 30)');
      assert.equal(await at({ b: nowS, e: nowS + 86400 }), '401 credential_invalid', 'a day ahead');
      assert.equal(await at({ b: nowS - 200, e: nowS + 30 }), '401 credential_invalid', 'issued longer ago than the cap');
      assert.equal(await at({ b: nowS + 3600, e: nowS + 3650 }), '401 credential_invalid', 'issued in the future');
      assert.equal(await at({ b: nowS, e: nowS + 60, n: 'premium' }, 'premium'), '403 stream_not_allowed', "a stream the token does not cover, even signed");
      await fresh({ maxCredentialSeconds: 600 });
      const w = await mk();
      const c2 = claimsOf(await watch(w.token));
      const r = await ask('/hls/cam1/1.ts', { cookie: mintCredential(key, { ...c2, b: nowS, e: nowS + 500 }) });
      assert.equal(r.status, 200, 'sessions.http.maxCredentialSeconds sets the cap');
    });

    it('a key rotation: the previous key is accepted for one credential life after every instance has it; another instance picks the new key up at once', async () => {
      // idleSeconds past the previous key's time: what ends below is the key, not the viewer
      await fresh({ secret: '', idleSeconds: 600 });
      const other = await testApp(store, { sessions: { http: { idleSeconds: 600 } }, hooks: { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'] } }, { now, geo: fixedGeo(GEO) });
      const v = await mk();
      const cookie = await watch(v.token);
      assert.equal((await ask('/hls/cam1/0.ts', { cookie, app: other })).status, 200, 'one key for every instance on the store');
      const rotated = await CredentialKeys.rotate(store, now);
      await t.services.viewers!.revalidate();
      assert.equal((await ask('/hls/cam1/1.ts', { cookie })).status, 200, 'the previous key, just after the rotation');
      clock += 20_000;
      assert.equal((await ask('/hls/cam1/1.ts', { cookie })).status, 200);
      assert.equal((await ask('/hls/cam1/1.ts', { cookie, app: other })).status, 200);
      clock += 15_000;
      const next = credentialOf(await ask('/hls/cam1/2.ts', { cookie }));
      assert.ok(next, 'refreshed with the new key');
      assert.equal((await ask('/hls/cam1/3.ts', { cookie: next, app: other })).status, 200, 'the other instance reads the new key when a credential matches none it has');
      const stored = parseCredentialKeys((await store.getMeta(CREDENTIAL_KEYS_META))!);
      assert.deepEqual([stored.current.id, stored.previous?.id], [rotated.id, rotated.previousId]);
      const claims = claimsOf(next);
      clock += ViewerSessions.previousKeyMs(t.services.config.sessions.http);
      const nowS = Math.floor(clock / 1000);
      const fresh2 = { ...claims, b: nowS, e: nowS + 60 };
      const withOld = await ask('/hls/cam1/4.ts', { cookie: mintCredential(Buffer.from(stored.previous!.key, 'base64url'), fresh2) });
      assert.deepEqual([withOld.status, withOld.body.reason], [401, 'credential_invalid'], 'the previous key past its time');
      const withNew = await ask('/hls/cam1/5.ts', { cookie: mintCredential(Buffer.from(stored.current.key, 'base64url'), fresh2) });
      assert.equal(withNew.status, 200);
      other.services.viewers?.stop();
    });
  });
}
