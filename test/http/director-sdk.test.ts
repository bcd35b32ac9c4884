// What the director answers for the hosted platform's clients: the `millicast` claim the Web SDK
// reads from the connection JWT, RTMP ingest URLs for streamType Rtmp, and ICE servers in the
// spelling RTCPeerConnection takes whatever the configuration's casing. (The SDK itself, in
// Chromium, is test/e2e/web-sdk.test.ts.)
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { SignJWT, createRemoteJWKSet, jwtVerify } from 'jose';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { loadConfig } from '../../src/config/load.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { idChecked } from '../helpers/decision-id.js';

const ICE_CONFIG = [
  { URLs: 'stun:stun.example.com:3478' },
  { Urls: ['turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:5349'], UserName: 'user', Credential: 'secret' },
  { url: 'stun:[2001:db8::1]:3478' },
  { urls: 'turn:10.0.0.1', userName: 'u2', credential: 'c2' },
];
// urls always a list (the hosted IceServerModel), a configured single URL included
const ICE_ANSWER = [
  { urls: ['stun:stun.example.com:3478'] },
  { urls: ['turn:turn.example.com:443?transport=tcp', 'turns:turn.example.com:5349'], username: 'user', credential: 'secret' },
  { urls: ['stun:[2001:db8::1]:3478'] },
  { urls: ['turn:10.0.0.1'], username: 'u2', credential: 'c2' },
];

interface App {
  t: TestApp;
  acct: { id: string; secret: string };
  server: Server;
  base: string;
}

