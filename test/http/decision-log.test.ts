// The decision log line and streamgate_decisions_total say what the caller was told (status,
// reason) and why (rule, detail), also when a step after the policy set the answer: a re-ask that
// keeps a running session, a viewer credential that did not hold, the registry's own refusal
// (docs/api.md#decision-metrics-and-logs).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { applyTokenUpdate } from '../../src/domain/tokens.js';
import { ADMIN_KEY } from '../helpers/app.js';

const COOKIE = 'streamgate_session';
const SECRET = 'viewer-credential-secret-0123456789abcdef';
const RTMP = 'app=live&tcurl=rtmp%3A%2F%2Fhost%3A1935%2Flive&addr=203.0.113.7';

interface Logged {
  adapter: string;
  action: string;
  allowed: boolean;
  status: number;
  reason: string;
  rule?: string;
  detail?: string;
  tokenId?: number;
}

/** An app whose decision log lines are kept, and its decision counter read back. */
async function logged(overrides: Record<string, unknown>) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  const config = loadConfig({ env: {}, overrides: { adminKey: ADMIN_KEY, log: { level: 'info' }, ...overrides } });
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-decision-log-'));
  const services: Services = await createServices(config, { store: new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL' }), logger: createLogger('info', sink) });
  const app = createApp(services);
  const created = await request(app).post('/admin/accounts').set('authorization', `Bearer ${ADMIN_KEY}`).send({ name: 'acme' });
  const acct = { id: created.body.data.id as string, secret: created.body.data.apiSecret as string };
  const api = (method: 'post' | 'put' | 'patch', p: string, body: object) => request(app)[method](p).set('authorization', `Bearer ${acct.secret}`).send(body);
  return {
    app,
    services,
    acct,
    api,
    async token(kind: 'publish' | 'subscribe', body: Record<string, unknown> = {}) {
      const r = await api('post', `/api/${kind}_token`, { label: 'x', streams: [{ streamName: 'cam1' }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string };
    },
    /** The decision lines logged since the last call, with the fields this suite reads. */
    decisions(): Logged[] {
      const out = lines.filter((l) => l.msg === 'decision').map((l) => {
        const { adapter, action, allowed, status, reason, rule, detail, tokenId } = l as unknown as Logged;
        const picked: Logged = { adapter, action, allowed, status, reason };
        if (rule !== undefined) picked.rule = rule;
        if (detail !== undefined) picked.detail = detail;
        if (tokenId !== undefined) picked.tokenId = tokenId;
        return picked;
      });
      lines.length = 0;
      return out;
    },
    /** streamgate_decisions_total's lines for one adapter, without the adapter label: `labels value`. */
    async counted(adapter: string): Promise<string[]> {
      const m = await services.metrics.registry.getSingleMetricAsString('streamgate_decisions_total');
      return m
        .split('\n')
        .filter((l) => l.includes(`adapter="${adapter}"`))
        .map((l) => l.replace(`adapter="${adapter}",`, ''))
        .sort();
    },
    close: () => services.close(),
  };
}

const rtmp = (app: Awaited<ReturnType<typeof logged>>['app'], body: string) => request(app).post('/hooks/nginx-rtmp').type('form').send(`${RTMP}&${body}`);

describe('the decision log and metrics say what the caller was told, and why', () => {
  it('a disabled publisher kept alive (terminateOn [delete]): on_update is answered 200 and logged and counted as that allow, with why', async (t) => {
    const a = await logged({});
    t.after(() => a.close());
    const pub = await a.token('publish');
    assert.equal((await rtmp(a.app, `clientid=1&call=publish&name=cam1&token=${pub.token}`)).status, 200);
    await a.services.lifecycle.idle();
    assert.equal((await a.api('patch', '/api/publish_token/disable', { tokenIds: [pub.id] })).status, 200);
    a.decisions();
    const update = await rtmp(a.app, `clientid=1&call=update_publish&name=cam1&token=${pub.token}`);
    assert.deepEqual([update.status, update.text], [200, 'OK']);
    assert.deepEqual(a.decisions(), [
      {
        adapter: 'nginx-rtmp',
        action: 'publish',
        allowed: true,
        status: 200,
        reason: 'allowed',
        rule: 'running session kept',
        detail: 'the token is disabled (token_disabled); enforcement.terminateOn does not list disable: the running session is kept',
        tokenId: pub.id,
      },
    ]);
    assert.deepEqual(await a.counted('nginx-rtmp'), [
      'streamgate_decisions_total{action="publish",result="allow",reason="allowed",kind="full"} 2',
    ]);
    // a new publish with the same token is refused, and logged as refused
    const again = await rtmp(a.app, `clientid=2&call=publish&name=cam1&token=${pub.token}`);
    assert.deepEqual([again.status, again.text], [403, 'Unauthorized: Token disabled']);
    assert.deepEqual(a.decisions(), [
      { adapter: 'nginx-rtmp', action: 'publish', allowed: false, status: 401, reason: 'token_disabled', rule: 'token active', detail: 'the token is disabled', tokenId: pub.id },
    ]);
  });

  it('a re-ask refused by a rule edited since the admission keeps its session: answered 200, logged as that allow, with the refusal in detail', async (t) => {
    const a = await logged({ enforcement: { terminateOn: ['delete', 'disable'] } });
    t.after(() => a.close());
    const pub = await a.token('publish');
    assert.equal((await rtmp(a.app, `clientid=1&call=publish&name=cam1&token=${pub.token}`)).status, 200);
    await a.services.lifecycle.idle();
    assert.equal((await a.api('put', `/api/publish_token/${pub.id}`, { addTokenStreams: [{ streamName: 'cam2' }], removeTokenStreams: ['cam1'] })).status, 200);
    a.decisions();
    const update = await rtmp(a.app, `clientid=1&call=update_publish&name=cam1&token=${pub.token}`);
    assert.deepEqual([update.status, update.text], [200, 'OK']);
    assert.deepEqual(a.decisions(), [
      {
        adapter: 'nginx-rtmp',
        action: 'publish',
        allowed: true,
        status: 200,
        reason: 'allowed',
        rule: 'running session kept',
        detail: "'cam1' matches none of the token's streams (stream_not_allowed); not a token change that ends running sessions: the running session is kept",
        tokenId: pub.id,
      },
    ]);
  });

  it('with disable in terminateOn, the re-ask of a publisher whose token was disabled elsewhere is refused and its session ended; the log says so', async (t) => {
    const a = await logged({ enforcement: { terminateOn: ['delete', 'disable'] } });
    t.after(() => a.close());
    const pub = await a.token('publish');
    assert.equal((await rtmp(a.app, `clientid=1&call=publish&name=cam1&token=${pub.token}`)).status, 200);
    await a.services.lifecycle.idle();
    // as the CLI does it: a write to the store, no management call that would end the session
    await a.services.store.updateToken(a.acct.id, 'publish', pub.id, (cur) => applyTokenUpdate(cur, { isActive: false }, Date.now(), () => 'x'));
    a.decisions();
    const update = await rtmp(a.app, `clientid=1&call=update_publish&name=cam1&token=${pub.token}`);
    assert.deepEqual([update.status, update.text], [403, 'Unauthorized: Token disabled']);
    assert.deepEqual(a.decisions(), [
      {
        adapter: 'nginx-rtmp',
        action: 'publish',
        allowed: false,
        status: 401,
        reason: 'token_disabled',
        rule: 'token active',
        detail: 'the token is disabled (token_disabled); enforcement.terminateOn lists disable: the running session is ended',
        tokenId: pub.id,
      },
    ]);
    assert.deepEqual(await a.counted('nginx-rtmp'), [
      'streamgate_decisions_total{action="publish",result="allow",reason="allowed",kind="full"} 1',
      'streamgate_decisions_total{action="publish",result="deny",reason="token_disabled",kind="full"} 1',
    ]);
    const sessions = await a.api('post', '/api/stream/stop', { streamId: 'cam1' });
    assert.deepEqual(sessions.body.data, { stoppingLevel: 'None' }, 'the session was ended');
  });

  it('a revoked HLS viewer credential answers token_disabled, and is logged and counted token_disabled (not token_required)', async (t) => {
    const a = await logged({ hooks: { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'] }, sessions: { http: { secret: SECRET } } });
    t.after(() => a.close());
    assert.equal((await request(a.app).put(`/admin/accounts/${a.acct.id}`).set('authorization', `Bearer ${ADMIN_KEY}`).send({ secureViewer: true })).status, 200);
    const sub = await a.token('subscribe');
    const ask = (uri: string, cookie?: string) => {
      const r = request(a.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-forwarded-for': '203.0.113.7' });
      return cookie === undefined ? r : r.set('cookie', `${COOKIE}=${cookie}`);
    };
    const first = await ask(`/hls/cam1/index.m3u8?token=${sub.token}`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const cookie = /^streamgate_session=([^;]+)/.exec((first.headers['set-cookie'] as unknown as string[])[0])?.[1];
    assert.ok(cookie);
    assert.equal((await a.api('put', `/api/subscribe_token/${sub.id}`, { isActive: false })).status, 200);
    a.decisions();
    const refused = await ask('/hls/cam1/1.ts', cookie);
    assert.deepEqual([refused.status, refused.body], [401, { allowed: false, reason: 'token_disabled', message: 'Unauthorized: Token disabled', decisionId: refused.headers['x-streamgate-decision-id'] }]);
    assert.match(refused.body.decisionId, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    assert.deepEqual(a.decisions(), [
      {
        adapter: 'auth-request',
        action: 'subscribe',
        allowed: false,
        status: 401,
        reason: 'token_disabled',
        rule: 'viewer session credential',
        detail: 'the viewer session credential did not hold (token_disabled), and without a token the request is refused: the stream is secured: viewing needs a subscribe token (token_required)',
      },
    ]);
    assert.deepEqual(await a.counted('auth-request'), [
      'streamgate_decisions_total{action="subscribe",result="allow",reason="allowed",kind="full"} 1',
      'streamgate_decisions_total{action="subscribe",result="deny",reason="token_disabled",kind="full"} 1',
    ]);
  });

  it('the re-ask of a session Streamgate cut is refused session_terminated, with the rule and detail', async (t) => {
    const a = await logged({});
    t.after(() => a.close());
    const pub = await a.token('publish');
    assert.equal((await rtmp(a.app, `clientid=1&call=publish&name=cam1&token=${pub.token}`)).status, 200);
    await a.services.lifecycle.idle();
    assert.deepEqual((await a.api('post', '/api/stream/stop', { streamId: 'cam1' })).body.data, { stoppingLevel: 'Stream' });
    // an update of the token lifts the hold on the address: what refuses the cut connection is its ended session
    assert.equal((await a.api('put', `/api/publish_token/${pub.id}`, { label: 'again' })).status, 200);
    a.decisions();
    const update = await rtmp(a.app, `clientid=1&call=update_publish&name=cam1&token=${pub.token}`);
    assert.deepEqual([update.status, update.text], [403, 'Unauthorized: Session terminated']);
    assert.deepEqual(a.decisions(), [
      {
        adapter: 'nginx-rtmp',
        action: 'publish',
        allowed: false,
        status: 403,
        reason: 'session_terminated',
        rule: 'session admission',
        detail: 'Streamgate ended this session (stopped): its re-asks are refused',
        tokenId: pub.id,
      },
    ]);
    assert.deepEqual(await a.counted('nginx-rtmp'), [
      'streamgate_decisions_total{action="publish",result="allow",reason="allowed",kind="full"} 1',
      'streamgate_decisions_total{action="publish",result="deny",reason="session_terminated",kind="full"} 1',
    ]);
  });

  it('session_limit and uses_exhausted refusals of the registry carry the rule and detail', async (t) => {
    const a = await logged({});
    t.after(() => a.close());
    const one = await a.token('subscribe', { maxConcurrentSessions: 1 });
    assert.equal((await rtmp(a.app, `clientid=1&call=play&name=cam1&token=${one.token}`)).status, 200);
    a.decisions();
    const second = await rtmp(a.app, `clientid=2&call=play&name=cam1&token=${one.token}`);
    assert.deepEqual([second.status, second.text], [403, 'Unauthorized: Too many sessions for this token']);
    const once = await a.token('subscribe', { maxUses: 1 });
    assert.equal((await rtmp(a.app, `clientid=3&call=play&name=cam1&token=${once.token}`)).status, 200);
    const spent = await rtmp(a.app, `clientid=4&call=play&name=cam1&token=${once.token}`);
    assert.deepEqual([spent.status, spent.text], [403, 'Unauthorized: Token already used']);
    assert.deepEqual(a.decisions(), [
      {
        adapter: 'nginx-rtmp',
        action: 'subscribe',
        allowed: false,
        status: 403,
        reason: 'session_limit',
        rule: 'session admission',
        detail: 'the token allows 1 session(s) at once (maxConcurrentSessions), and that many are live',
        tokenId: one.id,
      },
      { adapter: 'nginx-rtmp', action: 'subscribe', allowed: true, status: 200, reason: 'allowed', tokenId: once.id },
      {
        adapter: 'nginx-rtmp',
        action: 'subscribe',
        allowed: false,
        status: 403,
        reason: 'uses_exhausted',
        rule: 'session admission',
        detail: "the token's 1 use(s) (maxUses) are spent",
        tokenId: once.id,
      },
    ]);
    assert.deepEqual(await a.counted('nginx-rtmp'), [
      'streamgate_decisions_total{action="subscribe",result="allow",reason="allowed",kind="full"} 2',
      'streamgate_decisions_total{action="subscribe",result="deny",reason="session_limit",kind="full"} 1',
      'streamgate_decisions_total{action="subscribe",result="deny",reason="uses_exhausted",kind="full"} 1',
    ]);
  });

  it('a WHEP preflight is neither logged nor counted; PATCH and DELETE on the session URL are logged allows that start no session and use nothing', async (t) => {
    const a = await logged({
      hooks: {
        trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'],
        authRequest: {
          methodFrom: 'x-original-method',
          streamPatterns: [
            { pattern: '^/whep/(?<stream>[^/]+)$', action: 'subscribe', methods: ['POST'] },
            { pattern: '^/whep/(?<stream>[^/]+)/[^/]+$', action: 'subscribe', methods: ['PATCH', 'DELETE'], resource: true },
          ],
        },
      },
      sessions: { http: { secret: SECRET } },
    });
    t.after(() => a.close());
    const once = await a.token('subscribe', { maxUses: 1 });
    const whep = (method: string, uri: string, o: { token?: string; ip?: string } = {}) => {
      const r = request(a.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-original-method': method, 'x-forwarded-for': o.ip ?? '203.0.113.7' });
      return o.token === undefined ? r : r.set('authorization', `Bearer ${o.token}`);
    };
    const viewers = async () => {
      await a.services.lifecycle.idle();
      const r = await request(a.app).get('/api/sessions?direction=subscribe').set('authorization', `Bearer ${a.acct.secret}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.data.data as Array<{ caller: string; tokenId: number; clientIp: string }>).map((v) => [v.caller, v.tokenId, v.clientIp]);
    };
    const offer = await whep('POST', '/whep/cam1', { token: once.token });
    assert.equal(offer.status, 200, JSON.stringify(offer.body));
    assert.deepEqual(await viewers(), [['auth-request', once.id, '203.0.113.7']]);
    assert.deepEqual(a.decisions(), [{ adapter: 'auth-request', action: 'subscribe', allowed: true, status: 200, reason: 'allowed', tokenId: once.id }]);
    const counted = await a.counted('auth-request');

    for (const uri of ['/whep/cam1', '/whep/cam1/ab12']) {
      const r = await whep('OPTIONS', uri);
      assert.deepEqual([r.status, r.body], [200, { allowed: true, preflight: true }], uri);
    }
    assert.deepEqual(a.decisions(), [], 'a preflight is no decision');
    assert.deepEqual(await a.counted('auth-request'), counted);

    // an ICE restart after the player's address changed (the reason to restart ICE) is no new viewer
    for (const m of ['PATCH', 'DELETE']) assert.equal((await whep(m, '/whep/cam1/ab12', { token: once.token, ip: '198.51.100.9' })).status, 200, m);
    const allowed = { adapter: 'auth-request', action: 'subscribe', allowed: true, status: 200, reason: 'allowed', tokenId: once.id };
    assert.deepEqual(a.decisions(), [allowed, allowed], 'each is decided with the token');
    assert.deepEqual(await a.counted('auth-request'), ['streamgate_decisions_total{action="subscribe",result="allow",reason="allowed",kind="full"} 3']);
    assert.deepEqual(await viewers(), [['auth-request', once.id, '203.0.113.7']], 'no second session');
    // the token's one use was the offer's
    const again = await whep('POST', '/whep/cam1', { token: once.token, ip: '198.51.100.4' });
    assert.deepEqual([again.status, again.body.reason], [403, 'uses_exhausted']);
  });
});
