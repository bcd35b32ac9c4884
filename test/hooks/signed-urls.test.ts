// Signed URLs, signed cookies and Common Access Tokens on the auth_request path
// (docs/api.md#signed-url-issuers): each format decided by its issuer's policy token within what it
// signs, refused with 403 as the CDNs answer (signature, expiry, path, address, replay), and never
// wider than the policy token. Credentials are made by implementations that are not Streamgate's:
// Akamai's SDK, AWS's CloudFront signer, Eyevinn's CAT library, and Wowza's and Softvelum's rules
// computed here with node:crypto.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import request from 'supertest';
import EdgeAuth from 'akamai-edgeauth';
import { getSignedCookies, getSignedUrl } from '@aws-sdk/cloudfront-signer';
import { CAT } from '@eyevinn/cat';
import { hookFixture, type HookFixture } from './fixture.js';
import { encodeSigned } from '../../src/policy/signed.js';

const HEX_KEY = '0123456789abcdef0123456789abcdef';
const CAT_KEY = '403697de87af64611c1d32a05dab0fe1fcb715a86ab435f1ec99192d79569388';
const VIEWER = '203.0.113.7';
const nowS = () => Math.floor(Date.now() / 1000);

describe('signed URLs, cookies and CATs behind auth_request', () => {
  let f: HookFixture;
  let acct: string;
  /** The policy tokens: subscribe to cam1 and cam2 (not cam3); cam1 secured by a publish token. */
  let policy: number;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const PRIVATE_PEM = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const ids: Record<string, number> = {};

  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], accountInPath: true, authRequest: { methodFrom: 'x-original-method' } },
      sessions: { http: { enabled: false } },
    });
    acct = f.acct.id;
    await f.token('publish', { streams: [{ streamName: 'cam1' }], subscribeRequiresAuth: true });
    policy = (await f.token('subscribe', { streams: [{ streamName: 'cam1' }, { streamName: 'cam2' }] })).id;
    const issuer = async (body: Record<string, unknown>) => {
      const r = await f.api('post', '/api/issuers', { policyTokenId: policy, ...body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      ids[body.type as string] = r.body.data.id;
    };
    await issuer({ label: 'akamai', type: 'akamai-edgeauth', secret: HEX_KEY, clockSkewSeconds: 0 });
    await issuer({
      label: 'cloudfront',
      type: 'cloudfront',
      clockSkewSeconds: 0,
      settings: { publicKeys: [{ id: 'K2JCJMDEHXQW5F', key: rsa.publicKey.export({ type: 'spki', format: 'pem' }) }], urls: ['https://cdn.example.com'] },
    });
    await issuer({ label: 'cat', type: 'cat', issuer: 'eyevinn', secret: CAT_KEY, clockSkewSeconds: 0, settings: { secretKeyId: 'Symmetric256' } });
    await issuer({ label: 'wowza', type: 'wowza-securetoken', secret: 'mySharedSecret-0001', clockSkewSeconds: 0 });
    await issuer({ label: 'nimble', type: 'nimble-wmsauth', secret: 'defaultpassword-01', clockSkewSeconds: 0 });
  });
  after(() => f.close());

  const nginx = async (uri: string, headers: Record<string, string> = {}, ip = VIEWER) => {
    const r = await request(f.t.app)
      .get('/hooks/auth-request')
      .set({ 'x-original-uri': uri, 'x-original-method': 'GET', 'x-forwarded-for': ip, ...headers });
    return [r.status, r.status === 200 ? r.headers['x-streamgate-token-id'] : r.body.reason];
  };
  const allowed = () => [200, String(policy)];

  it('akamai-edgeauth: an hdnts query or cookie from the SDK, within its ACL and address', async () => {
    const sdk = new EdgeAuth({ key: HEX_KEY, windowSeconds: 300, ip: VIEWER });
    const token = sdk.generateACLToken(`/hls/${acct}/cam1/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${token}`), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/seg_1.ts`, { cookie: `hdnts=${token}` }), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?hdnts=${token}`), [403, 'stream_not_allowed']);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${token}`, {}, '198.51.100.9'), [403, 'ip_not_allowed']);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${token.replace(/hmac=(.)/, (_m, c: string) => `hmac=${c === '0' ? '1' : '0'}`)}`), [403, 'signature_invalid']);
    const expired = new EdgeAuth({ key: HEX_KEY, startTime: nowS() - 600, endTime: nowS() - 1 }).generateACLToken(`/hls/${acct}/cam1/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${expired}`), [403, 'signature_expired']);
    // a wide ACL never widens the policy token: cam3 is not among its streams
    const wide = new EdgeAuth({ key: HEX_KEY, windowSeconds: 300 }).generateACLToken(`/hls/${acct}/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam3/index.m3u8?hdnts=${wide}`), [403, 'stream_not_allowed']);
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?hdnts=${wide}`), allowed());
  });

  it('cloudfront: signed cookies for a wildcard resource and a canned signed URL, from the AWS signer', async () => {
    const exp = nowS() + 300;
    const policyJson = JSON.stringify({ Statement: [{ Resource: `https://cdn.example.com/hls/${acct}/cam1/*`, Condition: { DateLessThan: { 'AWS:EpochTime': exp } } }] });
    const c = getSignedCookies({ keyPairId: 'K2JCJMDEHXQW5F', privateKey: PRIVATE_PEM, policy: policyJson, algorithm: 'SHA256' }) as unknown as Record<string, string>;
    const cookie = Object.entries(c)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/seg_9.ts`, { cookie }), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/seg_9.ts`, { cookie }), [403, 'stream_not_allowed']);
    const url = getSignedUrl({ url: `https://cdn.example.com/hls/${acct}/cam2/index.m3u8`, keyPairId: 'K2JCJMDEHXQW5F', privateKey: PRIVATE_PEM, dateLessThan: exp * 1000 });
    assert.deepEqual(await nginx(url.replace('https://cdn.example.com', '')), allowed());
    assert.deepEqual(await nginx(url.replace('https://cdn.example.com', '').replace('index.m3u8', 'other.m3u8')), [403, 'signature_invalid']);
  });

  it('cat: a CTA-Common-Access-Token header from @eyevinn/cat; catreplay 1 is admitted once', async () => {
    const lib = new CAT({ keys: { Symmetric256: Buffer.from(CAT_KEY, 'hex') }, expectCwtTag: true });
    const gen = (claims: Record<string, unknown>) => lib.generateFromJson({ iss: 'eyevinn', exp: nowS() + 300, ...claims } as never, { type: 'mac', alg: 'HS256', kid: 'Symmetric256', generateCwtId: true });
    const t = (await gen({ catu: { path: { 'prefix-match': `/hls/${acct}/cam2/` } } }))!;
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8`, { 'cta-common-access-token': t }), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8`, { 'cta-common-access-token': t }), allowed(), 'reuse is permitted by default');
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8`, { 'cta-common-access-token': t }), [403, 'stream_not_allowed']);
    const once = (await gen({ catreplay: 1 }))!;
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?cat=${once}`), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?cat=${once}`), [403, 'uses_exhausted']);
  });

  it("wowza-securetoken and nimble-wmsauth: hashes made by the vendors' documented rules", async () => {
    const end = nowS() + 300;
    const sorted = [`wowzatokenendtime=${end}`, 'mySharedSecret-0001'].sort().join('&');
    const hash = createHash('sha256').update(`hls/${acct}/cam1?${sorted}`).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/playlist.m3u8?wowzatokenendtime=${end}&wowzatokenhash=${hash}`), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/playlist.m3u8?wowzatokenendtime=${end}&wowzatokenhash=${hash}`), [403, 'signature_invalid']);

    const t = new Date((nowS() - 10) * 1000);
    const h = t.getUTCHours();
    const serverTime = `${t.getUTCMonth() + 1}/${t.getUTCDate()}/${t.getUTCFullYear()} ${h % 12 || 12}:${String(t.getUTCMinutes()).padStart(2, '0')}:${String(t.getUTCSeconds()).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
    const stream = `hls/${acct}/cam2`;
    const md5 = createHash('md5').update(`${VIEWER}defaultpassword-01${serverTime}5${stream}`).digest('base64');
    const sign = Buffer.from(`server_time=${serverTime}&hash_value=${md5}&validminutes=5&strm_len=${stream.length}`).toString('base64');
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/chunk_1.ts?wmsAuthSign=${encodeURIComponent(sign)}`), allowed());
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/chunk_1.ts?wmsAuthSign=${encodeURIComponent(sign)}`, {}, '198.51.100.9'), [403, 'signature_invalid']);
  });

  it('disabling the issuer refuses its credentials (a remembered one too): the secured stream then needs a token', async () => {
    const token = new EdgeAuth({ key: HEX_KEY, windowSeconds: 300 }).generateACLToken(`/hls/${acct}/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${token}`), allowed());
    assert.equal((await f.api('put', `/api/issuers/${ids['akamai-edgeauth']}`, { isActive: false })).status, 200);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${token}`), [401, 'token_required']);
    assert.equal((await f.api('put', `/api/issuers/${ids['akamai-edgeauth']}`, { isActive: true })).status, 200);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${token}`), allowed());
    // revoking a credential's id (EdgeAuth id) refuses it, remembered or not
    const viewer = new EdgeAuth({ key: HEX_KEY, windowSeconds: 300, sessionId: 'viewer-7' }).generateACLToken(`/hls/${acct}/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?hdnts=${viewer}`), allowed());
    assert.equal((await f.api('put', `/api/issuers/${ids['akamai-edgeauth']}`, { revoked: { jti: ['viewer-7'] } })).status, 200);
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?hdnts=${viewer}`), [403, 'signature_invalid']);
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?hdnts=${token}`), allowed());
    // deleting the policy token refuses every credential of its issuers
    const spare = (await f.token('subscribe', { streams: [{ streamName: 'cam2' }] })).id;
    assert.equal((await f.api('put', `/api/issuers/${ids['akamai-edgeauth']}`, { policyTokenId: spare })).status, 200);
    assert.equal((await f.api('delete', `/api/subscribe_token/${spare}`)).status, 200);
    assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?hdnts=${token}`), [403, 'signature_invalid']);
    assert.equal((await f.api('put', `/api/issuers/${ids['akamai-edgeauth']}`, { policyTokenId: policy })).status, 200);
  });

  it("another account's path never reads this account's issuers, and a presented token is never taken for a signed request", async () => {
    const other = await f.t.account();
    const token = new EdgeAuth({ key: HEX_KEY, windowSeconds: 300 }).generateACLToken('/hls/*');
    // the other account has no issuer: the credential is no credential there (its stream is open)
    assert.deepEqual(await nginx(`/hls/${other.id}/cam1/index.m3u8?hdnts=${token}`), [200, undefined]);
    // a ?token= value shaped as the packed form is an unknown token, never a signed request
    const forged = encodeSigned(acct, { method: 'GET', path: `/hls/${acct}/cam1/index.m3u8`, query: `hdnts=${token}`, cookie: '' });
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?token=${encodeURIComponent(forged)}`), [401, 'token_invalid']);
  });

  describe('issuing for the edge and explaining a credential', () => {
    const sign = async (type: string, body: Record<string, unknown>) => {
      const r = await f.api('post', `/api/issuers/${ids[type]}/sign`, body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { format: string; expiresAt: string; query?: Array<[string, string]>; queryString?: string; cookies?: Record<string, string>; headers?: Record<string, string>; url?: string };
    };

    it('what /sign returns is decided as it would be at the edge, and an independent verifier accepts it', async () => {
      const ea = await sign('akamai-edgeauth', { path: `/hls/${acct}/cam2/*`, lifetimeSeconds: 120, id: 'viewer-1' });
      assert.equal(ea.format, 'akamai-edgeauth');
      assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8?${ea.queryString}`), allowed());
      assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?${ea.queryString}`), [403, 'stream_not_allowed']);
      // Akamai's SDK makes the same token for the same grant
      const [, token] = ea.query![0]!;
      const st = Number(/st=(\d+)/.exec(token)![1]);
      assert.equal(token, new EdgeAuth({ key: HEX_KEY, startTime: st, endTime: st + 120, sessionId: 'viewer-1' }).generateACLToken(`/hls/${acct}/cam2/*`));
      assert.deepEqual(Object.keys(ea.cookies!), ['hdnts']);

      const cat = await sign('cat', { path: `/hls/${acct}/cam2/*`, clientIp: VIEWER });
      assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8`, cat.headers), allowed());
      assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8`, cat.headers, '198.51.100.9'), [403, 'ip_not_allowed']);
      const lib = new CAT({ keys: { Symmetric256: Buffer.from(CAT_KEY, 'hex') }, expectCwtTag: true });
      const checked = await lib.validate(cat.headers!['CTA-Common-Access-Token']!, 'mac', { issuer: 'eyevinn', url: new URL(`https://cdn.example.com/hls/${acct}/cam2/index.m3u8`), ip: VIEWER });
      assert.equal(checked.error, undefined);

      const wz = await sign('wowza-securetoken', { path: `/hls/${acct}/cam1`, lifetimeSeconds: 60 });
      assert.deepEqual(await nginx(`/hls/${acct}/cam1/playlist.m3u8?${wz.queryString}`), allowed());
      const [[, start], [, end], [, hash]] = wz.query! as Array<[string, string]>;
      const expected = createHash('sha256').update(`hls/${acct}/cam1?mySharedSecret-0001&wowzatokenendtime=${end}&wowzatokenstarttime=${start}`).digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
      assert.equal(hash, expected);

      const nm = await sign('nimble-wmsauth', { path: `/hls/${acct}/cam2/*`, clientIp: VIEWER, lifetimeSeconds: 300 });
      assert.deepEqual(await nginx(`/hls/${acct}/cam2/chunk_1.ts?${nm.queryString}`), allowed());
      const r = await f.api('post', `/api/issuers/${ids['nimble-wmsauth']}/sign`, { path: `/hls/${acct}/cam2/*` });
      assert.deepEqual([r.status, r.body.data.message], [400, 'Cannot sign: a WMSAuth signature binds the client address or an id: give clientIp or id']);
      const cf = await f.api('post', `/api/issuers/${ids.cloudfront}/sign`, { path: `/hls/${acct}/cam2/*` });
      assert.deepEqual([cf.status, cf.body.data.message], [400, 'Cannot sign: this cloudfront issuer has no signing key (settings.signingKeyId and signingKey)']);
      const bad = await f.api('post', `/api/issuers/${ids.cat}/sign`, { path: 'hls/no-slash' });
      assert.equal(bad.status, 400);
      // a * inside the path would mean one thing to EdgeAuth and CloudFront and another to a CAT: refused for every format
      for (const type of ['akamai-edgeauth', 'cat']) {
        const mid = await f.api('post', `/api/issuers/${ids[type]}/sign`, { path: `/hls/${acct}/*/index.m3u8` });
        assert.deepEqual([mid.status, mid.body.data.errors], [400, { path: ['a * only at the end (everything under the path): formats read a * elsewhere differently'] }]);
      }
    });

    it('a CloudFront issuer with a signing key signs cookies for a wildcard and a URL for one object; node:crypto verifies them with the public key', async () => {
      const put = await f.api('put', `/api/issuers/${ids.cloudfront}`, { settings: { signingKeyId: 'K2JCJMDEHXQW5F' }, signingKey: PRIVATE_PEM });
      assert.deepEqual([put.status, put.body.data.hasSigningKey], [200, true]);
      const wild = await sign('cloudfront', { path: `/hls/${acct}/cam1/*` });
      const cookie = Object.entries(wild.cookies!).map(([k, v]) => `${k}=${v}`).join('; ');
      assert.deepEqual(Object.keys(wild.cookies!).sort(), ['CloudFront-Hash-Algorithm', 'CloudFront-Key-Pair-Id', 'CloudFront-Policy', 'CloudFront-Signature']);
      assert.deepEqual(await nginx(`/hls/${acct}/cam1/seg_3.ts`, { cookie }), allowed());
      assert.equal(wild.url, undefined);
      const fromCf = (b64: string) => Buffer.from(b64.replace(/-/g, '+').replace(/_/g, '=').replace(/~/g, '/'), 'base64');
      assert.equal(verify('sha256', fromCf(wild.cookies!['CloudFront-Policy']!), rsa.publicKey, fromCf(wild.cookies!['CloudFront-Signature']!)), true);
      const one = await sign('cloudfront', { path: `/hls/${acct}/cam2/index.m3u8` });
      assert.ok(one.url?.startsWith(`https://cdn.example.com/hls/${acct}/cam2/index.m3u8?Expires=`), one.url);
      assert.deepEqual(await nginx(one.url!.replace('https://cdn.example.com', '')), allowed());
    });

    it('/check shows each field verified and the string that was signed; a tampered credential names what failed', async () => {
      const token = new EdgeAuth({ key: HEX_KEY, startTime: nowS() - 5, endTime: nowS() + 300 }).generateACLToken(`/hls/${acct}/cam2/*`);
      const check = (url: string) => f.api('post', `/api/issuers/${ids['akamai-edgeauth']}/check`, { streamName: 'cam2', url: `https://cdn.example.com${url}`, clientIp: VIEWER });
      const ok = await check(`/hls/${acct}/cam2/index.m3u8?hdnts=${token}`);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const d = ok.body.data;
      assert.deepEqual([d.allowed, d.reason, d.credential.verified, d.credential.format, d.credential.signed], [true, 'allowed', true, 'akamai-edgeauth', token.slice(0, token.indexOf('~hmac='))]);
      assert.deepEqual(
        d.credential.fields.map((x: { name: string; ok?: boolean }) => [x.name, x.ok]),
        [['st', undefined], ['exp', undefined], ['acl', undefined], ['hmac', undefined], ['signature', true], ['expiry', true], ['start', true], ['path', true]],
      );
      assert.ok(d.rules.some((r: { rule: string; detail?: string }) => r.rule === 'token valid' && r.detail?.startsWith(`a akamai-edgeauth credential verified by issuer ${ids['akamai-edgeauth']}`)));
      const tampered = await check(`/hls/${acct}/cam2/index.m3u8?hdnts=${token.replace(`/hls/${acct}/cam2/*`, `/hls/${acct}/*`)}`);
      const t = tampered.body.data;
      assert.deepEqual([t.allowed, t.status, t.reason, t.credential.verified, t.credential.problem], [false, 403, 'signature_invalid', false, 'hmac does not match: the key, algorithm, salt or a signed field differs']);
      assert.ok(!tampered.text.includes(HEX_KEY), 'no key in the explanation');
      const jwtAsked = await f.api('post', `/api/issuers/${ids['akamai-edgeauth']}/check`, { streamName: 'cam2', jwt: 'a.b.c' });
      assert.deepEqual([jwtAsked.status, jwtAsked.body.data.errors], [400, { jwt: ['a akamai-edgeauth issuer verifies signed URLs, cookies or tokens: give url, cookie or cat'] }]);
      // a probe binds nothing: a CAT that prohibits reuse is still unused after its check
      const lib = new CAT({ keys: { Symmetric256: Buffer.from(CAT_KEY, 'hex') }, expectCwtTag: true });
      const once = (await lib.generateFromJson({ iss: 'eyevinn', exp: nowS() + 300, catreplay: 1 } as never, { type: 'mac', alg: 'HS256', kid: 'Symmetric256', generateCwtId: true }))!;
      const probed = await f.api('post', `/api/issuers/${ids.cat}/check`, { streamName: 'cam2', url: `/hls/${acct}/cam2/index.m3u8`, cat: once });
      assert.equal(probed.body.data.allowed, true, JSON.stringify(probed.body));
      assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8`, { 'cta-common-access-token': once }), allowed());
      assert.deepEqual(await nginx(`/hls/${acct}/cam2/index.m3u8`, { 'cta-common-access-token': once }), [403, 'uses_exhausted']);
    });
  });
});
