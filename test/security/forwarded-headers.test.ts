// Forged client addresses: X-Forwarded-For, X-Real-IP and Forwarded from a peer that is not a trusted
// proxy are ignored (the IP rule, bind on usage and a CDN country header use the socket address),
// and from hooks.trustedProxies only the right-most untrusted X-Forwarded-For entry is believed (a
// single-address header such as X-Real-IP only when hooks.realIpHeader names it). Served on a real
// port, so the peer is the TCP socket's address (127.0.0.1).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { listen, call, type Listening } from '../helpers/listen.js';
import { idChecked } from '../helpers/decision-id.js';

const CLIENT = '203.0.113.7';
const FORGERIES: Array<Record<string, string>> = [
  { 'x-forwarded-for': CLIENT },
  { 'x-forwarded-for': `198.51.100.1, ${CLIENT}` },
  { 'x-real-ip': CLIENT },
  { forwarded: `for=${CLIENT}` },
  { forwarded: `for="${CLIENT}:1234";proto=https` },
  { 'x-forwarded-for': CLIENT, 'x-real-ip': CLIENT, forwarded: `for=${CLIENT}`, 'x-client-ip': CLIENT, 'true-client-ip': CLIENT, 'cf-connecting-ip': CLIENT },
];
const IP_DENIED = { message: 'Unauthorized: IP Address not allowed', reason: 'ip_not_allowed' };

async function deployment(hooks: Record<string, unknown>) {
  const f = sqliteFactory();
  await f.setup();
  const t: TestApp = await testApp(await f.make(), { hooks, geo: { trustedHeader: 'cf-ipcountry' } });
  const http: Listening = await listen(t.app);
  const secret = (await t.account()).secret;
  const mk = async (body: Record<string, unknown>) =>
    (await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: 'x', streams: [{ streamName: 'cam1' }], ...body } })).body.data as { id: number; token: string };
  return {
    t,
    http,
    secret,
    pinned: await mk({ allowedIpAddresses: [CLIENT] }),
    binder: await mk({ bindIpsOnUsage: 1 }),
    kiwi: await mk({ allowedCountries: ['NZ'] }),
    close: async () => {
      await http.close();
      await f.teardown();
    },
  };
}
type D = Awaited<ReturnType<typeof deployment>>;

