// Credential issuers' JWTs on the decision path (docs/api.md#credential-issuers): an issuer's JWT
// is decided by its policy token's rules, narrowed by its claims; disabling or deleting the issuer or
// its policy token, or revoking an id, refuses it at once, a verified (remembered) JWT included.
// JWTs are signed with jose and livekit-server-sdk, never with Streamgate's own code.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { AccessToken } from 'livekit-server-sdk';
import { hookFixture, type HookFixture } from './fixture.js';
import { keyPair, newIssuer, sign, type TestKey } from '../helpers/issuers.js';
import type { NewIssuer } from '../../src/store/store.js';
import type { IssuerRecord } from '../../src/domain/issuers.js';

const PATTERNS = [
  { pattern: '^/whip/(?<stream>[^/]+)$', action: 'publish', methods: ['POST'] },
  { pattern: '^/whip/(?<stream>[^/]+)/[^/]+$', action: 'publish', methods: ['PATCH', 'DELETE'], resource: true },
  '^/hls/(?<stream>[^/]+)/',
];

const nowS = () => Math.floor(Date.now() / 1000);


describe('issuer JWTs decided by their policy token', () => {
  let f: HookFixture;
  let mux: TestKey;
  let policy: { id: number; token: string };
  let issuer: IssuerRecord;
  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], accountInPath: false, authRequest: { streamPatterns: PATTERNS, action: 'subscribe', methodFrom: 'x-original-method' } },
      enforcement: { defaultAccountId: '' },
    });
    mux = await keyPair('RS256', 'mux-key-1');
    policy = await f.token('subscribe', { streams: [{ streamName: 'cam1' }, { streamName: 'cam2' }] });
    issuer = await f.t.services.store.createIssuer(f.acct.id, newIssuer({ policyTokenId: policy.id, keyIds: ['mux-key-1'], audience: ['v'], jwks: { keys: [mux.jwk] } }));
  });
  after(() => f.close());

  /** A Mux-shaped playback JWT: kid in the payload, sub the playback id, aud v, no iss. */
  const muxJwt = (sub: string, over: Record<string, unknown> = {}) => sign(mux, { sub, aud: 'v', kid: 'mux-key-1', exp: nowS() + 600, ...over });
  const nginx = (method: string, uri: string, jwt?: string) =>
    request(f.t.app)
      .get('/hooks/auth-request')
      .set({ 'x-original-uri': uri, 'x-original-method': method, 'x-forwarded-for': '203.0.113.7', ...(jwt ? { authorization: `Bearer ${jwt}` } : {}) });
  const hls = async (jwt: string, stream = 'cam1') => {
    const r = await nginx('GET', `/hls/${stream}/index.m3u8`, jwt);
    return [r.status, r.status === 200 ? r.headers['x-streamgate-token-id'] : r.body.reason];
  };
  const update = async (patch: Partial<NewIssuer>) => {
    issuer = (await f.t.services.store.updateIssuer(f.acct.id, issuer.id, patch))!;
  };

  it('allows what both the credential and the policy token allow, as the policy token', async () => {
    assert.deepEqual(await hls(await muxJwt('cam1')), [200, String(policy.id)]);
    // the credential names cam1: cam2 is refused although the policy token allows it
    assert.deepEqual(await hls(await muxJwt('cam1'), 'cam2'), [403, 'stream_not_allowed']);
    // a credential never widens: the policy token does not allow cam9
    assert.deepEqual(await hls(await muxJwt('cam9'), 'cam9'), [403, 'stream_not_allowed']);
    // a subscribe policy token's credentials cannot publish
    const pub = await nginx('POST', '/whip/cam1', await muxJwt('cam1'));
    assert.deepEqual([pub.status, pub.body.reason], [401, 'token_invalid']);
  });

  it('refuses an expired JWT as expired, and a forged or unclaimed one as invalid', async () => {
    assert.deepEqual(await hls(await muxJwt('cam1', { exp: nowS() - 1 })), [401, 'token_expired']);
    const other = await keyPair('RS256', 'mux-key-1');
    assert.deepEqual(await hls(await sign(other, { sub: 'cam1', aud: 'v', kid: 'mux-key-1', exp: nowS() + 600 })), [401, 'token_invalid']);
    assert.deepEqual(await hls(await sign(mux, { sub: 'cam1', aud: 'v', kid: 'unknown-key', exp: nowS() + 600 })), [401, 'token_invalid']);
    assert.deepEqual(await hls(await sign(mux, { iss: 'https://nobody.example', sub: 'cam1', aud: 'v', kid: 'mux-key-1', exp: nowS() + 600 })), [401, 'token_invalid']);
  });

  it('revoking an id, disabling the issuer or its policy token refuses a remembered JWT at once', async () => {
    const jwt = await muxJwt('cam1', { jti: 'viewer-42' });
    assert.deepEqual(await hls(jwt), [200, String(policy.id)]);
    await update({ revoked: { jti: ['viewer-42'], sub: [], kid: [] } });
    assert.deepEqual(await hls(jwt), [401, 'token_invalid']);
    await update({ revoked: { jti: [], sub: [], kid: [] } });
    assert.deepEqual(await hls(jwt), [200, String(policy.id)]);
    await update({ isActive: false });
    assert.deepEqual(await hls(jwt), [401, 'token_disabled']);
    await update({ isActive: true });
    assert.equal((await f.api('put', `/api/subscribe_token/${policy.id}`, { isActive: false })).status, 200);
    assert.deepEqual(await hls(jwt), [401, 'token_disabled']);
    assert.equal((await f.api('put', `/api/subscribe_token/${policy.id}`, { isActive: true })).status, 200);
    assert.deepEqual(await hls(jwt), [200, String(policy.id)]);
  });

  it('the decision ends no later than the credential: expiresOn is its exp when the policy token lives longer', async () => {
    const exp = nowS() + 120;
    const d = await f.t.services.enforcer.admit({ action: 'subscribe', streamName: 'cam1', token: await muxJwt('cam1', { exp }), protocol: 'hls' }, 'store', 'test');
    assert.deepEqual([d.allowed, d.tokenId, d.issuerId, d.expiresOn], [true, policy.id, issuer.id, new Date(exp * 1000).toISOString()]);
  });

  it('MediaMTX: the JWT in the token field of its auth request', async () => {
    const auth = (token: string, path: string) =>
      request(f.t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token, action: 'read', path, protocol: 'hls', id: null, query: '' });
    assert.equal((await auth(await muxJwt('cam1'), 'cam1')).status, 200);
    assert.equal((await auth(await muxJwt('cam1'), 'cam2')).status, 403);
    // an HLS URL's legacy ?jwt= (authJWTInHTTPQuery): MediaMTX sends no token, only the query
    const legacy = await request(f.t.app)
      .post('/hooks/mediamtx/auth')
      .send({ ip: '203.0.113.7', user: '', password: '', token: '', action: 'read', path: 'cam1', protocol: 'hls', id: null, query: `jwt=${await muxJwt('cam1')}` });
    assert.equal(legacy.status, 200);
  });

  it("the check endpoint explains one of the issuer's JWTs rule by rule, naming the claim that decided", async () => {
    const check = (body: object, id = issuer.id) => f.api('post', `/api/issuers/${id}/check`, body);
    const jwt = await muxJwt('cam1');
    const ok = await check({ jwt, streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'hls' });
    assert.equal(ok.status, 200);
    assert.deepEqual([ok.body.data.allowed, ok.body.data.reason], [true, 'allowed']);
    const rule = (r: { body: { data: { rules: Array<{ rule: string; result: string; detail?: string }> } } }, name: string) => r.body.data.rules.find((x) => x.rule === name);
    assert.deepEqual(rule(ok, 'token valid'), { rule: 'token valid', reason: 'token_invalid', result: 'pass', detail: `verified by issuer ${issuer.id} (idp) with key mux-key-1; policy token ${policy.id}` });
    assert.equal(rule(ok, 'stream name allowed')?.detail, "claim sub allows it, and so do the policy token's streams");
    const other = await check({ jwt, streamName: 'cam2' });
    assert.deepEqual([other.body.data.allowed, other.body.data.reason, rule(other, 'stream name allowed')?.detail], [false, 'stream_not_allowed', "claim sub names stream 'cam1'"]);
    const publish = await check({ jwt, streamName: 'cam1', action: 'publish' });
    assert.equal(rule(publish, 'token valid')?.detail, `issuer ${issuer.id}'s policy token ${policy.id} is a subscribe token: its credentials cannot publish`);
    // a JWT this issuer does not claim is a 400, explained by nobody
    const stranger = await check({ jwt: await sign(mux, { iss: 'https://elsewhere.example', sub: 'cam1', exp: nowS() + 60 }), streamName: 'cam1' });
    assert.equal(stranger.status, 400);
    assert.match(JSON.stringify(stranger.body), /jwt.*its iss and kid are not this issuer's/);
    assert.equal((await check({ jwt: 'not-a-jwt', streamName: 'cam1' })).status, 400);
    assert.equal((await check({ jwt, streamName: 'cam1' }, 999_999)).status, 404);
  });

  it('a deleted policy token or issuer leaves its JWTs unclaimed', async () => {
    const gone = await f.token('subscribe', { streams: [{ streamName: 'cam5' }] });
    const key = await keyPair('ES256', 'gone-1');
    const gi = await f.t.services.store.createIssuer(f.acct.id, newIssuer({ policyTokenId: gone.id, issuer: 'https://gone.example', algorithms: ['ES256'], jwks: { keys: [key.jwk] } }));
    const jwt = await sign(key, { iss: 'https://gone.example', sub: 'cam5', exp: nowS() + 60 }, { kid: 'gone-1' });
    assert.deepEqual(await hls(jwt, 'cam5'), [200, String(gone.id)]);
    assert.equal((await f.api('delete', `/api/subscribe_token/${gone.id}`)).status, 200);
    assert.deepEqual(await hls(jwt, 'cam5'), [401, 'token_invalid']);
    assert.equal(await f.t.services.store.deleteIssuer(f.acct.id, gi.id), true);
    assert.deepEqual(await hls(jwt, 'cam5'), [401, 'token_invalid']);
  });
});

