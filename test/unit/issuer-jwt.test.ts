// Issuer JWTs (docs/api.md#credential-issuers) shaped like each vendor's, signed with jose (and a
// LiveKit token made by livekit-server-sdk): the selector, the verified credential read through
// the claim map, every refusal with its reason, the MediaMTX permissions form, the narrowing check
// and the memo. Keys are inline JWKs through IssuerKeys; no socket, no real time.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AccessToken } from 'livekit-server-sdk';
import { SignJWT, type JWK } from 'jose';
import {
  IssuerJwtMemo,
  credentialProblem,
  peekIssuerJwt,
  verifyIssuerJwt,
  type IssuerCredential,
  type IssuerKeySource,
} from '../../src/policy/issuer-jwt.js';
import { IssuerKeys } from '../../src/enforce/issuer-keys.js';
import type { IssuerRecord } from '../../src/domain/issuers.js';
import { KEY_OPTIONS, fixedKeys, issuerRecord, keyPair, sign, type TestKey } from '../helpers/issuers.js';

const NOW = 1_800_000_000;
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const unsigned = (header: object, payload: object) => `${b64(header)}.${b64(payload)}.c2ln`;

/** Inline keys only: a fetch would be a bug here. */
const inlineKeys = (): IssuerKeys =>
  new IssuerKeys({
    ...KEY_OPTIONS,
    fetch: () => Promise.reject(new Error('no fetch in this test')),
  });

// LiveKit's fixed vector: key APIkey123, identity alice, name Alice, ttl 3600 at 1700000000,
// grant { roomJoin, room: room1, canPublish: false, canSubscribe: true }.
const LIVEKIT_SECRET = 'secret-secret-secret-secret-secret';
const LIVEKIT_VECTOR =
  'eyJhbGciOiJIUzI1NiJ9.eyJuYW1lIjoiQWxpY2UiLCJ2aWRlbyI6eyJyb29tSm9pbiI6dHJ1ZSwicm9vbSI6InJvb20xIiwiY2FuUHVibGlzaCI6ZmFsc2UsImNhblN1YnNjcmliZSI6dHJ1ZX0sImlzcyI6IkFQSWtleTEyMyIsImV4cCI6MTcwMDAwMzYwMCwibmJmIjoxNzAwMDAwMDAwLCJzdWIiOiJhbGljZSJ9.Mn6uE_hKYbvitYbdrvHqKBM5TGq25M46NSPQWopBdkg';
const livekit = issuerRecord({
  issuer: 'APIkey123',
  algorithms: ['HS256'],
  secret: LIVEKIT_SECRET,
  clockSkewSeconds: 10,
  claims: { stream: 'video.room', canPublish: 'video.canPublish', canSubscribe: 'video.canSubscribe', viewerId: 'sub' },
});

let mux: TestKey;
let ivs: TestKey;
let cf: TestKey;
let other: TestKey;

before(async () => {
  [mux, ivs, cf, other] = await Promise.all([keyPair('RS256', 'mux-key-1'), keyPair('ES384', 'ivs-1'), keyPair('RS256', 'cf-key-1'), keyPair('RS256', 'mux-key-1')]);
});

const muxIssuer = (over: Partial<IssuerRecord> = {}) => issuerRecord({ keyIds: ['mux-key-1'], audience: ['v'], jwks: { keys: [mux.jwk] }, ...over });
const muxPayload = (over: Record<string, unknown> = {}) => ({ sub: 'playback-abc', aud: 'v', exp: NOW + 600, kid: 'mux-key-1', ...over });

async function verified(value: string, issuer: IssuerRecord, keys: IssuerKeySource = inlineKeys(), now = NOW): Promise<IssuerCredential> {
  const r = await verifyIssuerJwt(value, issuer, keys, now);
  assert.ok(!('problem' in r), `refused: ${'problem' in r ? r.problem : ''}`);
  return r;
}

