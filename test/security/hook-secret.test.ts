// With hooks.secret set, every /hooks/* endpoint (enumerated from the app's router, so a new hook
// cannot be forgotten) refuses a call without the secret, or with a wrong one, with the exact 401;
// nothing is decided, bound, recorded or counted. The same calls with the secret do their work.
// hooks.allowFrom: a caller's own routes from its listed socket addresses need none.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import type { DecisionRoutes } from '../../src/http/decision-routes.js';
import { loadConfig } from '../../src/config/load.js';

const SECRET = 'hook-secret-5f2c9a-0123456789abcdefgh';
const REFUSED = { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' };
const WRONG = { ...REFUSED, message: 'Unauthorized: hook secret invalid' };

interface HookCall {
  method: string;
  path: string;
  contentType?: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
}

describe('security: hook endpoints need the hook secret', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  let http: Listening;
  let acct: { id: string; secret: string };
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  let calls: Record<string, HookCall>;

  before(async () => {
    await factory.setup();
    t = await testApp(await factory.make(), { hooks: { secret: SECRET } });
    http = await listen(t.app);
    acct = await t.account();
    const mk = async (kind: string, body: Record<string, unknown>) => {
      const r = await fetch(`${http.base}/api/${kind}_token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'h', streams: [{ streamName: 'cam1' }], ...body }),
      });
      return ((await r.json()) as { data: { id: number; token: string } }).data;
    };
    pub = await mk('publish', { bindIpsOnUsage: 5, enableThumbnails: true });
    sub = await mk('subscribe', { bindIpsOnUsage: 5, tracking: { trackingId: 'tr' } });
    const json = (o: unknown) => ({ contentType: 'application/json', body: JSON.stringify(o) });
    // One call per route of the router that would decide, bind or record something if let in.
    calls = {
      'post /hooks/authorize': { method: 'POST', path: '/hooks/authorize', ...json({ action: 'subscribe', token: sub.token, streamName: 'cam1', clientIp: '198.51.100.1' }) },
      'all /hooks/auth-request': { method: 'GET', path: '/hooks/auth-request', headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${sub.token}` } },
      'all /hooks/auth-request/*rest': { method: 'GET', path: `/hooks/auth-request/hls/cam1/index.m3u8?token=${sub.token}` },
      'post /hooks/nginx-rtmp': { method: 'POST', path: '/hooks/nginx-rtmp', contentType: 'application/x-www-form-urlencoded', body: `call=publish&app=live&name=cam1&addr=198.51.100.2&clientid=1&token=${pub.token}` },
      'all /hooks/nginx-rtmp/*rest': { method: 'GET', path: `/hooks/nginx-rtmp/edge-1?call=play&app=live&name=cam1&addr=198.51.100.3&clientid=2&token=${sub.token}` },
      'get /hooks/nginx-rtmp': { method: 'GET', path: `/hooks/nginx-rtmp?call=play&app=live&name=cam1&addr=198.51.100.3&clientid=2&token=${sub.token}` },
      'post /hooks/mediamtx/auth': { method: 'POST', path: '/hooks/mediamtx/auth', ...json({ ip: '198.51.100.4', user: '', password: '', token: sub.token, action: 'read', path: 'cam1', protocol: 'rtsp', id: 'm1', query: '' }) },
      'post /hooks/mediamtx/event': { method: 'POST', path: '/hooks/mediamtx/event?event=recordSegmentComplete', ...json({ path: 'cam1', segmentPath: '/rec/cam1.mp4', segmentDuration: '2' }) },
      'post /hooks/srs': { method: 'POST', path: '/hooks/srs', ...json({ action: 'on_play', client_id: 's1', ip: '198.51.100.5', vhost: '__defaultVhost__', app: 'live', stream: 'cam1', param: `?token=${sub.token}` }) },
      'post /hooks/ome/admission': { method: 'POST', path: '/hooks/ome/admission', ...json({ client: { address: '198.51.100.6', port: 1 }, request: { direction: 'outgoing', protocol: 'webrtc', status: 'opening', url: `ws://h/app/cam1?token=${sub.token}`, time: new Date().toISOString() } }) },
      'post /hooks/events': { method: 'POST', path: '/hooks/events', ...json({ type: 'feeds', event: 'started', accountId: acct.id, streamName: 'cam1', tokenId: pub.id }) },
      'post /hooks/thumbnail': { method: 'POST', path: `/hooks/thumbnail?streamId=${acct.id}/cam1`, contentType: 'image/jpeg', body: new Uint8Array([0xff, 0xd8, 0xff, 0xd9]) },
      'post /hooks/usage': { method: 'POST', path: '/hooks/usage', ...json({ tokenId: sub.id, streamName: 'cam1', bytesOut: 1000, at: '2026-06-01T12:00:00Z' }) },
    };
  });
  after(async () => {
    await http.close();
    await factory.teardown();
  });

  const send = (c: HookCall, extra: { headers?: Record<string, string>; query?: string } = {}) => {
    const path = extra.query ? `${c.path}${c.path.includes('?') ? '&' : '?'}${extra.query}` : c.path;
    return fetch(http.base + path, {
      method: c.method,
      headers: { ...(c.contentType ? { 'content-type': c.contentType } : {}), ...c.headers, ...extra.headers },
      body: c.body as BodyInit | undefined,
    });
  };

  /** What the refused calls must not have touched. */
  const state = async () => {
    const s = t.services.store;
    return JSON.stringify({
      bound: [await s.boundAddresses(acct.id, pub.id), await s.boundAddresses(acct.id, sub.id)],
      live: await s.activePublishTokenIds(acct.id),
      recordings: await s.listRecordings(acct.id),
      usage: await s.usageByTracking(acct.id, ['tr'], '2026-01-01', '2027-01-01'),
      decisions: (await t.services.metrics.registry.getSingleMetricAsString('streamgate_decisions_total')).split('\n').filter((l) => !l.startsWith('#')),
    });
  };

  it('every hook route of the router is covered by this test', () => {
    // The decision endpoints live in their own table (src/http/decision-routes.ts), not express's router.
    const routes = (t.app.locals.decisionRoutes as DecisionRoutes).list().filter((r) => r.split(' ')[1].startsWith('/hooks'));
    assert.deepEqual(routes.sort(), Object.keys(calls).sort());
  });

  it('refuses each call without the secret, with a wrong one, or with it only where a wrong header overrides it: 401, nothing done', async () => {
    const before = await state();
    // "required" when no secret came where one is read (header, else ?secret=), "invalid" otherwise.
    const wrong: Array<[{ headers?: Record<string, string>; query?: string }, typeof REFUSED]> = [
      [{}, REFUSED],
      [{ headers: { 'x-streamgate-hook-secret': 'wrong' } }, WRONG],
      [{ headers: { 'x-streamgate-hook-secret': '' } }, REFUSED],
      [{ headers: { 'x-streamgate-hook-secret': SECRET.slice(0, -1) } }, WRONG],
      [{ headers: { 'x-streamgate-hook-secret': `${SECRET}x` } }, WRONG],
      [{ query: 'secret=wrong' }, WRONG],
      [{ query: `secret=${SECRET.toUpperCase()}` }, WRONG],
      [{ query: `secret=${SECRET}&secret=${SECRET}` }, WRONG],
      [{ query: `secret[]=${SECRET}` }, REFUSED],
      [{ headers: { 'x-streamgate-hook-secret': 'wrong' }, query: `secret=${SECRET}` }, WRONG],
      [{ headers: { authorization: `Bearer ${SECRET}` } }, REFUSED],
    ];
    for (const [name, c] of Object.entries(calls)) {
      for (const [w, answer] of wrong) {
        const r = await send(c, w);
        assert.equal(r.status, 401, `${name} ${JSON.stringify(w)}`);
        assert.deepEqual(await r.json(), answer, `${name} ${JSON.stringify(w)}`);
      }
    }
    await t.services.lifecycle.idle();
    assert.equal(await state(), before, 'nothing was decided, bound, recorded or counted');
  });

  it('the same calls with the secret (header or query) do their work', async () => {
    const before = await state();
    for (const [name, c] of Object.entries(calls)) {
      const r = await send(c, name.includes('nginx-rtmp') || name.includes('mediamtx') ? { query: `secret=${SECRET}` } : { headers: { 'x-streamgate-hook-secret': SECRET } });
      assert.ok([200, 202, 204].includes(r.status), `${name}: ${r.status} ${await r.text()}`);
    }
    await t.services.lifecycle.idle();
    const after = JSON.parse(await state());
    assert.notEqual(JSON.stringify(after), before);
    assert.ok(after.bound[1].length >= 4, `the subscribe calls bound ${after.bound[1].length} addresses`);
    assert.deepEqual(after.live, [pub.id]);
  });
});