async function start(director: Record<string, unknown>): Promise<App> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-director-'));
  const t = await testApp(new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL' }), {
    hooks: { secret: '', trustedProxies: ['127.0.0.1'], omeSecret: '', mediamtx: { allowApiFrom: [] } },
    director,
  });
  const acct = await t.account();
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { t, acct, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function mk(a: App, kind: 'publish' | 'subscribe', body: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const r = await request(a.t.app)
    .post(`/api/${kind}_token`)
    .set('authorization', `Bearer ${a.acct.secret}`)
    .send({ label: 'x', streams: [{ streamName: 'cam1' }], ...body });
  if (r.body.status !== 'success') throw new Error(`token create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

const director = (a: App, action: 'publish' | 'subscribe', body: object, token?: string) => {
  const r = request(a.t.app).post(`/api/director/${action}`);
  return (token ? r.set('authorization', `Bearer ${token}`) : r).send(body);
};

/** The JWT's claims after checking its signature against the instance's JWKS. */
async function verified(a: App, jwt: string): Promise<Record<string, unknown>> {
  const { payload } = await jwtVerify(jwt, createRemoteJWKSet(new URL(`${a.base}/.well-known/jwks.json`)), { algorithms: ['ES256'], issuer: 'streamgate' });
  return payload as Record<string, unknown>;
}

describe('director: the millicast claim the Web SDK reads', () => {
  let a: App;
  before(async () => {
    a = await start({ publishUrls: ['wss://media.example/pub/{streamName}'], subscribeUrls: ['wss://media.example/sub/{streamName}'] });
  });
  after(() => new Promise<void>((r) => a.server.close(() => r())));

  it('publish: type, account, stream, the default serverId, and record as the token has it', async () => {
    for (const record of [true, false]) {
      const p = await mk(a, 'publish', { record });
      const r = await director(a, 'publish', { streamName: 'cam1', streamType: 'WebRtc' }, p.token);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const claims = await verified(a, r.body.data.jwt);
      assert.deepEqual(claims.millicast, { type: 'Publish', streamAccountId: a.acct.id, streamName: 'cam1', serverId: 'streamgate', record, customData: null });
      // The claims Streamgate had before stay as they were.
      assert.deepEqual(claims.streaming, { tokenId: p.id, tokenType: 'Publish', accountId: a.acct.id, streamName: 'cam1', record });
      assert.equal(claims.sub, `${a.acct.id}/cam1`);
      assert.deepEqual(claims.mediamtx_permissions, [{ action: 'publish', path: 'cam1' }]);
    }
  });

  it('subscribe with a token and on an open stream: type Subscribe, record false, no custom data', async () => {
    const s = await mk(a, 'subscribe');
    const withToken = await director(a, 'subscribe', { streamName: 'cam1' }, s.token);
    assert.equal(withToken.status, 200, JSON.stringify(withToken.body));
    assert.deepEqual((await verified(a, withToken.body.data.jwt)).millicast, {
      type: 'Subscribe', streamAccountId: a.acct.id, streamName: 'cam1', serverId: 'streamgate', record: false, customData: null,
    });
    const open = await director(a, 'subscribe', { streamName: 'open1', streamAccountId: a.acct.id });
    assert.equal(open.status, 200, JSON.stringify(open.body));
    assert.deepEqual((await verified(a, open.body.data.jwt)).millicast, {
      type: 'Subscribe', streamAccountId: a.acct.id, streamName: 'open1', serverId: 'streamgate', record: false, customData: null,
    });
  });

  it("a self-signed subscribe JWT's customViewerData becomes customData (and only that viewer's)", async () => {
    const parent = await mk(a, 'subscribe', { streams: [{ streamName: 'cam.*', isRegex: true }] });
    const sign = (streaming: Record<string, unknown>) =>
      new SignJWT({ streaming: { tokenId: parent.id, tokenType: 'Subscribe', streamName: 'cam1', ...streaming } })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(parent.token));
    const withData = await director(a, 'subscribe', { streamName: 'cam1' }, await sign({ customViewerData: 'seat=42;tier=gold' }));
    assert.equal(withData.status, 200, JSON.stringify(withData.body));
    assert.equal(((await verified(a, withData.body.data.jwt)).millicast as { customData: unknown }).customData, 'seat=42;tier=gold');
    const other = await director(a, 'subscribe', { streamName: 'cam1' }, await sign({ customViewerData: 'seat=7' }));
    assert.equal(((await verified(a, other.body.data.jwt)).millicast as { customData: unknown }).customData, 'seat=7');
    const without = await director(a, 'subscribe', { streamName: 'cam1' }, await sign({}));
    assert.equal(((await verified(a, without.body.data.jwt)).millicast as { customData: unknown }).customData, null);
    // The parent token itself carries no viewer data.
    const plain = await director(a, 'subscribe', { streamName: 'cam1' }, parent.token);
    assert.equal(((await verified(a, plain.body.data.jwt)).millicast as { customData: unknown }).customData, null);
  });

  it('a field the director does not know is ignored and named; null is not given; a wrong type is still a 400', async () => {
    const p = await mk(a, 'publish');
    const r = await director(a, 'publish', { streamName: 'cam1', streamType: null, streamAccountId: null, sdkVersion: '9.9', options: { x: 1 } }, p.token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.headers['x-streamgate-ignored-fields'], 'sdkVersion, options');
    assert.deepEqual(r.body.data.urls, ['wss://media.example/pub/cam1']);
    const bad = await director(a, 'subscribe', { streamName: 7, streamAccountId: a.acct.id });
    assert.equal(bad.status, 400);
    assert.deepEqual(Object.keys(bad.body.data.errors), ['streamName']);
  });

  it('director.serverId names the server in the claim', async () => {
    const b = await start({ serverId: 'media-eu-1' });
    try {
      const p = await mk(b, 'publish');
      const r = await director(b, 'publish', { streamName: 'cam1' }, p.token);
      assert.equal(((await verified(b, r.body.data.jwt)).millicast as { serverId: unknown }).serverId, 'media-eu-1');
    } finally {
      await new Promise<void>((r) => b.server.close(() => r()));
    }
    assert.throws(() => loadConfig({ env: {}, overrides: { director: { serverId: '' } } }), /director\.serverId: /);
  });
});

describe('director: streamType Rtmp', () => {
  let a: App;
  before(async () => {
    a = await start({
      publishUrls: ['wss://media.example/pub/{streamName}'],
      rtmpPublishUrls: [
        'rtmp://ingest.example:1935/live/{accountId}/{streamName}',
        'rtmps://ingest.example/app?region=eu&name={streamName}',
        'rtmp://ingest.example/key/{streamName}_{token}',
        'rtmp://mediamtx.example/{streamName}?jwt={jwt}',
      ],
    });
  });
  after(() => new Promise<void>((r) => a.server.close(() => r())));

  it('answers the RTMP URLs with the publish token appended (or where the template places it) and the same JWT', async () => {
    const p = await mk(a, 'publish', { record: true });
    for (const streamType of ['Rtmp', 'rtmp', 'RTMP']) {
      const r = await director(a, 'publish', { streamName: 'cam1', streamType }, p.token);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const { jwt } = r.body.data;
      assert.deepEqual(r.body.data, {
        urls: [
          `rtmp://ingest.example:1935/live/${a.acct.id}/cam1?token=${p.token}`,
          `rtmps://ingest.example/app?region=eu&name=cam1&token=${p.token}`,
          `rtmp://ingest.example/key/cam1_${p.token}`,
          `rtmp://mediamtx.example/cam1?jwt=${jwt}`,
        ],
        jwt,
        iceServers: [],
        streamAccountId: a.acct.id,
        subscribeRequiresAuth: false,
      });
      const claims = await verified(a, jwt);
      assert.deepEqual(claims.millicast, { type: 'Publish', streamAccountId: a.acct.id, streamName: 'cam1', serverId: 'streamgate', record: true, customData: null });
    }
  });

  it('WebRtc, an absent and a null streamType answer the WebRTC URLs', async () => {
    const p = await mk(a, 'publish');
    for (const body of [{ streamName: 'cam1', streamType: 'WebRtc' }, { streamName: 'cam1' }, { streamName: 'cam1', streamType: null }]) {
      const r = await director(a, 'publish', body, p.token);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body.data.urls, ['wss://media.example/pub/cam1'], JSON.stringify(body));
    }
  });

  it('a refused publish gets no URL: the decision comes first', async () => {
    const p = await mk(a, 'publish');
    const r = await director(a, 'publish', { streamName: 'cam2', streamType: 'Rtmp' }, p.token);
    assert.deepEqual([r.status, idChecked(r.body)], [403, { status: 'fail', data: { message: 'Unauthorized: Stream name not allowed', reason: 'stream_not_allowed' } }]);
  });

  it('with no RTMP URLs configured, Rtmp is a 400 naming streamType that decides nothing', async () => {
    const b = await start({});
    try {
      const p = await mk(b, 'publish', { bindIpsOnUsage: 1 });
      const r = await director(b, 'publish', { streamName: 'cam1', streamType: 'Rtmp' }, p.token).set('x-forwarded-for', '203.0.113.7');
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, {
        status: 'fail',
        data: { message: 'Validation errors', errors: { streamType: ['Rtmp publishing is not offered here (director.rtmpPublishUrls is empty): use WebRtc'] } },
      });
      assert.deepEqual(await b.t.services.store.boundAddresses(b.acct.id, p.id), [], 'no bind slot spent');
      const webrtc = await director(b, 'publish', { streamName: 'cam1', streamType: 'WebRtc' }, p.token).set('x-forwarded-for', '203.0.113.7');
      assert.equal(webrtc.status, 200);
      assert.deepEqual(await b.t.services.store.boundAddresses(b.acct.id, p.id), ['203.0.113.7']);
    } finally {
      await new Promise<void>((r) => b.server.close(() => r()));
    }
  });

  it('refuses RTMP URL templates that are not rtmp(s) URLs or hold an unknown placeholder, naming the entry', () => {
    const bad: Array<[string, RegExp]> = [
      ['http://ingest.example/live/{streamName}', /director\.rtmpPublishUrls\.0: expected rtmp:\/\/host/],
      ['rtmp:///live', /director\.rtmpPublishUrls\.0: expected rtmp:\/\/host/],
      ['rtmp://ingest.example/live/{streamName} x', /director\.rtmpPublishUrls\.0: expected rtmp:\/\/host/],
      ['rtmp://ingest.example/live/{stream}', /director\.rtmpPublishUrls\.0: unknown placeholder/],
    ];
    for (const [url, message] of bad) {
      assert.throws(() => loadConfig({ env: {}, overrides: { director: { rtmpPublishUrls: [url] } } }), message, url);
    }
    const c = loadConfig({ env: { STREAMGATE_DIRECTOR_RTMPPUBLISHURLS: 'rtmp://a/live/{streamName},rtmps://b:443/x/{token}' } });
    assert.deepEqual(c.director.rtmpPublishUrls, ['rtmp://a/live/{streamName}', 'rtmps://b:443/x/{token}']);
  });
});