async function refused(value: string, issuer: IssuerRecord, problem: string, keys: IssuerKeySource = inlineKeys(), now = NOW): Promise<void> {
  assert.deepEqual(await verifyIssuerJwt(value, issuer, keys, now), { problem });
}

describe('issuer JWT: peekIssuerJwt', () => {
  const cases: Array<[string, string, ReturnType<typeof peekIssuerJwt>]> = [
    ['header kid', unsigned({ alg: 'RS256', kid: 'k1' }, { iss: 'https://idp.example', exp: 1 }), { iss: 'https://idp.example', kid: 'k1' }],
    ['payload kid (Mux)', unsigned({ alg: 'RS256' }, { kid: 'k2', sub: 'p' }), { iss: null, kid: 'k2' }],
    ['the same kid in both (Cloudflare)', unsigned({ alg: 'RS256', kid: 'k3' }, { kid: 'k3' }), { iss: null, kid: 'k3' }],
    ['neither', unsigned({ alg: 'ES384' }, { exp: 1 }), { iss: null, kid: null }],
    ['kids that differ', unsigned({ alg: 'RS256', kid: 'a' }, { kid: 'b' }), { problem: 'the header kid and the payload kid differ' }],
    ['a kid that is not a string', unsigned({ alg: 'RS256', kid: { $ne: 1 } }, {}), { problem: 'the header kid is not a non-empty string' }],
    ['a kid of 257 characters', unsigned({ alg: 'RS256' }, { kid: 'k'.repeat(257) }), { problem: 'the payload kid is longer than 256 characters' }],
    ['an iss that is not a string', unsigned({ alg: 'RS256' }, { iss: 7 }), { problem: 'iss is not a non-empty string' }],
    ['a payload that is not JSON', `${b64({ alg: 'RS256' })}.bm90IGpzb24.c2ln`, { problem: 'not a decodable JWT' }],
    ['a self-signed token (a streaming claim)', unsigned({ alg: 'HS256' }, { streaming: { tokenId: 1 } }), { problem: 'a self-signed token (it has a streaming claim), not an issuer JWT' }],
    ['two segments', `${b64({ alg: 'RS256' })}.${b64({})}`, { problem: 'not a signed JWT of at most 8192 characters' }],
    ['over 8192 characters', unsigned({ alg: 'RS256' }, { pad: 'x'.repeat(8192) }), { problem: 'not a signed JWT of at most 8192 characters' }],
  ];
  for (const [name, value, expected] of cases) {
    it(name, () => assert.deepEqual(peekIssuerJwt(value), expected));
  }
});