const viaAuthRequest = (d: D, token: string, headers: Record<string, string>) =>
  call(d.http.base, 'GET', '/hooks/auth-request', { headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${token}`, ...headers } });
const viaDirector = (d: D, token: string, headers: Record<string, string>) =>
  call(d.http.base, 'POST', '/api/director/subscribe', { body: { streamName: 'cam1' }, headers: { authorization: `Bearer ${token}`, ...headers } });

describe('security: forged client addresses from an untrusted peer', () => {
  let d: D;
  before(async () => {
    d = await deployment({ trustedProxies: [] });
  });
  after(() => d.close());

  it('the IP rule uses the socket address whatever the forwarding headers say', async () => {
    for (const h of FORGERIES) {
      const a = await viaAuthRequest(d, d.pinned.token, h);
      assert.deepEqual([a.status, a.body.reason], [403, 'ip_not_allowed'], `auth-request ${JSON.stringify(h)}`);
      const r = await viaDirector(d, d.pinned.token, h);
      assert.deepEqual([r.status, idChecked(r.body)], [403, { status: 'fail', data: IP_DENIED }], `director ${JSON.stringify(h)}`);
    }
  });

  it('forged addresses spend no bind slot: the one slot binds the peer, and forgeries from it are that peer', async () => {
    for (let i = 1; i <= 5; i++) {
      const a = await viaAuthRequest(d, d.binder.token, { 'x-forwarded-for': `198.51.100.${i}`, 'x-real-ip': `198.51.100.${i}` });
      assert.equal(a.status, 200);
    }
    const rec = await call(d.http.base, 'GET', `/api/subscribe_token/${d.binder.id}`, { secret: d.secret });
    assert.deepEqual(rec.body.data.boundIpAddresses, ['127.0.0.1']);
  });

  it('a CDN country header from an untrusted peer is not believed', async () => {
    const a = await viaAuthRequest(d, d.kiwi.token, { 'cf-ipcountry': 'NZ' });
    assert.deepEqual([a.status, a.body.reason], [403, 'country_not_allowed']);
    const r = await viaDirector(d, d.kiwi.token, { 'cf-ipcountry': 'NZ' });
    assert.deepEqual([r.status, r.body.data.reason], [403, 'country_not_allowed']);
  });
});

describe('security: forwarding headers from a trusted proxy', () => {
  let d: D;
  before(async () => {
    d = await deployment({ trustedProxies: ['127.0.0.1'] });
  });
  after(() => d.close());

  it('honours the right-most X-Forwarded-For hop that is not a trusted proxy', async () => {
    const honoured: Array<Record<string, string>> = [
      { 'x-forwarded-for': CLIENT },
      { 'x-forwarded-for': `198.51.100.1, ${CLIENT}` },
      { 'x-forwarded-for': `${CLIENT}, 127.0.0.1` },
      { 'x-forwarded-for': `::ffff:${CLIENT}` },
      // load balancers that append the client with its port
      { 'x-forwarded-for': `198.51.100.1, ${CLIENT}:54321` },
      { 'x-forwarded-for': `[::ffff:${CLIENT}]:443` },
      { 'x-forwarded-for': `[::ffff:${CLIENT}]` },
    ];
    for (const h of honoured) {
      assert.equal((await viaAuthRequest(d, d.pinned.token, h)).status, 200, `auth-request ${JSON.stringify(h)}`);
      assert.equal((await viaDirector(d, d.pinned.token, h)).status, 200, `director ${JSON.stringify(h)}`);
    }
    // a spoofed left-most entry behind the proxy is the client's own claim: not believed
    assert.equal((await viaAuthRequest(d, d.pinned.token, { 'x-forwarded-for': `${CLIENT}, 198.51.100.1` })).status, 403);
  });

  it('X-Real-IP passed through by the proxy does not beat the X-Forwarded-For it appended', async () => {
    // The proxy appended the real client (198.51.100.1); the client itself sent X-Real-IP.
    const h = { 'x-real-ip': CLIENT, 'x-forwarded-for': '198.51.100.1' };
    const a = await viaAuthRequest(d, d.pinned.token, h);
    assert.deepEqual([a.status, a.body.reason], [403, 'ip_not_allowed']);
    const r = await viaDirector(d, d.pinned.token, h);
    assert.deepEqual([r.status, idChecked(r.body)], [403, { status: 'fail', data: IP_DENIED }]);
    // nor does it choose the bound address of a bind-on-usage token
    const b = await viaAuthRequest(d, d.binder.token, { 'x-real-ip': CLIENT, 'x-forwarded-for': '198.51.100.9' });
    assert.equal(b.status, 200);
    const rec = await call(d.http.base, 'GET', `/api/subscribe_token/${d.binder.id}`, { secret: d.secret });
    assert.deepEqual(rec.body.data.boundIpAddresses, ['198.51.100.9']);
  });

  it('a garbled chain, or only a Forwarded header (not read), leaves the peer as the client', async () => {
    const unread: Array<Record<string, string>> = [{ 'x-forwarded-for': `${CLIENT}, not-an-ip` }, { 'x-forwarded-for': 'unknown' }, { forwarded: `for=${CLIENT}` }];
    for (const h of unread) {
      const a = await viaAuthRequest(d, d.pinned.token, h);
      assert.deepEqual([a.status, a.body.reason], [403, 'ip_not_allowed'], JSON.stringify(h));
    }
  });

  it('believes the CDN country header from the trusted proxy', async () => {
    assert.equal((await viaAuthRequest(d, d.kiwi.token, { 'cf-ipcountry': 'NZ' })).status, 200);
    assert.equal((await viaDirector(d, d.kiwi.token, { 'cf-ipcountry': 'NZ' })).status, 200);
  });
});

describe('security: a single-address header named by hooks.realIpHeader', () => {
  let d: D;
  before(async () => {
    d = await deployment({ trustedProxies: ['127.0.0.1'], realIpHeader: 'X-Real-IP' });
  });
  after(() => d.close());

  it('is believed from a trusted proxy instead of X-Forwarded-For', async () => {
    const believed: Array<Record<string, string>> = [{ 'x-real-ip': CLIENT }, { 'x-real-ip': `::ffff:${CLIENT}` }, { 'x-real-ip': CLIENT, 'x-forwarded-for': '198.51.100.1' }];
    for (const h of believed) {
      assert.equal((await viaAuthRequest(d, d.pinned.token, h)).status, 200, JSON.stringify(h));
    }
    const xffOnly = await viaAuthRequest(d, d.pinned.token, { 'x-forwarded-for': CLIENT });
    assert.deepEqual([xffOnly.status, xffOnly.body.reason], [403, 'ip_not_allowed'], 'X-Forwarded-For is not read when realIpHeader is set');
    const garbled = await viaAuthRequest(d, d.pinned.token, { 'x-real-ip': 'not-an-ip' });
    assert.deepEqual([garbled.status, garbled.body.reason], [403, 'ip_not_allowed'], 'a garbled value leaves the peer as the client');
  });
});
