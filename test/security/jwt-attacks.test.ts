// Attacks on the JWTs Streamgate reads (self-signed subscribe tokens, docs/api.md#self-signed-subscribe-tokens) and issues (the
// director's ES256 connection JWTs, checked by MediaMTX against the JWKS): each forged, replayed,
// stale or oversized token is refused with the exact answer, by the generic hook, the director and
// auth-request alike.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, createLocalJWKSet, jwtVerify, generateKeyPair, type JWK } from 'jose';
import { signSubscribeJwt } from '../../src/policy/self-signed.js';
import { sqliteFactory } from '../helpers/stores.js';
import { ADMIN_KEY, testApp, type TestApp } from '../helpers/app.js';
import { listen, call, type Listening } from '../helpers/listen.js';
import { idChecked } from '../helpers/decision-id.js';

const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');
const nowS = () => Math.floor(Date.now() / 1000);

const INVALID = { reason: 'token_invalid', message: 'Unauthorized: Invalid token' };
const EXPIRED = { reason: 'token_expired', message: 'Unauthorized: Token expired' };

describe('security: JWT attacks', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  let http: Listening;
  let parent: { id: number; token: string };
  let publishTok: { id: number; token: string };
  let other: { id: number; token: string };
  let jwks: { keys: JWK[] };

  before(async () => {
    await factory.setup();
    t = await testApp(await factory.make());
    http = await listen(t.app);
    const a = await t.account('a');
    const b = await t.account('b');
    await call(http.base, 'PUT', `/admin/accounts/${a.id}`, { secret: ADMIN_KEY, body: { secureViewer: true } });
    const mk = async (secret: string, kind: string) =>
      (await call(http.base, 'POST', `/api/${kind}_token`, { secret, body: { label: 'p', streams: [{ streamName: 'cam1' }] } })).body.data;
    parent = await mk(a.secret, 'subscribe');
    publishTok = await mk(a.secret, 'publish');
    other = await mk(b.secret, 'subscribe'); // the attacker's own token, in another account
    jwks = (await call(http.base, 'GET', '/.well-known/jwks.json')).body;
  });
  after(async () => {
    await http.close();
    await factory.teardown();
  });

  const claims = (over: Record<string, unknown> = {}) => ({
    streaming: { tokenId: parent.id, tokenType: 'Subscribe', streamName: 'cam1', ...((over.streaming as object) ?? {}) },
    exp: nowS() + 600,
    ...Object.fromEntries(Object.entries(over).filter(([k]) => k !== 'streaming')),
  });
  const hs = (payload: object, key: string | Uint8Array, header: Record<string, unknown> = {}) =>
    new SignJWT(payload as never).setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...header }).sign(typeof key === 'string' ? new TextEncoder().encode(key) : key);

  /** The same credential through three doors; every one must give the expected refusal. */
  async function refusedEverywhere(jwt: string, expected: { reason: string; message: string }, what: string) {
    const viaHook = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: jwt, streamName: 'cam1', accountId: 'X' } });
    assert.deepEqual([viaHook.status, viaHook.body.allowed, viaHook.body.reason, viaHook.body.message], [401, false, expected.reason, expected.message], `${what}: /hooks/authorize`);
    const viaDirector = await call(http.base, 'POST', '/api/director/subscribe', { body: { streamName: 'cam1' }, headers: { authorization: `Bearer ${jwt}` } });
    assert.deepEqual([viaDirector.status, idChecked(viaDirector.body)], [401, { status: 'fail', data: expected }], `${what}: director`);
    const viaAuthRequest = await call(http.base, 'GET', '/hooks/auth-request', { headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${encodeURIComponent(jwt)}` } });
    assert.equal(viaAuthRequest.status, 401, `${what}: auth-request`);
  }

  it('a genuine self-signed JWT is admitted (the baseline the attacks alter)', async () => {
    const jwt = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 600 });
    const r = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: jwt, streamName: 'cam1' } });
    assert.deepEqual([r.status, r.body.reason, r.body.tokenId], [200, 'allowed', parent.id]);
  });

  it('alg none (empty or any signature) is refused', async () => {
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      const unsigned = `${b64({ alg, typ: 'JWT' })}.${b64(claims())}`;
      await refusedEverywhere(`${unsigned}.`, INVALID, `alg ${alg}, no signature`);
      await refusedEverywhere(`${unsigned}.${b64('sig')}`, INVALID, `alg ${alg}, junk signature`);
    }
    await refusedEverywhere(`${b64({ typ: 'JWT' })}.${b64(claims())}.`, INVALID, 'no alg');
  });

  it('alg confusion is refused: HS256 keyed with the director public key, RS256, ES256 on the HS path', async () => {
    const pub = jwks.keys[0];
    for (const key of [JSON.stringify(pub), pub.x!, `${pub.x}${pub.y}`]) await refusedEverywhere(await hs(claims(), key), INVALID, 'HS256 keyed with the public key');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rs256 = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256' }).sign(rsa.privateKey);
    await refusedEverywhere(rs256, INVALID, 'RS256 signed by the attacker');
    const ec = await generateKeyPair('ES256');
    const es256 = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: pub.kid }).sign(ec.privateKey);
    await refusedEverywhere(es256, INVALID, 'ES256 with the real kid, signed by the attacker');
    // an ES256 header over a genuine HS256 signature
    const genuine = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 600 });
    const [, body, sig] = genuine.split('.');
    await refusedEverywhere(`${b64({ alg: 'ES256', typ: 'JWT' })}.${body}.${sig}`, INVALID, 'header swapped to ES256');
    await refusedEverywhere(`${b64({ alg: 'HS512', typ: 'JWT' })}.${body}.${sig}`, INVALID, 'header swapped to HS512');
  });

  it('a director JWT (ES256, issued by Streamgate) is not a subscribe credential', async () => {
    const open = await call(http.base, 'POST', '/api/director/publish', { body: { streamName: 'cam1' }, headers: { authorization: `Bearer ${publishTok.token}` } });
    assert.equal(open.status, 200);
    await refusedEverywhere(open.body.data.jwt, INVALID, 'director publish JWT replayed');
    const sub = await call(http.base, 'POST', '/api/director/subscribe', { body: { streamName: 'cam1' }, headers: { authorization: `Bearer ${parent.token}` } });
    assert.equal(sub.status, 200);
    await refusedEverywhere(sub.body.data.jwt, INVALID, 'director subscribe JWT replayed');
  });

  it('the JWKS pins ES256 and publishes no private member; forgeries fail a JWKS verifier (as MediaMTX checks)', async () => {
    for (const k of jwks.keys) {
      assert.deepEqual(Object.keys(k).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      assert.deepEqual([k.alg, k.kty, k.crv, k.use], ['ES256', 'EC', 'P-256', 'sig']);
    }
    const set = createLocalJWKSet(jwks);
    const sub = await call(http.base, 'POST', '/api/director/subscribe', { body: { streamName: 'cam1' }, headers: { authorization: `Bearer ${parent.token}` } });
    const { protectedHeader } = await jwtVerify(sub.body.data.jwt, set, { issuer: 'streamgate' });
    assert.equal(protectedHeader.alg, 'ES256');
    const forged = [
      await hs({ sub: 'x' }, JSON.stringify(jwks.keys[0]), { kid: jwks.keys[0].kid }),
      `${b64({ alg: 'none', kid: jwks.keys[0].kid })}.${b64({ sub: 'x', iss: 'streamgate' })}.`,
      await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: '../../etc/passwd' }).sign((await generateKeyPair('ES256')).privateKey),
    ];
    for (const f of forged) await assert.rejects(jwtVerify(f, set, { issuer: 'streamgate' }));
  });

  it('kid injection selects nothing: forged signatures with path-traversal, SQL-ish or unknown kids are refused', async () => {
    const kids = ['../../../../etc/passwd', '/dev/null', "' OR '1'='1", '1; DROP TABLE tokens; --', 'unknown-kid', '', '\u0000', 'x'.repeat(4000)];
    for (const kid of kids) {
      for (const key of ['0', 'null', String(parent.id), '/dev/null', other.token]) {
        await refusedEverywhere(await hs(claims(), key, { kid }), INVALID, `kid ${JSON.stringify(kid.slice(0, 20))}, key ${JSON.stringify(key.slice(0, 10))}`);
      }
    }
    // The key is always the parent named by streaming.tokenId: a kid cannot point elsewhere, so a
    // genuine signature decides alone whatever the kid says.
    const genuine = await hs(claims(), parent.token, { kid: '../../../../etc/passwd' });
    const r = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: genuine, streamName: 'cam1' } });
    assert.equal(r.status, 200);
  });

  it('a JWT signed with another account\'s token, or naming a publish token as parent, is refused', async () => {
    await refusedEverywhere(await hs(claims(), other.token), INVALID, 'signed with the attacker\'s own token value');
    await refusedEverywhere(await hs(claims({ streaming: { tokenId: publishTok.id } }), publishTok.token), INVALID, 'parent is a publish token');
    await refusedEverywhere(await hs(claims({ streaming: { tokenType: 'Publish' } }), parent.token), INVALID, 'tokenType Publish');
    await refusedEverywhere(await hs(claims({ streaming: { tokenId: 999999 } }), parent.token), INVALID, 'unknown parent id');
  });

  it('expired, not yet valid, issued in the future or without exp: refused (30 s tolerance honoured)', async () => {
    await refusedEverywhere(await hs(claims({ exp: nowS() - 31 }), parent.token), EXPIRED, 'expired 31 s ago');
    await refusedEverywhere(await hs(claims({ exp: nowS() - 3600 }), parent.token), EXPIRED, 'expired an hour ago');
    await refusedEverywhere(await hs(claims({ nbf: nowS() + 60 }), parent.token), INVALID, 'nbf a minute ahead');
    await refusedEverywhere(await hs(claims({ iat: nowS() + 3600 }), parent.token), INVALID, 'iat an hour ahead');
    const noExp = claims();
    delete (noExp as { exp?: number }).exp;
    await refusedEverywhere(await hs(noExp, parent.token), INVALID, 'no exp');
    await refusedEverywhere(await hs(claims({ exp: '9999999999' }), parent.token), INVALID, 'exp as a string');
    for (const over of [{ exp: nowS() - 20 }, { nbf: nowS() + 20 }]) {
      const r = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: await hs(claims(over), parent.token), streamName: 'cam1' } });
      assert.equal(r.status, 200, `within the tolerance: ${JSON.stringify(over)}`);
    }
  });

  it('malformed base64 and non-JSON segments are refused', async () => {
    const genuine = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 600 });
    const [h, p, s] = genuine.split('.');
    const bad = [
      `${h}.!!!.${s}`,
      `${h}.${p}=.${s}`,
      `${h}.${p}.${s}!`,
      `eyJub3QganNvbg.${p}.${s}`,
      `${h}.${b64('not json')}.${s}`,
      `${h}.${p}`,
      `${h}.${p}.${s}.${s}`,
      `${h}.${p.slice(0, -3)}.${s}`,
      `${h}..${s}`,
      `${b64('[]')}.${p}.${s}`,
      `${h}.${b64('null')}.${s}`,
      `${h}.${b64({ streaming: null, exp: nowS() + 60 })}.${s}`,
    ];
    for (const jwt of bad) await refusedEverywhere(jwt, INVALID, `malformed ${jwt.slice(0, 40)}`);
  });

  it('huge tokens are refused without being processed: exact answers for 9 KB, 53 KB and 1 MB', async () => {
    const genuine = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', expiresInSeconds: 600, customViewerData: 'x'.repeat(1000) });
    const big = await hs(claims({ pad: 'x'.repeat(9000) }), parent.token);
    assert.ok(big.length > 8192 && genuine.length < 8192);
    // over the 8192-character token limit: the director refuses it as invalid
    const d = await call(http.base, 'POST', '/api/director/subscribe', { body: { streamName: 'cam1' }, headers: { authorization: `Bearer ${big}` } });
    assert.deepEqual([d.status, idChecked(d.body)], [401, { status: 'fail', data: INVALID }]);
    // the JSON hook names the field
    const h = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: big, streamName: 'cam1' } });
    assert.deepEqual([h.status, h.body.allowed, h.body.reason, Object.keys(h.body.errors)], [400, false, 'bad_request', ['token']]);
    const sixty = await hs(claims({ pad: 'x'.repeat(40000) }), parent.token); // ~53 KB: under the body limit
    assert.ok(sixty.length > 50000 && sixty.length < 60000);
    const h60 = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: sixty, streamName: 'cam1' } });
    assert.deepEqual([h60.status, h60.body.reason], [400, 'bad_request']);
    const mega = await hs(claims({ pad: 'x'.repeat(1 << 20) }), parent.token);
    const h1m = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: mega, streamName: 'cam1' } });
    assert.deepEqual([h1m.status, h1m.body], [413, { status: 'fail', data: { message: 'Request body larger than 65536 bytes' } }]);
    // 1 MB in a header never reaches Streamgate's code: Node's header limit answers 431
    const d1m = await fetch(`${http.base}/api/director/subscribe`, { method: 'POST', headers: { authorization: `Bearer ${mega}`, 'content-type': 'application/json' }, body: '{"streamName":"cam1"}' });
    assert.equal(d1m.status, 431);
    const stillFine = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: genuine, streamName: 'cam1' } });
    assert.equal(stillFine.status, 200, 'and the service keeps deciding');
  });
});
