// The decision history over HTTP (docs/api.md#decision-history), on the embedded store and on two
// instances sharing one Redis: a refused viewer's decisionId, told by /hooks/authorize, an
// auth_request proxy and the director, is found through /api/decisions with every rule and the one
// that refused it — on Redis through the other instance; filters, pages, sampling, erasure, and
// another account seeing nothing.
import { SignJWT } from 'jose';
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { sqliteDeployment, redisDeployment, type Deployment } from '../helpers/instances.js';
import { ADMIN_KEY, type TestApp } from '../helpers/app.js';

const HOOKS = { secret: '', trustedProxies: [], omeSecret: '', mediamtx: { allowApiFrom: [] } };
const OVERRIDES = { hooks: HOOKS, history: { allowSampleRate: 1 } };

/** The policy's checks, in order, as the check endpoint lists them. */
const CHECKS = [
  'token present',
  'token valid',
  'token active',
  'not expired',
  'no session cut',
  'stream name allowed',
  'origin allowed',
  'IP address allowed',
  'country allowed',
  'session limits',
  'bind on usage',
];

interface Row {
  decisionId: string;
  time: string;
  caller: string;
  allowed: boolean;
  status: number;
  reason: string;
  rule: string | null;
  detail: string | null;
  tokenId: number | null;
  credential: string;
  clientIp: string | null;
  origin: string | null;
  sessionId: string | null;
  streamName: string;
  rules: Array<{ rule: string; result: string; detail: string | null }>;
}