describe('issuer JWT: vendors', () => {
  it('Mux: RS256, kid in the payload, sub the playback id, aud v, no iss', async () => {
    const jwt = await sign(mux, muxPayload(), { typ: 'JWT' });
    assert.deepEqual(peekIssuerJwt(jwt), { iss: null, kid: 'mux-key-1' });
    assert.deepEqual(await verified(jwt, muxIssuer()), { issuerId: 3, stream: 'playback-abc', sub: 'playback-abc', exp: NOW + 600, kid: 'mux-key-1' });
    await refused(await sign(mux, muxPayload({ aud: 't' })), muxIssuer(), 'aud is not one the issuer accepts');
    await refused(await sign(mux, muxPayload({ aud: undefined })), muxIssuer(), 'aud is required');
    // Another key published under the same kid does not verify it.
    await refused(await sign(other, muxPayload()), muxIssuer(), 'the signature does not verify');
  });

  it('AWS IVS: ES384, the channel ARN as the stream, the viewer id', async () => {
    const arn = 'arn:aws:ivs:us-west-2:123456789012:channel/AbCdEf';
    const payload = { 'aws:channel-arn': arn, 'aws:viewer-id': 'viewer-9', 'aws:single-use-uuid': '6a1a3f0e-0000-4000-8000-000000000001', exp: NOW + 300 };
    const issuer = issuerRecord({ algorithms: ['ES384'], jwks: { keys: [{ ...ivs.jwk, kid: undefined }] }, claims: { stream: 'aws:channel-arn', viewerId: 'aws:viewer-id' } });
    assert.deepEqual(await verified(await sign(ivs, payload), issuer), { issuerId: 3, stream: arn, viewerId: 'viewer-9', exp: NOW + 300 });
    // The curve is the algorithm's: an ES384 key never verifies ES256.
    await refused(await sign(ivs, payload), issuerRecord({ algorithms: ['ES256'], jwks: issuer.jwks, claims: issuer.claims }), 'algorithm ES384 is not one the issuer allows (ES256)');
  });

  it('Cloudflare Stream: RS256, kid in header and payload, sub the video uid, nbf', async () => {
    const issuer = issuerRecord({ keyIds: ['cf-key-1'], jwks: { keys: [cf.jwk] } });
    const payload = { sub: 'ea95132c15732412d22c1476fa83f27a', kid: 'cf-key-1', exp: NOW + 3600, nbf: NOW - 5, accessRules: [{ type: 'any', action: 'allow' }] };
    assert.deepEqual(await verified(await sign(cf, payload, { kid: 'cf-key-1' }), issuer), {
      issuerId: 3,
      stream: 'ea95132c15732412d22c1476fa83f27a',
      sub: 'ea95132c15732412d22c1476fa83f27a',
      exp: NOW + 3600,
      nbf: NOW - 5,
      kid: 'cf-key-1',
    });
    await refused(await sign(cf, { ...payload, nbf: NOW + 1 }, { kid: 'cf-key-1' }), issuer, 'the JWT is not valid yet (nbf)');
  });

  it('LiveKit: the fixed vector verifies with the API secret; room, grants and identity read', async () => {
    assert.deepEqual(peekIssuerJwt(LIVEKIT_VECTOR), { iss: 'APIkey123', kid: null });
    const cred = await verified(LIVEKIT_VECTOR, livekit, inlineKeys(), 1700000000);
    assert.deepEqual(cred, { issuerId: 3, stream: 'room1', sub: 'alice', viewerId: 'alice', canPublish: false, canSubscribe: true, exp: 1700003600, nbf: 1700000000 });
    assert.equal(credentialProblem(cred, livekit, { streamName: 'room1', action: 'subscribe' }), null);
    assert.equal(credentialProblem(cred, livekit, { streamName: 'room1', action: 'publish' }), 'claim video.canPublish is not true: the credential may not publish');
    assert.equal(credentialProblem(cred, livekit, { streamName: 'room2', action: 'subscribe' }), "claim video.room names stream 'room1'");
    // Its 10 s skew: valid up to 9 s past exp, expired at 10 s.
    assert.equal('problem' in (await verifyIssuerJwt(LIVEKIT_VECTOR, livekit, inlineKeys(), 1700003609)), false);
    assert.deepEqual(await verifyIssuerJwt(LIVEKIT_VECTOR, livekit, inlineKeys(), 1700003610), { problem: 'the JWT has expired', expired: true });
    await refused(LIVEKIT_VECTOR, { ...livekit, secret: 'secret-secret-secret-secret-other!' }, 'the signature does not verify', inlineKeys(), 1700000000);
  });

  it('LiveKit: livekit-server-sdk at 1700000000 makes exactly the vector', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_000 });
    const at = new AccessToken('APIkey123', LIVEKIT_SECRET, { identity: 'alice', name: 'Alice', ttl: 3600 });
    at.addGrant({ roomJoin: true, room: 'room1', canPublish: false, canSubscribe: true });
    const jwt = await at.toJwt();
    t.mock.timers.reset();
    assert.equal(jwt, LIVEKIT_VECTOR);
  });

  it('HS256 with the issuer secret; a JWT of another secret is refused', async () => {
    const issuer = issuerRecord({ issuer: 'https://auth.example', algorithms: ['HS256'], secret: 's'.repeat(32), claims: { stream: 'stream', action: 'act' } });
    const hs = (secret: string, payload: Record<string, unknown>) => new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
    const payload = { iss: 'https://auth.example', stream: 'cam1', act: 'read', exp: NOW + 60, iat: NOW, jti: 'j-1' };
    assert.deepEqual(await verified(await hs('s'.repeat(32), payload), issuer), { issuerId: 3, stream: 'cam1', action: 'subscribe', exp: NOW + 60, iat: NOW, jti: 'j-1' });
    await refused(await hs('t'.repeat(32), payload), issuer, 'the signature does not verify');
    await refused(await hs('s'.repeat(32), { ...payload, act: 'delete' }), issuer, 'claim act (the action) is not publish, subscribe, read, play or playback');
    await refused(await hs('s'.repeat(32), payload), { ...issuer, secret: null }, "HS256 needs the issuer's secret and it has none");
  });
});