describe('issuer JWTs: LiveKit grants and the account in the path', () => {
  let f: HookFixture;
  let policy: { id: number; token: string };
  const SECRET = 'livekit-api-secret-of-32-characters!';
  before(async () => {
    f = await hookFixture({
      hooks: {
        secret: '',
        trustedProxies: ['127.0.0.1'],
        accountInPath: true,
        authRequest: {
          streamPatterns: [{ pattern: '^/whip/(?<account>[^/]+)/(?<stream>[^/]+)$', action: 'publish', methods: ['POST'] }, '^/hls/(?<account>[^/]+)/(?<stream>[^/]+)/'],
          action: 'subscribe',
          methodFrom: 'x-original-method',
        },
      },
      enforcement: { defaultAccountId: '' },
    });
    policy = await f.token('publish', { streams: [{ streamName: 'room[0-9]*', isRegex: true }] });
    await f.t.services.store.createIssuer(
      f.acct.id,
      newIssuer({
        policyTokenId: policy.id,
        issuer: 'APIkeyStreamgate',
        algorithms: ['HS256'],
        secret: SECRET,
        clockSkewSeconds: 10,
        claims: { stream: 'video.room', canPublish: 'video.canPublish', canSubscribe: 'video.canSubscribe', viewerId: 'sub' },
      }),
    );
  });
  after(() => f.close());

  const livekit = (room: string, canPublish: boolean) => {
    const at = new AccessToken('APIkeyStreamgate', SECRET, { identity: 'cam-operator', ttl: 600 });
    at.addGrant({ roomJoin: true, room, canPublish, canSubscribe: false });
    return at.toJwt();
  };
  const whip = async (account: string, stream: string, jwt: string) => {
    const r = await request(f.t.app)
      .get('/hooks/auth-request')
      .set({ 'x-original-uri': `/whip/${account}/${stream}`, 'x-original-method': 'POST', 'x-forwarded-for': '203.0.113.7', authorization: `Bearer ${jwt}` });
    return [r.status, r.status === 200 ? r.headers['x-streamgate-token-id'] : r.body.reason];
  };

  it('canPublish true publishes the room the grant names; false or another room does not', async () => {
    assert.deepEqual(await whip(f.acct.id, 'room', await livekit('room', true)), [200, String(policy.id)]);
    assert.deepEqual(await whip(f.acct.id, 'room', await livekit('room', false)), [401, 'token_invalid']);
    assert.deepEqual(await whip(f.acct.id, 'room2', await livekit('room', true)), [403, 'stream_not_allowed']);
  });

  it("a credential in the cookie the account's issuer names; other cookies are not credentials", async () => {
    const viewerPolicy = await f.token('subscribe', { streams: [{ streamName: 'show' }] });
    const key = await keyPair('ES256', 'web-1');
    await f.t.services.store.createIssuer(
      f.acct.id,
      newIssuer({ policyTokenId: viewerPolicy.id, issuer: 'https://login.example', algorithms: ['ES256'], jwks: { keys: [key.jwk] }, cookieName: 'login_session' }),
    );
    const jwt = await sign(key, { iss: 'https://login.example', sub: 'show', exp: nowS() + 600 }, { kid: 'web-1' });
    const hls = async (account: string, cookie: string) => {
      const r = await request(f.t.app)
        .get('/hooks/auth-request')
        .set({ 'x-original-uri': `/hls/${account}/show/index.m3u8`, 'x-original-method': 'GET', 'x-forwarded-for': '203.0.113.7', cookie });
      return [r.status, r.status === 200 ? r.headers['x-streamgate-token-id'] : r.body.reason];
    };
    assert.deepEqual(await hls(f.acct.id, `theme=dark; login_session=${jwt}`), [200, String(viewerPolicy.id)]);
    // a cookie no issuer names is no credential: the open stream is served token-less (no token id)
    assert.deepEqual(await hls(f.acct.id, `other_session=${jwt}`), [200, undefined]);
    // another account's path reads its own issuers' cookie names: none, so no credential
    const other = await f.t.account();
    assert.deepEqual(await hls(other.id, `login_session=${jwt}`), [200, undefined]);
  });

  it("with accountInPath, another account's path is refused", async () => {
    const other = await f.t.account();
    assert.notEqual(other.id, f.acct.id);
    assert.deepEqual(await whip(other.id, 'room', await livekit('room', true)), [403, 'stream_not_allowed']);
  });
});

