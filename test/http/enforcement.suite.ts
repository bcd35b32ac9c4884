// Enforcement over HTTP (/hooks/authorize, the check endpoint, the director, JWKS), run against
// every store backend. The clock is injected so expiry is tested without waiting.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { SignJWT, createRemoteJWKSet, jwtVerify, decodeProtectedHeader, base64url } from 'jose';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import { idChecked } from '../helpers/decision-id.js';

const T0 = Date.parse('2026-06-01T12:00:00Z');

export function enforcementSuite(factory: StoreFactory): void {
  describe(`enforcement over HTTP: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    let clock = T0;
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });
    const fresh = async (overrides: Record<string, unknown> = {}) => {
      clock = T0;
      t = await testApp(await factory.make({ now: () => clock }), overrides, {
        now: () => clock,
        geo: fixedGeo({ '81.2.69.142': 'GB', '8.8.8.8': 'US', '203.0.113.7': 'FR' }),
      });
      acct = await t.account();
    };
    const api = () => {
      const auth = { authorization: `Bearer ${acct.secret}` };
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
    const authorize = (body: Record<string, unknown>) => request(t.app).post('/hooks/authorize').send(body);

    describe('/hooks/authorize: each reason of the table', () => {
      before(() => fresh());

      it('admits a valid publish token with 200 and the decision', async () => {
        const p = await mk('publish', { record: true });
        const r = await authorize({ action: 'publish', token: p.token, streamName: 'cam1', clientIp: '10.0.0.1', protocol: 'rtmp' });
        assert.equal(r.status, 200);
        assert.match(r.body.decisionId, /^[0-9a-f-]{36}$/);
        assert.deepEqual(r.body, {
          allowed: true,
          status: 200,
          reason: 'allowed',
          message: 'Allowed',
          streamName: 'cam1',
          accountId: acct.id,
          tokenId: p.id,
          record: true,
          subscribeRequiresAuth: false,
          decisionId: r.body.decisionId,
        });
      });

      it('refuses with the status, reason and message of each check', async () => {
        const sub = await mk('subscribe', { tracking: { trackingId: 'trk' } });
        const expiring = await mk('subscribe', { expires: 10 });
        const disabled = await mk('subscribe');
        await api().put(`/api/subscribe_token/${disabled.id}`, { isActive: false });
        const origins = await mk('subscribe', { allowedOrigins: ['*.example.com'] });
        const ips = await mk('subscribe', { allowedIpAddresses: ['10.1.2.0/24'] });
        const countries = await mk('subscribe', { allowedCountries: ['GB'] });
        clock = T0 + 10_000;
        const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
          ['no token to publish', { action: 'publish', streamName: 'cam1' }, 401, 'token_required', 'Unauthorized: Token required'],
          ['unknown token', { action: 'subscribe', token: 'f'.repeat(64), streamName: 'cam1' }, 401, 'token_invalid', 'Unauthorized: Invalid token'],
          ['wrong kind', { action: 'publish', token: sub.token, streamName: 'cam1' }, 401, 'token_invalid', 'Unauthorized: Invalid token'],
          ['disabled', { action: 'subscribe', token: disabled.token, streamName: 'cam1' }, 401, 'token_disabled', 'Unauthorized: Token disabled'],
          ['expired', { action: 'subscribe', token: expiring.token, streamName: 'cam1' }, 401, 'token_expired', 'Unauthorized: Token expired'],
          ['stream', { action: 'subscribe', token: sub.token, streamName: 'cam2' }, 403, 'stream_not_allowed', 'Unauthorized: Stream name not allowed'],
          ['origin', { action: 'subscribe', token: origins.token, streamName: 'cam1', origin: 'https://example.com' }, 403, 'origin_not_allowed', 'Unauthorized: Origin not allowed'],
          ['ip', { action: 'subscribe', token: ips.token, streamName: 'cam1', clientIp: '::ffff:10.1.3.1' }, 403, 'ip_not_allowed', 'Unauthorized: IP Address not allowed'],
          ['country', { action: 'subscribe', token: countries.token, streamName: 'cam1', clientIp: '8.8.8.8' }, 403, 'country_not_allowed', 'Unauthorized: Country not allowed'],
        ];
        for (const [name, body, status, reason, message] of cases) {
          const r = await authorize(body);
          assert.equal(r.status, status, name);
          assert.deepEqual({ ...r.body, decisionId: undefined }, { allowed: false, reason, message, decisionId: undefined }, name);
        }
        const ok: Array<Record<string, unknown>> = [
          { action: 'subscribe', token: sub.token, streamName: 'cam1' },
          { action: 'subscribe', token: origins.token, streamName: 'cam1', origin: 'https://a.b.example.com/page' },
          { action: 'subscribe', token: ips.token, streamName: 'cam1', clientIp: '::ffff:10.1.2.3' },
          { action: 'subscribe', token: countries.token, streamName: 'cam1', clientIp: '81.2.69.142' },
          { action: 'subscribe', token: countries.token, streamName: 'cam1', clientIp: '8.8.8.8', country: 'gb' },
        ];
        for (const body of ok) assert.equal((await authorize(body)).status, 200, JSON.stringify(body));
        const tracked = await authorize({ action: 'subscribe', token: sub.token, streamName: 'cam1' });
        assert.equal(tracked.body.trackingId, 'trk');
      });

      it('counts decisions in /metrics with bounded labels and never a token value', async () => {
        const m = await request(t.app).get('/metrics');
        assert.equal(m.status, 200);
        assert.match(m.text, /streamgate_decisions_total\{action="subscribe",adapter="authorize",result="deny",reason="origin_not_allowed",kind="full"\} 1/);
        assert.match(m.text, /streamgate_decisions_total\{action="publish",adapter="authorize",result="allow",reason="allowed",kind="full"\} 1/);
        assert.ok(!m.text.includes(acct.id), 'no account id in labels');
        assert.ok(!/[0-9a-f]{64}/.test(m.text), 'no token value');
      });
    });

    describe('bind on usage', () => {
      // Atomicity, not latency, is under test: a loaded CI machine must not turn slow answers into 503s.
      before(() => fresh({ enforcement: { storeTimeoutMs: 5000 } }));

      it('binds exactly 3 of 40 addresses under 200 concurrent first uses; later uses follow the binding', async () => {
        const s = await mk('subscribe', { bindIpsOnUsage: 3 });
        const ips = Array.from({ length: 40 }, (_, i) => `198.51.100.${i + 1}`);
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) => authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: ips[i % 40] })),
        );
        assert.equal(results.filter((r) => ![200, 403].includes(r.status)).length, 0);
        assert.equal(results.filter((r) => r.status === 200).length, 15, 'each of the 3 bound addresses asked 5 times');
        const rec = (await api().get(`/api/subscribe_token/${s.id}`)).body.data;
        assert.equal(rec.boundIpAddresses.length, 3);
        for (const ip of ips) {
          const r = await authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: ip });
          if (rec.boundIpAddresses.includes(ip)) assert.equal(r.status, 200, ip);
          else assert.deepEqual([r.status, r.body.message], [403, 'Unauthorized: IP Address not allowed'], ip);
        }
        // every concurrent answer agrees with the final binding
        for (const [i, r] of results.entries()) assert.equal(r.status === 200, rec.boundIpAddresses.includes(ips[i % 40]), `request ${i}`);
      });

      it('binds nothing for a request that fails an earlier check, and nothing through the check endpoint', async () => {
        const s = await mk('subscribe', { bindIpsOnUsage: 1, allowedOrigins: ['a.com'] });
        const bad = await authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: '198.51.100.9', origin: 'b.com' });
        assert.equal(bad.body.reason, 'origin_not_allowed');
        const wrongStream = await authorize({ action: 'subscribe', token: s.token, streamName: 'nope', clientIp: '198.51.100.9', origin: 'a.com' });
        assert.equal(wrongStream.body.reason, 'stream_not_allowed');
        const check = await api().post(`/api/subscribe_token/${s.id}/check`, { streamName: 'cam1', clientIp: '198.51.100.9', origin: 'a.com' });
        assert.equal(check.body.data.allowed, true);
        assert.deepEqual(check.body.data.rules.at(-1), {
          rule: 'bind on usage',
          reason: 'ip_not_allowed',
          result: 'pass',
          detail: 'would bind 198.51.100.9 (0 of 1 bound)',
        });
        assert.deepEqual((await api().get(`/api/subscribe_token/${s.id}`)).body.data.boundIpAddresses, []);
        const first = await authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: '198.51.100.10', origin: 'a.com' });
        assert.equal(first.status, 200);
        assert.deepEqual((await api().get(`/api/subscribe_token/${s.id}`)).body.data.boundIpAddresses, ['198.51.100.10']);
        const second = await api().post(`/api/subscribe_token/${s.id}/check`, { streamName: 'cam1', clientIp: '198.51.100.9', origin: 'a.com' });
        assert.deepEqual([second.body.data.allowed, second.body.data.reason, second.body.data.message], [false, 'ip_not_allowed', 'Unauthorized: IP Address not allowed']);
      });

      it('forgets bound addresses when bindIpsOnUsage is given again or the token is refreshed', async () => {
        const s = await mk('subscribe', { bindIpsOnUsage: 1 });
        assert.equal((await authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: '192.0.2.1' })).status, 200);
        assert.equal((await authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: '192.0.2.2' })).status, 403);
        await api().put(`/api/subscribe_token/${s.id}`, { updateBindIpsOnUsage: 1 });
        assert.equal((await authorize({ action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: '192.0.2.2' })).status, 200);
        const r = await api().put(`/api/subscribe_token/${s.id}`, { refreshToken: true });
        assert.deepEqual(r.body.data.boundIpAddresses, []);
        assert.equal((await authorize({ action: 'subscribe', token: r.body.data.token, streamName: 'cam1', clientIp: '192.0.2.3' })).status, 200);
      });
    });

    describe('secured streams and revocation', () => {
      before(() => fresh({ enforcement: { defaultAccountId: '' } }));

      it('lets viewers without a token into open streams only', async () => {
        const open = await authorize({ action: 'subscribe', streamName: 'cam1', accountId: acct.id });
        assert.equal(open.status, 200);
        assert.equal(open.body.tokenId, undefined);
        const noAccount = await authorize({ action: 'subscribe', streamName: 'cam1' });
        assert.deepEqual([noAccount.status, noAccount.body.reason], [401, 'token_required']);
        const p = await mk('publish', { streams: [{ streamName: 'cam.*', isRegex: true }], subscribeRequiresAuth: true });
        const secured = await authorize({ action: 'subscribe', streamName: 'cam1', accountId: acct.id });
        assert.deepEqual([secured.status, secured.body.reason], [401, 'token_required']);
        assert.equal((await authorize({ action: 'subscribe', streamName: 'other', accountId: acct.id })).status, 200);
        // disabling the securing token never opens its streams; turning subscribeRequiresAuth off does
        await api().put(`/api/publish_token/${p.id}`, { isActive: false });
        assert.equal((await authorize({ action: 'subscribe', streamName: 'cam1', accountId: acct.id })).status, 401);
        await api().put(`/api/publish_token/${p.id}`, { subscribeRequiresAuth: false });
        assert.equal((await authorize({ action: 'subscribe', streamName: 'cam1', accountId: acct.id })).status, 200);
        await request(t.app).put(`/admin/accounts/${acct.id}`).set('authorization', 'Bearer test-admin-key-0123456789abcdefghij').send({ secureViewer: true });
        assert.equal((await authorize({ action: 'subscribe', streamName: 'other', accountId: acct.id })).status, 401);
        const sub = await mk('subscribe');
        assert.equal((await authorize({ action: 'subscribe', streamName: 'cam1', token: sub.token })).status, 200);
      });

      it('denies at the next decision after disable, refresh and delete', async () => {
        const s = await mk('subscribe');
        const ask = (token: string) => authorize({ action: 'subscribe', token, streamName: 'cam1' });
        assert.equal((await ask(s.token)).status, 200);
        await api().put(`/api/subscribe_token/${s.id}`, { isActive: false });
        assert.equal((await ask(s.token)).body.reason, 'token_disabled');
        await api().put(`/api/subscribe_token/${s.id}`, { isActive: true });
        assert.equal((await ask(s.token)).status, 200);
        const next = (await api().put(`/api/subscribe_token/${s.id}`, { refreshToken: true })).body.data.token as string;
        assert.equal((await ask(s.token)).body.reason, 'token_invalid');
        assert.equal((await ask(next)).status, 200);
        await api().del(`/api/subscribe_token/${s.id}`);
        assert.equal((await ask(next)).body.reason, 'token_invalid');
      });
    });

    describe('check endpoint', () => {
      before(() => fresh());

      it('explains which rule fails, and is account-scoped', async () => {
        const s = await mk('subscribe', { allowedOrigins: ['*.example.com'] });
        const r = await api().post(`/api/subscribe_token/${s.id}/check`, { streamName: 'cam1', origin: 'https://evil.com' });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body.data, {
          allowed: false,
          status: 403,
          reason: 'origin_not_allowed',
          message: 'Unauthorized: Origin not allowed',
          rules: [
            { rule: 'token present', reason: 'token_required', result: 'pass' },
            { rule: 'token valid', reason: 'token_invalid', result: 'pass' },
            { rule: 'token active', reason: 'token_disabled', result: 'pass' },
            { rule: 'not expired', reason: 'token_expired', result: 'pass', detail: 'never expires' },
            { rule: 'no session cut', reason: 'session_terminated', result: 'pass' },
            { rule: 'stream name allowed', reason: 'stream_not_allowed', result: 'pass' },
            { rule: 'origin allowed', reason: 'origin_not_allowed', result: 'fail', detail: "origin 'evil.com' is not allowed" },
            { rule: 'IP address allowed', reason: 'ip_not_allowed', result: 'skipped', detail: 'an earlier check failed' },
            { rule: 'country allowed', reason: 'country_not_allowed', result: 'skipped', detail: 'an earlier check failed' },
            { rule: 'session limits', reason: 'session_limit', result: 'skipped', detail: 'an earlier check failed' },
            { rule: 'bind on usage', reason: 'ip_not_allowed', result: 'skipped', detail: 'an earlier check failed' },
          ],
        });
        const other = await t.account('other');
        const theirs = await request(t.app).post(`/api/subscribe_token/${s.id}/check`).set('authorization', `Bearer ${other.secret}`).send({ streamName: 'cam1' });
        assert.equal(theirs.status, 404);
        const bad = await api().post(`/api/subscribe_token/${s.id}/check`, { clientIp: 'nope' });
        assert.equal(bad.status, 400);
        assert.deepEqual(Object.keys(bad.body.data.errors).sort(), ['clientIp', 'streamName']);
      });
    });

    describe('hook secret', () => {
      before(() => fresh({ hooks: { secret: 'hook-s3cret-0123456789abcdefghijklmn', trustedProxies: [], omeSecret: '', mediamtx: { allowApiFrom: [] } } }));

      it('answers 401 without the secret and binds nothing; accepts the header or the query parameter', async () => {
        const s = await mk('subscribe', { bindIpsOnUsage: 1 });
        const body = { action: 'subscribe', token: s.token, streamName: 'cam1', clientIp: '192.0.2.50' };
        const none = await authorize(body);
        assert.equal(none.status, 401);
        assert.deepEqual(none.body, { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' });
        assert.equal((await request(t.app).post('/hooks/authorize').set('x-streamgate-hook-secret', 'wrong').send(body)).status, 401);
        assert.deepEqual((await api().get(`/api/subscribe_token/${s.id}`)).body.data.boundIpAddresses, []);
        assert.equal((await request(t.app).post('/hooks/authorize').set('x-streamgate-hook-secret', 'hook-s3cret-0123456789abcdefghijklmn').send(body)).status, 200);
        assert.equal((await request(t.app).post('/hooks/authorize?secret=hook-s3cret-0123456789abcdefghijklmn').send(body)).status, 200);
      });
    });

    describe('bad input never gets a 5xx', () => {
      before(() => fresh());

      it('answers 400 naming the problem on /hooks/authorize', async () => {
        const cases: Array<[unknown, string[]]> = [
          [{}, ['action', 'streamName']],
          [{ action: 'view', streamName: 'x' }, ['action']],
          [{ action: 'subscribe', streamName: 'x'.repeat(10 * 1024) }, ['streamName']],
          [{ action: 'subscribe', streamName: 5, token: 7 }, ['streamName', 'token']],
          [{ action: 'subscribe', streamName: 'x', clientIp: 'not-an-ip' }, ['clientIp']],
          [{ action: 'subscribe', streamName: 'x', extra: 1 }, ['extra']],
          [[1, 2], ['body']],
        ];
        for (const [body, fields] of cases) {
          const r = await request(t.app).post('/hooks/authorize').send(body as object);
          assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
          assert.deepEqual([r.body.allowed, r.body.reason], [false, 'bad_request']);
          assert.deepEqual(Object.keys(r.body.errors).sort(), fields);
        }
        const malformed = await request(t.app).post('/hooks/authorize').set('content-type', 'application/json').send('{"action":');
        assert.equal(malformed.status, 400);
      });

      it('answers 401 for garbage tokens and malformed JWTs', async () => {
        const garbage = [
          'x',
          'f'.repeat(8000),
          'eyJhbGciOiJIUzI1NiJ9.e30.',
          'eyJ!!!.bad.jwt',
          `eyJhbGciOiJIUzI1NiJ9.${base64url.encode('{"streaming":{"tokenId":"1"}}')}.sig`,
          `eyJhbGciOiJIUzI1NiJ9.${base64url.encode('not json')}.sig`,
          `eyJ${'A'.repeat(8000)}.a.b`,
          '\u0000\u00ff',
        ];
        for (const token of garbage) {
          const r = await authorize({ action: 'subscribe', token, streamName: 'cam1' });
          assert.deepEqual([r.status, r.body.reason], [401, 'token_invalid'], token.slice(0, 40));
        }
        const huge = await authorize({ action: 'subscribe', token: 'A'.repeat(9000), streamName: 'cam1' });
        assert.deepEqual([huge.status, Object.keys(huge.body.errors)], [400, ['token']]);
      });
    });

    describe('director API', () => {
      let server: Server;
      let base: string;
      before(async () => {
        await fresh({
          hooks: { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: '', mediamtx: { allowApiFrom: [] } },
          director: {
            publishUrls: ['wss://media.example/pub/{accountId}/{streamName}'],
            subscribeUrls: ['wss://media.example/sub/{accountId}/{streamName}'],
            iceServers: [{ urls: 'stun:stun.example.com:3478' }],
            jwtTtlSeconds: 60,
            mediamtxPathPrefix: 'live/',
          },
        });
        server = t.app.listen(0, '127.0.0.1');
        await new Promise((r) => server.once('listening', r));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      });
      after(() => new Promise<void>((r) => server.close(() => r())));
      const director = (action: 'publish' | 'subscribe', token: string | undefined, body: object, headers: Record<string, string> = {}) => {
        const r = request(t.app).post(`/api/director/${action}`).set(headers);
        return (token ? r.set('authorization', `Bearer ${token}`) : r).send(body);
      };

      it('publish: urls, an ES256 JWT that verifies against the JWKS, ice servers, account', async () => {
        clock = Date.now(); // the JWKS client checks exp against the real clock
        const p = await mk('publish', { record: true, subscribeRequiresAuth: true });
        const r = await director('publish', p.token, { streamName: 'cam1', streamType: 'WebRtc' });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.deepEqual({ ...r.body.data, jwt: undefined }, {
          urls: [`wss://media.example/pub/${acct.id}/cam1`],
          jwt: undefined,
          iceServers: [{ urls: ['stun:stun.example.com:3478'] }], // configured as a string, answered as the hosted list
          streamAccountId: acct.id,
          subscribeRequiresAuth: true,
        });
        const jwks = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`));
        const { payload, protectedHeader } = await jwtVerify(r.body.data.jwt, jwks, { algorithms: ['ES256'] });
        assert.equal(protectedHeader.alg, 'ES256');
        assert.equal(protectedHeader.kid, t.services.keys.kid);
        assert.equal(payload.sub, `${acct.id}/cam1`);
        assert.deepEqual(payload.streaming, { tokenId: p.id, tokenType: 'Publish', accountId: acct.id, streamName: 'cam1', record: true });
        assert.deepEqual(payload.mediamtx_permissions, [{ action: 'publish', path: 'live/cam1' }]);
        assert.equal(payload.exp! - payload.iat!, 60);
      });

      it('subscribe: open streams without a token; tracking id in the JWT; denials in the fail envelope', async () => {
        clock = Date.now();
        const open = await director('subscribe', undefined, { streamName: 'cam9', streamAccountId: acct.id });
        assert.equal(open.status, 200, JSON.stringify(open.body));
        assert.deepEqual(open.body.data.urls, [`wss://media.example/sub/${acct.id}/cam9`]);
        const s = await mk('subscribe', { tracking: { trackingId: 'fans' }, allowedOrigins: ['*.example.com'] });
        const ok = await director('subscribe', s.token, { streamName: 'cam1' }, { origin: 'https://www.example.com' });
        assert.equal(ok.status, 200);
        const claims = JSON.parse(Buffer.from(ok.body.data.jwt.split('.')[1], 'base64url').toString());
        assert.deepEqual(claims.streaming, { tokenId: s.id, tokenType: 'Subscribe', accountId: acct.id, streamName: 'cam1', trackingId: 'fans' });
        assert.deepEqual(claims.mediamtx_permissions, [{ action: 'read', path: 'live/cam1' }]);
        const denied = await director('subscribe', s.token, { streamName: 'cam1' }, { origin: 'https://evil.com' });
        assert.equal(denied.status, 403);
        assert.deepEqual(idChecked(denied.body), { status: 'fail', data: { message: 'Unauthorized: Origin not allowed', reason: 'origin_not_allowed' } });
        const noToken = await director('publish', undefined, { streamName: 'cam1' });
        assert.deepEqual([noToken.status, noToken.body.data.reason], [401, 'token_required']);
      });

      it('an empty streamAccountId is the same as none', async () => {
        clock = Date.now();
        const p = await mk('publish', {});
        for (const body of [{ streamName: 'cam1' }, { streamName: 'cam1', streamAccountId: '' }, { streamName: 'cam1', streamAccountId: null }]) {
          const r = await director('publish', p.token, body);
          assert.deepEqual([r.status, r.body.data.streamAccountId], [200, acct.id], JSON.stringify(body));
        }
      });

      it('answers CORS preflight and reflects the Origin', async () => {
        const pre = await request(t.app).options('/api/director/subscribe').set('origin', 'https://app.customer.com').set('access-control-request-method', 'POST');
        assert.equal(pre.status, 204);
        assert.equal(pre.headers['access-control-allow-origin'], 'https://app.customer.com');
        assert.equal(pre.headers['access-control-allow-headers'], 'authorization, content-type');
        assert.equal(pre.headers['access-control-allow-methods'], 'POST, OPTIONS');
        assert.equal(pre.headers['access-control-allow-credentials'], undefined);
        const post = await director('subscribe', undefined, { streamName: 'x', streamAccountId: acct.id }, { origin: 'https://app.customer.com' });
        assert.equal(post.headers['access-control-allow-origin'], 'https://app.customer.com');
      });

      it('believes X-Forwarded-For only from a trusted proxy', async () => {
        const s = await mk('subscribe', { allowedIpAddresses: ['203.0.113.7'] });
        const viaProxy = await director('subscribe', s.token, { streamName: 'cam1' }, { 'x-forwarded-for': '203.0.113.7' });
        assert.equal(viaProxy.status, 200, 'the test peer 127.0.0.1 is a trusted proxy here');
        const spoofChain = await director('subscribe', s.token, { streamName: 'cam1' }, { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' });
        assert.equal(spoofChain.status, 403, 'the right-most untrusted hop is the client');
        const untrusted = await testApp(t.services.store, {}, { now: () => clock });
        const direct = await request(untrusted.app).post('/api/director/subscribe').set('authorization', `Bearer ${s.token}`).set('x-forwarded-for', '203.0.113.7').send({ streamName: 'cam1' });
        assert.deepEqual([direct.status, direct.body.data.reason], [403, 'ip_not_allowed']);
      });

      it('answers 4xx for bad bodies, huge names and garbage bearers', async () => {
        const s = await mk('subscribe');
        for (const body of [{}, { streamName: '' }, { streamName: 'x'.repeat(10 * 1024) }, { streamName: 5 }, { streamName: 'a', streamType: 'Carrier pigeon' }]) {
          const r = await director('publish', s.token, body);
          assert.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
          assert.equal(r.body.data.message, 'Validation errors');
        }
        for (const bearer of ['garbage', 'eyJ.x.y', 'eyJhbGciOiJub25lIn0.e30.', 'f'.repeat(64)]) {
          const r = await director('subscribe', bearer, { streamName: 'cam1' });
          assert.deepEqual([r.status, r.body.data.reason], [401, 'token_invalid'], bearer);
        }
      });

      describe('self-signed subscribe JWTs', () => {
        const sign = (parent: { id: number; token: string }, streaming: Record<string, unknown> = {}, exp = Math.floor(Date.now() / 1000) + 600, alg = 'HS256') =>
          new SignJWT({
            streaming: { tokenId: parent.id, tokenType: 'Subscribe', streamName: 'cam1', allowedOrigins: [], allowedIpAddresses: [], ...streaming },
          })
            .setProtectedHeader({ alg, typ: 'JWT' })
            .setIssuedAt()
            .setExpirationTime(exp)
            .sign(new TextEncoder().encode(parent.token));

        it('admits a JWT signed the documented way (HS256/384/512, key = the token string)', async () => {
          clock = Date.now();
          const parent = await mk('subscribe', { streams: [{ streamName: 'cam.*', isRegex: true }] });
          for (const alg of ['HS256', 'HS384', 'HS512']) {
            const jwt = await sign(parent, { customViewerData: 'user=1' }, undefined, alg);
            const r = await director('subscribe', jwt, { streamName: 'cam1' });
            assert.equal(r.status, 200, `${alg}: ${JSON.stringify(r.body)}`);
          }
        });

        it('refuses tampering, alg none, alg confusion, expiry, foreign names, tracking mismatch and a refreshed parent', async () => {
          clock = Date.now();
          const parent = await mk('subscribe', { streams: [{ streamName: 'cam.*', isRegex: true }] });
          const tracked = await mk('subscribe', { tracking: { trackingId: 'grp' } });
          const good = await sign(parent);
          const [h, p, sig] = good.split('.');
          const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
          payload.streaming.streamName = 'cam2';
          const tampered = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
          const none = `${base64url.encode('{"alg":"none","typ":"JWT"}')}.${p}.`;
          const rs256Header = base64url.encode('{"alg":"RS256","typ":"JWT"}');
          const confused = `${rs256Header}.${p}.${sig}`;
          assert.equal(decodeProtectedHeader(confused).alg, 'RS256');
          const cases: Array<[string, string, string]> = [
            ['tampered payload', tampered, 'token_invalid'],
            ['alg none', none, 'token_invalid'],
            ['RS256 header over an HMAC signature', confused, 'token_invalid'],
            ['expired', await sign(parent, {}, Math.floor(Date.now() / 1000) - 120), 'token_expired'],
            ['name outside the parent streams', await sign(parent, { streamName: 'other' }), 'stream_not_allowed'],
            ['missing trackingId', await sign(tracked), 'token_invalid'],
            ['different trackingId', await sign(tracked, { tracking: { trackingId: 'nope' } }), 'token_invalid'],
            ['signed with another key', await sign({ id: parent.id, token: 'e'.repeat(64) }), 'token_invalid'],
            ['unknown parent', await sign({ id: 999999, token: parent.token }), 'token_invalid'],
            ['wrong tokenType', await sign(parent, { tokenType: 'Publish' }), 'token_invalid'],
          ];
          for (const [name, jwt, reason] of cases) {
            const streamName = name === 'name outside the parent streams' ? 'other' : 'cam1';
            const r = await director('subscribe', jwt, { streamName });
            assert.deepEqual([r.status, r.body.data?.reason], [reason === 'stream_not_allowed' ? 403 : 401, reason], name);
          }
          assert.equal((await director('subscribe', await sign(tracked, { tracking: { trackingId: 'grp' } }), { streamName: 'cam1' })).status, 200);
          assert.equal((await director('subscribe', good, { streamName: 'cam1' })).status, 200);
          await api().put(`/api/subscribe_token/${parent.id}`, { refreshToken: true });
          const after = await director('subscribe', good, { streamName: 'cam1' });
          assert.deepEqual([after.status, after.body.data.reason], [401, 'token_invalid']);
        });
      });
    });
  });
}