describe('issuer JWT: the registered claims', () => {
  const cases: Array<[string, Record<string, unknown>, Partial<IssuerRecord>, string]> = [
    ['exp missing', { exp: undefined }, {}, 'exp is required'],
    ['exp not a number', { exp: '2030' }, {}, 'exp is not a number'],
    ['expired', { exp: NOW }, {}, 'the JWT has expired'],
    ['iat in the future', { iat: NOW + 1 }, {}, 'the JWT was issued in the future (iat)'],
    ['exp past maxLifetimeSeconds after iat', { iat: NOW - 10, exp: NOW + 291 }, { maxLifetimeSeconds: 300 }, 'exp is more than 300 s after iat'],
    ['exp past maxLifetimeSeconds after now (no iat)', { exp: NOW + 301 }, { maxLifetimeSeconds: 300 }, 'exp is more than 300 s after now'],
    ['an iss the issuer does not expect', { iss: 'https://other' }, {}, 'iss is present and the issuer expects none'],
    ['another iss', { iss: 'https://other' }, { issuer: 'https://idp' }, "iss is not the issuer's"],
    ['a kid the issuer does not name', {}, { keyIds: ['mux-key-2'] }, "kid is not one of the issuer's key ids"],
    ['a revoked jti', { jti: 'j-9' }, { revoked: { jti: ['j-9'], sub: [], kid: [] } }, 'its jti is revoked'],
    ['a revoked sub', {}, { revoked: { jti: [], sub: ['playback-abc'], kid: [] } }, 'its sub is revoked'],
    ['a revoked kid', {}, { revoked: { jti: [], sub: [], kid: ['mux-key-1'] } }, 'its kid is revoked'],
    ['a disabled issuer', {}, { isActive: false }, 'the issuer is disabled'],
    ['no stream claim', { sub: undefined }, {}, 'claim sub (the stream) is not a name of 1 to 128 characters'],
  ];
  for (const [name, payload, issuer, problem] of cases) {
    it(name, async () => {
      const r = await verifyIssuerJwt(await sign(mux, muxPayload(payload)), muxIssuer(issuer), inlineKeys(), NOW);
      assert.equal('problem' in r && r.problem, problem);
    });
  }

  it('exactly maxLifetimeSeconds after iat, and the skew on exp and nbf, are accepted', async () => {
    await verified(await sign(mux, muxPayload({ iat: NOW - 10, exp: NOW + 290 })), muxIssuer({ maxLifetimeSeconds: 300 }));
    await verified(await sign(mux, muxPayload({ exp: NOW - 29, nbf: NOW + 30 })), muxIssuer({ clockSkewSeconds: 30 }));
  });

  it('an algorithm the issuer does not allow, none, and a header with crit are refused before any key is asked for', async () => {
    const keys = fixedKeys([mux.jwk]);
    await refused(unsigned({ alg: 'RS384', kid: 'mux-key-1' }, muxPayload()), muxIssuer(), 'algorithm RS384 is not one the issuer allows (RS256)', keys);
    await refused(`${b64({ alg: 'none' })}.${b64(muxPayload())}.`, muxIssuer(), 'not a signed JWT of at most 8192 characters', keys);
    await refused(unsigned({ alg: 'none' }, muxPayload()), muxIssuer({ algorithms: ['RS256', 'HS256'] }), 'algorithm none is not one the issuer allows (RS256, HS256)', keys);
    await refused(unsigned({ alg: 'RS256', crit: ['exp'], exp: 1 }, muxPayload()), muxIssuer(), 'the JWT header has b64 or crit', keys);
    assert.equal(keys.calls, 0);
  });
});