// hooks.allowFrom: nginx-rtmp can only send the secret in its notify URL, which nginx logs; listed
// by its socket address instead, its own routes need no secret. Any other caller's route, any
// other address (a forwarded header never counts) still needs it.
describe('security: hooks.allowFrom admits a caller by its socket address, nothing more', () => {
  const factory = sqliteFactory();
  before(() => factory.setup());
  after(() => factory.teardown());

  const rtmpPlay = (token: string, addr = '198.51.100.9') => `call=play&app=live&name=cam1&addr=${addr}&clientid=7&token=${token}`;
  const app = async (allowFrom: Record<string, string[]>) => {
    // 127.0.0.1 is also a trusted proxy: its X-Forwarded-For is believed for client addresses, never for the guard
    const t = await testApp(await factory.make(), { hooks: { secret: SECRET, allowFrom, trustedProxies: ['127.0.0.1', '::1'] } });
    const http = await listen(t.app);
    const acct = await t.account();
    const r = await fetch(`${http.base}/api/subscribe_token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'h', streams: [{ streamName: 'cam1' }] }),
    });
    const sub = ((await r.json()) as { data: { token: string } }).data;
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(http.base + path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
    return { t, http, sub, post };
  };

  it('from a listed address: the caller named needs no secret; every other caller still does', async () => {
    const a = await app({ 'nginx-rtmp': ['127.0.0.1', '::1'] });
    try {
      const r = await a.post('/hooks/nginx-rtmp', rtmpPlay(a.sub.token));
      assert.equal(r.status, 200, await r.text());
      const refused = await a.post('/hooks/nginx-rtmp', rtmpPlay('not-a-token'));
      assert.equal(refused.status, 403, 'decided: an unknown token is refused by the decision, not by the guard');
      for (const [path, headers, body] of [
        ['/hooks/authorize', { 'content-type': 'application/json' }, JSON.stringify({ action: 'subscribe', token: a.sub.token, streamName: 'cam1' })],
        ['/hooks/auth-request', { 'x-original-uri': `/hls/cam1/index.m3u8?token=${a.sub.token}` }, ''],
        ['/hooks/srs', { 'content-type': 'application/json' }, JSON.stringify({ action: 'on_play', client_id: 's1', ip: '198.51.100.5', vhost: '__defaultVhost__', app: 'live', stream: 'cam1', param: `?token=${a.sub.token}` })],
        ['/hooks/nginx-rtmp-not-a-route', {}, ''],
      ] as const) {
        const x = await a.post(path, body, headers as Record<string, string>);
        assert.equal(x.status, 401, path);
        assert.deepEqual(await x.json(), REFUSED, path);
      }
    } finally {
      await a.http.close();
    }
  });

  it('from an address not listed: the secret is needed, whatever X-Forwarded-For says', async () => {
    const a = await app({ 'nginx-rtmp': ['10.0.0.0/8'] });
    try {
      const forwarded: Array<Record<string, string>> = [{}, { 'x-forwarded-for': '10.1.2.3' }, { 'x-real-ip': '10.1.2.3' }];
      for (const headers of forwarded) {
        const r = await a.post('/hooks/nginx-rtmp', rtmpPlay(a.sub.token), headers);
        assert.equal(r.status, 401, JSON.stringify(headers));
        assert.deepEqual(await r.json(), REFUSED);
      }
      const ok = await a.post(`/hooks/nginx-rtmp?secret=${SECRET}`, rtmpPlay(a.sub.token), { 'x-forwarded-for': '10.1.2.3' });
      assert.equal(ok.status, 200);
    } finally {
      await a.http.close();
    }
  });

  it('is checked at start: a name that is no caller, or a list without hooks.secret, stops the start naming the setting', () => {
    assert.throws(() => loadConfig({ env: {}, overrides: { hooks: { secret: SECRET, allowFrom: { nginx: ['10.0.0.0/8'] } } } }), /hooks\.allowFrom\.nginx: not a caller: expected one of .*nginx-rtmp/);
    assert.throws(() => loadConfig({ env: {}, overrides: { hooks: { allowFrom: { 'nginx-rtmp': ['10.0.0.0/8'] } } } }), /hooks\.allowFrom: needs hooks\.secret/);
    assert.throws(() => loadConfig({ env: {}, overrides: { hooks: { secret: SECRET, allowFrom: { 'nginx-rtmp': ['10.0.0.300/8'] } } } }), /hooks\.allowFrom\.nginx-rtmp\.0/);
    assert.deepEqual(loadConfig({ env: {}, overrides: { hooks: { secret: SECRET, allowFrom: { 'nginx-rtmp': ['10.0.0.0/8', '::1'] } } } }).hooks.allowFrom, { 'nginx-rtmp': ['10.0.0.0/8', '::1'] });
  });
});