describe('director: ICE servers in the spelling RTCPeerConnection takes', () => {
  let a: App;
  before(async () => {
    a = await start({ iceServers: ICE_CONFIG });
  });
  after(() => new Promise<void>((r) => a.server.close(() => r())));

  it('publish and subscribe answer urls (always a list)/username/credential whatever the configured casing', async () => {
    const p = await mk(a, 'publish');
    const pub = await director(a, 'publish', { streamName: 'cam1' }, p.token);
    assert.equal(pub.status, 200, JSON.stringify(pub.body));
    assert.deepEqual(pub.body.data.iceServers, ICE_ANSWER);
    const sub = await director(a, 'subscribe', { streamName: 'cam1', streamAccountId: a.acct.id });
    assert.equal(sub.status, 200, JSON.stringify(sub.body));
    assert.deepEqual(sub.body.data.iceServers, ICE_ANSWER);
  });

  it('takes the list from the environment as JSON, keys in any casing', () => {
    const c = loadConfig({ env: { STREAMGATE_DIRECTOR_ICESERVERS: '[{"URLS":"turn:t.example:3478","USERNAME":"u","CREDENTIAL":"c"}]' } });
    assert.deepEqual(c.director.iceServers, [{ urls: ['turn:t.example:3478'], username: 'u', credential: 'c' }]);
  });

  it('refuses at start-up, naming the entry and member, what a browser would refuse', () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ urls: 'turn:t.example' }, /director\.iceServers\.0\.username: a turn:\/turns: server needs a non-empty username and credential/],
      [{ urls: 'turns:t.example', username: 'u' }, /director\.iceServers\.0\.credential: a turn:\/turns: server needs/],
      [{ urls: 'turn:t.example', username: '', credential: '' }, /director\.iceServers\.0\.username: a turn/],
      [{ urls: ['stun:ok.example', 'http://x'] }, /director\.iceServers\.0\.urls\.1: "http:\/\/x": must start with stun:, stuns:, turn: or turns:/],
      [{ urls: 'stun:s.example?transport=udp' }, /director\.iceServers\.0\.urls: .*a stun: URL takes no \?query/],
      [{ urls: 'turn:t.example?transport=sctp', username: 'u', credential: 'c' }, /director\.iceServers\.0\.urls: .*\?transport=udp or \?transport=tcp/],
      [{ urls: 'stun:s.example:0' }, /director\.iceServers\.0\.urls: .*the port must be 1\.\.65535/],
      [{ urls: 'stun:s.example:65536' }, /the port must be 1\.\.65535/],
      [{ urls: 'stun:user@s.example' }, /user@host is not accepted/],
      [{ urls: 'stun://s.example' }, /expected <scheme>:<host>\[:<port>\]/],
      [{ urls: 'stun:s.example/path' }, /expected <scheme>:<host>\[:<port>\]/],
      [{ urls: 'stun:' }, /expected <scheme>:<host>\[:<port>\]/],
      [{ urls: [] }, /director\.iceServers\.0\.urls: required: a stun:\/turn: URL or a non-empty list of them/],
      [{ username: 'u' }, /director\.iceServers\.0\.urls: required/],
      [{ urls: 'stun:s.example', URLs: 'stun:t.example' }, /director\.iceServers\.0\.URLs: given twice \(as urls and URLs\)/],
      [{ urls: 'stun:s.example', credentialType: 'password' }, /director\.iceServers\.0\.credentialType: unknown setting/],
      [{ urls: 'stun:s.example', username: 5 }, /director\.iceServers\.0\.username: expected a string/],
      ['stun:s.example', /director\.iceServers\.0: expected a mapping/],
    ];
    for (const [entry, message] of cases) {
      assert.throws(() => loadConfig({ env: {}, overrides: { director: { iceServers: [entry] } } }), message, JSON.stringify(entry));
    }
  });
});