for (const make of [() => sqliteDeployment(OVERRIDES), () => redisDeployment(2, OVERRIDES)]) {
  describe('decision history over HTTP', () => {
    let d: Deployment;
    let first: TestApp;
    let last: TestApp;
    let acct: { id: string; secret: string };
    let other: { id: string; secret: string };
    let token: { id: number; token: string };
    before(async () => {
      d = await make();
      first = d.instances[0].t;
      last = d.instances[d.instances.length - 1].t;
      acct = await first.account('history');
      other = await first.account('history other');
      const r = await request(first.app)
        .post('/api/subscribe_token')
        .set('authorization', `Bearer ${acct.secret}`)
        .send({ label: 'viewer', streams: [{ streamName: 'cam1' }], allowedOrigins: ['good.example'] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      token = r.body.data;
    });
    after(async () => {
      await d.close();
    });

    /** A decision through the first instance's /hooks/authorize. */
    const authorize = (body: Record<string, unknown>) => request(first.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'cam1', ...body });
    /** What the last instance's history answers (the first instance's queue written first, as its timer would). */
    const lookup = async (path: string, secret = acct.secret) => {
      await first.services.history!.flush();
      return request(last.app).get(path).set('authorization', `Bearer ${secret}`);
    };

    it('finds a refused viewer by its decisionId, with every rule and the one that refused', async () => {
      const refused = await authorize({ token: token.token, origin: 'https://evil.example', clientIp: '203.0.113.77', sessionId: 'viewer-1' });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.reason, 'origin_not_allowed');
      const id = refused.body.decisionId as string;
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const r = await lookup(`/api/decisions/${id}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const row = r.body.data as Row;
      assert.equal(row.decisionId, id);
      assert.equal(JSON.stringify(r.body).includes(token.token), false, 'no token value in the history');
      assert.equal(row.caller, 'authorize');
      assert.equal(row.allowed, false);
      assert.equal(row.status, 403);
      assert.equal(row.reason, 'origin_not_allowed');
      assert.equal(row.rule, 'origin allowed');
      assert.equal(row.tokenId, token.id);
      assert.equal(row.credential, 'token');
      assert.equal(row.clientIp, '203.0.113.77');
      assert.equal(row.origin, 'evil.example');
      assert.equal(row.sessionId, 'viewer-1');
      assert.equal(row.streamName, 'cam1');
      assert.deepEqual(
        row.rules.map((x) => x.rule),
        CHECKS,
      );
      const byRule = new Map(row.rules.map((x) => [x.rule, x]));
      assert.equal(byRule.get('origin allowed')!.result, 'fail');
      assert.match(byRule.get('origin allowed')!.detail!, /evil\.example/);
      assert.equal(byRule.get('token active')!.result, 'pass');
      assert.equal(byRule.get('IP address allowed')!.result, 'skipped');
      assert.equal(byRule.get('IP address allowed')!.detail, 'an earlier check failed');
      // the check endpoint explains the same probe with the same rules
      const check = await request(first.app)
        .post(`/api/subscribe_token/${token.id}/check`)
        .set('authorization', `Bearer ${acct.secret}`)
        .send({ streamName: 'cam1', origin: 'https://evil.example', clientIp: '203.0.113.77', protocol: 'generic' });
      assert.equal(check.status, 200, JSON.stringify(check.body));
      assert.deepEqual(
        check.body.data.rules.map((x: { rule: string; result: string }) => `${x.rule}: ${x.result}`),
        row.rules.map((x) => `${x.rule}: ${x.result}`),
      );
      // never another account's, nor without a secret
      const foreign = await lookup(`/api/decisions/${id}`, other.secret);
      assert.equal(foreign.status, 404);
      assert.match(foreign.body.data.message, /No decision/);
      assert.equal((await request(last.app).get(`/api/decisions/${id}`)).status, 401);
    });

    it('gives the decisionId to an auth_request proxy in a header and to a browser SDK through the director', async () => {
      const proxied = await request(first.app)
        .get('/hooks/auth-request')
        .set('x-original-uri', `/hls/cam1/index.m3u8?token=${token.token}`)
        .set('origin', 'https://evil.example')
        .set('x-forwarded-for', '198.51.100.9');
      assert.equal(proxied.status, 403);
      const viaHeader = proxied.headers['x-streamgate-decision-id'] as string;
      assert.equal(viaHeader, proxied.body.decisionId);
      const r1 = await lookup(`/api/decisions/${viaHeader}`);
      assert.equal(r1.status, 200, JSON.stringify(r1.body));
      assert.equal(r1.body.data.caller, 'auth-request');
      assert.equal(r1.body.data.rule, 'origin allowed');

      const director = await request(first.app)
        .post('/api/director/subscribe')
        .set('authorization', 'Bearer not-a-token')
        .send({ streamName: 'cam1', streamAccountId: acct.id });
      assert.equal(director.status, 401, JSON.stringify(director.body));
      const r2 = await lookup(`/api/decisions/${director.body.data.decisionId}`);
      assert.equal(r2.status, 200, JSON.stringify(r2.body));
      assert.equal(r2.body.data.reason, 'token_invalid');
      assert.equal(r2.body.data.rule, 'token valid');
      assert.equal(r2.body.data.credential, 'invalid');
    });

    it('lists by token, stream, address, reason, outcome and time, newest first, in pages', async () => {
      const t0 = new Date().toISOString();
      const a = await authorize({ token: token.token, streamName: 'cam2', clientIp: '192.0.2.10' });
      // an unknown token's refusal belongs to the account the request names
      const b = await authorize({ token: 'no-such-token', accountId: acct.id, streamName: 'cam3', clientIp: '192.0.2.11' });
      const c = await authorize({ token: token.token, origin: 'good.example', clientIp: '192.0.2.12' });
      assert.deepEqual([a.status, b.status, c.status], [403, 401, 200]);
      const ids = async (q: string) => {
        const r = await lookup(`/api/decisions?${q}`);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return (r.body.data.decisions as Row[]).map((x) => x.decisionId);
      };
      assert.deepEqual(await ids('streamName=cam2'), [a.body.decisionId]);
      assert.deepEqual(await ids('clientIp=192.0.2.11'), [b.body.decisionId]);
      assert.deepEqual(await ids('reason=stream_not_allowed'), [a.body.decisionId]);
      const mine = await ids(`tokenId=${token.id}&from=${encodeURIComponent(t0)}`);
      assert.equal(mine.length, 2);
      assert.equal(mine[1], a.body.decisionId);
      assert.equal((await ids('allowed=true&clientIp=192.0.2.12')).length, 1);
      assert.deepEqual(await ids(`to=${encodeURIComponent(t0)}&streamName=cam3`), []);
      // pages of one, newest first, each once
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 10; i++) {
        const r = await lookup(`/api/decisions?from=${encodeURIComponent(t0)}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        const rows = r.body.data.decisions as Row[];
        seen.push(...rows.map((x) => x.decisionId));
        cursor = r.body.data.next;
        if (cursor === null) break;
      }
      assert.deepEqual(seen, [c.body.decisionId, b.body.decisionId, a.body.decisionId]);
      // bad input: a 400 naming the field
      const bad = await lookup('/api/decisions?clientIp=nope&reason=maybe');
      assert.equal(bad.status, 400);
      assert.ok(bad.body.data.errors['query.clientIp'] || bad.body.data.errors.clientIp, JSON.stringify(bad.body));
      assert.equal((await lookup('/api/decisions/not-an-id')).status, 400);
      // a cursor this history did not make: a 400 naming it, on either store
      const foreign = await lookup('/api/decisions?cursor=nonsense');
      assert.deepEqual([foreign.status, foreign.body.data.errors?.cursor], [400, ["not a cursor this history answered (pass the previous page's next as it is)"]]);
    });

    it("an issuer's refusal is filed under the issuer's account, never under the account a request names", async () => {
      const own = await request(first.app)
        .post('/api/subscribe_token')
        .set('authorization', `Bearer ${other.secret}`)
        .send({ label: 'policy', streams: [{ streamName: 'cam1' }] });
      const made = await request(first.app)
        .post('/api/issuers')
        .set('authorization', `Bearer ${other.secret}`)
        .send({ label: 'idp', policyTokenId: own.body.data.id, issuer: 'https://idp.history.example/', keyIds: ['hist-k1'], audience: ['streamgate'], algorithms: ['HS256'], secret: 'history-issuer-secret-0123456789' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      // signed with another secret: the other account's issuer refuses it
      const jwt = await new SignJWT({ sub: 'cam1' })
        .setProtectedHeader({ alg: 'HS256', kid: 'hist-k1' })
        .setIssuer('https://idp.history.example/')
        .setAudience('streamgate')
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode('not-the-issuer-secret-0123456789'));
      const r = await authorize({ token: jwt, accountId: acct.id, clientIp: '192.0.2.50' });
      assert.equal(r.status, 401, JSON.stringify(r.body));
      assert.equal((await lookup(`/api/decisions/${r.body.decisionId}`)).status, 404, 'not in the account the request named');
      const theirs = await lookup(`/api/decisions/${r.body.decisionId}`, other.secret);
      assert.equal(theirs.status, 200);
      assert.match((theirs.body.data as Row).detail ?? '', new RegExp(`^issuer ${made.body.data.id}: `));
    });

    it("erases an account's history through the admin API", async () => {
      const r = await authorize({ token: 'gone-token', accountId: acct.id, clientIp: '192.0.2.99' });
      assert.equal((await lookup(`/api/decisions/${r.body.decisionId}`)).status, 200);
      const erased = await request(last.app).delete(`/admin/accounts/${acct.id}/decisions`).set('authorization', `Bearer ${ADMIN_KEY}`);
      assert.equal(erased.status, 200, JSON.stringify(erased.body));
      assert.equal((await lookup(`/api/decisions/${r.body.decisionId}`)).status, 404);
      const listed = await lookup('/api/decisions');
      assert.deepEqual(listed.body.data.decisions, []);
      assert.equal((await request(last.app).delete('/admin/accounts/NOPE/decisions').set('authorization', `Bearer ${ADMIN_KEY}`)).status, 404);
    });
  });
}