describe('issuer JWT: MediaMTX permissions', () => {
  const issuer = () => issuerRecord({ issuer: 'mtx', algorithms: ['HS256'], secret: 'm'.repeat(32), claims: { stream: 'sub', permissions: 'mediamtx_permissions' } });
  const hs = (perms: unknown) =>
    new SignJWT({ iss: 'mtx', exp: NOW + 60, mediamtx_permissions: perms }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('m'.repeat(32)));
  const allows = (cred: IssuerCredential, streamName: string, action: 'publish' | 'subscribe') => credentialProblem(cred, issuer(), { streamName, action }) === null;

  it('exact paths, "" for any, ~regexp unanchored; read and playback are subscribing', async () => {
    const cred = await verified(await hs([{ action: 'publish', path: 'cam1' }, { action: 'read', path: '~^live/' }, { action: 'playback', path: '~rec' }]), issuer());
    assert.deepEqual(
      [allows(cred, 'cam1', 'publish'), allows(cred, 'cam2', 'publish'), allows(cred, 'cam1', 'subscribe'), allows(cred, 'live/x', 'subscribe'), allows(cred, 'a/live/x', 'subscribe'), allows(cred, 'old-rec-1', 'subscribe'), allows(cred, 'live/x', 'publish')],
      [true, false, false, true, false, true, false],
    );
    assert.equal(credentialProblem(cred, issuer(), { streamName: 'cam2', action: 'publish' }), "no entry of claim mediamtx_permissions allows publish on 'cam2'");
    const any = await verified(await hs(JSON.stringify([{ action: 'read', path: '' }, { action: 'api' }])), issuer());
    assert.deepEqual([allows(any, 'whatever', 'subscribe'), allows(any, 'whatever', 'publish')], [true, false]);
  });

  it('a regexp over the pattern cost, or one RE2 refuses, refuses the credential; it is never run', async () => {
    const costly = await verifyIssuerJwt(await hs([{ action: 'read', path: '~\\pL{1000}' }]), issuer(), inlineKeys(), NOW);
    assert.match('problem' in costly ? costly.problem : '', /^claim mediamtx_permissions\[0\]\.path: too large for the RE2 engine: .*\(cost \d+ instructions, at most 2000\)/);
    const lookaround = await verifyIssuerJwt(await hs([{ action: 'read', path: 'cam1' }, { action: 'read', path: '~(?=a)a' }]), issuer(), inlineKeys(), NOW);
    assert.match('problem' in lookaround ? lookaround.problem : '', /^claim mediamtx_permissions\[1\]\.path: not a valid regular expression for the RE2 engine: /);
  });

  it('entries that are not permissions are refused, naming the claim', async () => {
    await refused(await hs('not json'), issuer(), 'claim mediamtx_permissions is a string but not a JSON array');
    await refused(await hs({ action: 'read' }), issuer(), 'claim mediamtx_permissions is not an array of permissions');
    await refused(await hs([{ path: 'x' }]), issuer(), 'claim mediamtx_permissions[0] has no action');
    await refused(await hs(Array.from({ length: 101 }, () => ({ action: 'read', path: '' }))), issuer(), 'claim mediamtx_permissions has more than 100 entries');
  });
});