describe('issuer JWTs with HTTP viewer sessions', () => {
  let f: HookFixture;
  let key: TestKey;
  let policy: { id: number; token: string };
  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], accountInPath: false },
      enforcement: { defaultAccountId: '' },
      sessions: { http: { secret: 'viewer-credential-secret-0123456789abcdef' } },
    });
    key = await keyPair('ES256', 'es-1');
    policy = await f.token('subscribe', { streams: [{ streamName: 'cam1' }], maxConcurrentSessions: 2 });
    await f.t.services.store.createIssuer(f.acct.id, newIssuer({ policyTokenId: policy.id, issuer: 'https://idp.example', algorithms: ['ES256'], jwks: { keys: [key.jwk] } }));
  });
  after(() => f.close());

  const get = (uri: string, jwt: string, ip = '203.0.113.7') =>
    request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-original-method': 'GET', 'x-forwarded-for': ip, authorization: `Bearer ${jwt}` });

  it('each request is decided in full and no credential is given; the same JWT and address is one viewer session', async () => {
    const jwt = await sign(key, { iss: 'https://idp.example', sub: 'cam1', exp: nowS() + 600 }, { kid: 'es-1' });
    for (const uri of ['/hls/cam1/index.m3u8', '/hls/cam1/seg-1.ts', '/hls/cam1/seg-2.ts', '/hls/cam1/seg-3.ts']) {
      const r = await get(uri, jwt);
      assert.deepEqual([r.status, r.headers['x-streamgate-token-id'], r.headers['set-cookie']], [200, String(policy.id), undefined], uri);
    }
    const live = await f.t.services.store.listSessions(f.acct.id, { tokenId: policy.id }, { offset: 0, limit: 10 });
    assert.equal(live.total, 1);
    // the policy token's session limit counts viewers: a second one is admitted, a third is not
    assert.equal((await get('/hls/cam1/index.m3u8', jwt, '203.0.113.8')).status, 200);
    const third = await get('/hls/cam1/index.m3u8', jwt, '203.0.113.9');
    assert.deepEqual([third.status, third.body.reason], [403, 'session_limit']);
  });
});