describe('issuer JWT: the narrowing check', () => {
  it('the action and address claims must allow the request', async () => {
    const issuer = muxIssuer({ claims: { stream: 'sub', action: 'act', address: 'ip' } });
    const cred = await verified(await sign(mux, muxPayload({ act: 'publish', ip: ['203.0.113.0/24'] })), issuer);
    assert.equal(credentialProblem(cred, issuer, { streamName: 'playback-abc', action: 'publish', clientIp: '203.0.113.9' }), null);
    assert.equal(credentialProblem(cred, issuer, { streamName: 'playback-abc', action: 'subscribe', clientIp: '203.0.113.9' }), 'claim act says publish');
    assert.equal(credentialProblem(cred, issuer, { streamName: 'playback-abc', action: 'publish', clientIp: '198.51.100.1' }), 'address 198.51.100.1 is not in claim ip');
    assert.equal(credentialProblem(cred, issuer, { streamName: 'playback-abc', action: 'publish' }), 'the client address is unknown, and claim ip restricts addresses');
    await refused(await sign(mux, muxPayload({ act: 'publish', ip: ['::1'] })), issuer, 'claim ip (the address) is not an IPv4 address, CIDR block or a list of them');
  });

  it('a missing canPublish claim does not allow publishing (only an explicit true does)', async () => {
    const issuer = { ...livekit, claims: { stream: 'video.room', canPublish: 'video.canPublishData' } };
    const cred = await verified(LIVEKIT_VECTOR, issuer, inlineKeys(), 1700000000);
    assert.equal(cred.canPublish, false);
    assert.equal(credentialProblem(cred, issuer, { streamName: 'room1', action: 'publish' }), 'claim video.canPublishData is not true: the credential may not publish');
  });
});

describe('issuer JWT: the memo', () => {
  it('a repeat presentation skips the signature; revocation, disabling and a dropped key still apply', async () => {
    const memo = new IssuerJwtMemo(100);
    const held: JWK[] = [Object.freeze({ ...mux.jwk })];
    const keys: IssuerKeySource & { calls: number } = {
      calls: 0,
      async keysFor() {
        keys.calls++;
        return { keys: held };
      },
    };
    const jwt = await sign(mux, muxPayload({ jti: 'j-1' }));
    const first = await memo.verify(jwt, muxIssuer(), keys, NOW);
    const again = await memo.verify(jwt, muxIssuer(), keys, NOW + 1);
    assert.equal(again, first, 'the remembered credential itself');
    // the hit asks whether its key is still held; a set fetched again (new objects, same key) still holds it
    assert.equal(keys.calls, 2);
    held[0] = Object.freeze({ ...mux.jwk });
    assert.equal(await memo.verify(jwt, muxIssuer(), keys, NOW + 1), first);
    assert.equal(memo.size, 1);
    // A write of the issuer moves its rev: the revoked jti is found on the record, not in the memo.
    assert.deepEqual(await memo.verify(jwt, muxIssuer({ rev: 2, revoked: { jti: ['j-1'], sub: [], kid: [] } }), keys, NOW + 2), { problem: 'its jti is revoked' });
    // Disabled without a rev change (a stale read): the hit is checked again.
    assert.deepEqual(await memo.verify(jwt, muxIssuer({ isActive: false }), keys, NOW + 3), { problem: 'the issuer is disabled', disabled: true });
    // The key dropped from the issuer's set (another key under the same kid): the remembered JWT is refused, and forgotten.
    held[0] = Object.freeze({ ...other.jwk, kid: mux.jwk.kid });
    assert.deepEqual(await memo.verify(jwt, muxIssuer(), keys, NOW + 4), { problem: "the key that verified it is no longer among the issuer's keys" });
    assert.equal(memo.size, 0);
    held[0] = Object.freeze({ ...mux.jwk });
    await memo.verify(jwt, muxIssuer(), keys, NOW + 5);
    assert.deepEqual(await memo.verify(jwt, muxIssuer(), keys, NOW + 600), { problem: 'the JWT has expired', expired: true });
    assert.equal(memo.size, 0);
  });

  it('holds at most its bound', async () => {
    const memo = new IssuerJwtMemo(2);
    const keys = fixedKeys([mux.jwk]);
    for (const jti of ['a', 'b', 'c']) await memo.verify(await sign(mux, muxPayload({ jti })), muxIssuer(), keys, NOW);
    assert.equal(memo.size, 2);
  });
});