describe('issuer JWTs: nginx-rtmp re-asks after an issuer change', () => {
  const SESSION = 'app=live&flashver=FMLE%2F3.0&swfurl=&tcurl=rtmp%3A%2F%2Fhost%3A1935%2Flive&pageurl=&addr=203.0.113.7';
  let f: HookFixture;
  let key: TestKey;
  let issuer: IssuerRecord;
  before(async () => {
    f = await hookFixture({ enforcement: { terminateOn: ['disable', 'refresh'] } });
    key = await keyPair('ES384', 'ivs-1');
    const policy = await f.token('publish', { streams: [{ streamName: 'cam[0-9]+', isRegex: true }] });
    issuer = await f.t.services.store.createIssuer(f.acct.id, newIssuer({ policyTokenId: policy.id, algorithms: ['ES384'], jwks: { keys: [key.jwk] } }));
  });
  after(() => f.close());

  const post = (body: string) => request(f.t.app).post('/hooks/nginx-rtmp').set('content-type', 'application/x-www-form-urlencoded').send(body);
  const publisher = async (clientid: number, stream: string, jti: string) =>
    `${SESSION}&clientid=${clientid}&name=${stream}&token=${await sign(key, { sub: stream, jti, exp: nowS() + 600 }, { kid: 'ivs-1' })}`;

  it('a revoked jti ends its session at the next on_update (refresh); disabling the issuer ends the others (disable)', async () => {
    const a = await publisher(1, 'cam1', 'jti-a');
    const b = await publisher(2, 'cam2', 'jti-b');
    const first = await post(`${a}&call=publish&type=live`);
    assert.equal(first.status, 200, first.text);
    assert.equal((await post(`${b}&call=publish&type=live`)).status, 200);
    await f.settle();
    assert.equal((await f.t.services.store.listSessions(f.acct.id, { action: 'publish' }, { offset: 0, limit: 10 })).total, 2);
    assert.equal((await post(`${a}&call=update_publish&time=30`)).status, 200);
    issuer = (await f.t.services.store.updateIssuer(f.acct.id, issuer.id, { revoked: { jti: ['jti-a'], sub: [], kid: [] } }))!;
    assert.equal((await post(`${a}&call=update_publish&time=60`)).status, 403, 'revoked: cut');
    assert.equal((await post(`${b}&call=update_publish&time=60`)).status, 200, 'the other credential streams on');
    await f.t.services.store.updateIssuer(f.acct.id, issuer.id, { isActive: false });
    assert.equal((await post(`${b}&call=update_publish&time=90`)).status, 403, 'issuer disabled: cut');
    await f.settle();
    assert.equal((await f.t.services.store.listSessions(f.acct.id, { action: 'publish' }, { offset: 0, limit: 10 })).total, 0, 'both ended');
    const ended = f.events.flatMap((e) => (e.type === 'feeds' && e.event === 'ended' ? [[e.data.name, e.data.reason]] : []));
    assert.deepEqual(ended, [
      ['cam1', 'token_revoked'],
      ['cam2', 'token_revoked'],
    ]);
  });
});
