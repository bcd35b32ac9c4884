// The signed-URL and signed-cookie formats (src/policy/signed-*.ts), each verified against an
// implementation that is not Streamgate's: Akamai's EdgeAuth SDK (akamai-edgeauth), AWS's
// @aws-sdk/cloudfront-signer, Eyevinn's @eyevinn/cat, and the worked examples of Wowza's SecureToken
// rule and Softvelum's WMSAuth samples (inputs and outputs written out below). And the other way:
// what Streamgate issues is accepted by the independent verifier where one exists.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, verify as verifyBytes } from 'node:crypto';
import EdgeAuth from 'akamai-edgeauth';
import { getSignedCookies, getSignedUrl } from '@aws-sdk/cloudfront-signer';
import { CAT } from '@eyevinn/cat';
import { Tag } from 'cbor-x';
import type { SignedRequest, SignedResult } from '../../src/policy/signed-common.js';
import { type EdgeAuthSettings, findEdgeAuth, signEdgeAuth, verifyEdgeAuth } from '../../src/policy/signed-akamai.js';
import { type CloudFrontSettings, cloudFrontBase64Decode, findCloudFront, signCloudFront, verifyCloudFront } from '../../src/policy/signed-cloudfront.js';
import { type CatSettings, findCat, signCat, verifyCat } from '../../src/policy/signed-cat.js';
import { type WowzaSettings, signWowza, verifyWowza, wowzaHashInput } from '../../src/policy/signed-wowza.js';
import { type NimbleSettings, findNimble, parseServerTime, serverTime, signNimble, verifyNimble } from '../../src/policy/signed-nimble.js';

/** A request as a verifier sees it, from a URL (path and query as written) and what else the test gives. */
function request(url: string, o: { ip?: string; cookies?: Record<string, string>; headers?: Record<string, string>; method?: string; country?: string } = {}): SignedRequest {
  const q = url.indexOf('?');
  const headers = new Map(Object.entries(o.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method: o.method ?? 'GET',
    path: q < 0 ? url : url.slice(0, q),
    query: q < 0 ? '' : url.slice(q + 1),
    cookies: new Map(Object.entries(o.cookies ?? {})),
    header: (n) => headers.get(n),
    ...(o.ip !== undefined ? { clientIp: o.ip } : {}),
    ...(o.country !== undefined ? { country: o.country } : {}),
  };
}

const problemOf = (r: SignedResult) => (r.ok ? 'ok' : r.problem);

// ---- Akamai EdgeAuth -------------------------------------------------------------------------

describe('akamai-edgeauth', () => {
  const KEY = '0123456789abcdef0123456789abcdef';
  const settings = (o: Partial<EdgeAuthSettings> = {}): EdgeAuthSettings => ({ key: KEY, algorithm: 'sha256', fieldDelimiter: '~', aclDelimiter: '!', escapeEarly: false, names: ['hdnts', '__token__'], clockSkewSeconds: 0, ...o });
  const NOW = 1700001000;

  it("verifies the SDK's worked tokens (A1–A8): ACL, SHA-1, MD5, ip/id/data with an ACL list, escaped inputs, URL tokens, salt", () => {
    const cases: Array<[string, string, Partial<EdgeAuthSettings>, string?]> = [
      ['/live/stream1/index.m3u8', 'st=1700000000~exp=1700003600~acl=/live/stream1/*~hmac=a34997b95630d0ac0955c4ad7f3a0ec3d216943fdf418540cc29d4698b91aaa8', {}],
      ['/live/stream1/index.m3u8', 'st=1700000000~exp=1700003600~acl=/live/stream1/*~hmac=edf76507aee2c5e4148787f5bf81922540f0af91', { algorithm: 'sha1' }],
      ['/live/stream1/index.m3u8', 'st=1700000000~exp=1700003600~acl=/live/stream1/*~hmac=de4231cc21dedae0a2b3ef9eff337908', { algorithm: 'md5' }],
      ['/live/stream2/ab.ts', 'ip=203.0.113.7~exp=1700003600~acl=/live/stream1/*!/live/stream2/??.ts~id=sess-42~data=user:alice~hmac=15cccc75fb0afa13eac7e242bf4825e7dbd55bcfe9c7fe3d1262f295fc5cd16d', {}, '203.0.113.7'],
      ['/live/x.ts', 'ip=2001%3adb8%3a%3a1~st=1700000000~exp=1700003600~acl=/live/*~data=a%20b%7ec~hmac=39e6d82c41ca502436f19baf01ca60f3520e8f1e7c5bcfc8ab03e2181527c8a2', { escapeEarly: true }, '2001:db8::1'],
      ['/vod/movie/master.m3u8', 'st=1700000000~exp=1700003600~hmac=04e6c0d3e213e389b6987956c6bca552dd1470bdf7b22ef92c27099f28e72e8f', {}],
      ['/vod/movie/master.m3u8', 'st=1700000000~exp=1700003600~hmac=d27fc4d4cf3d3e6aa68c9c058ff0036f7670f11eab0492270253bb9bf5ef5178', { escapeEarly: true }],
      ['/live/a/b.ts', 'st=1700000000~exp=1700003600~acl=/live/*~hmac=2e390d11f79a77a7fc6f2f162e5c695f621b18d7b5a261049c2510c72eac6f92', { salt: 'mysalt' }],
    ];
    for (const [path, token, o, ip] of cases) {
      const r = verifyEdgeAuth(token, request(path, { ip }), settings(o), NOW);
      assert.equal(problemOf(r), 'ok', `${token}: ${problemOf(r)}`);
      assert.equal(r.ok && r.grant.exp, 1700003600);
    }
    // a URL token grants one object: no viewer session stands for it
    const url = verifyEdgeAuth(cases[5]![1], request('/vod/movie/master.m3u8'), settings(), NOW);
    assert.equal(url.ok && url.grant.narrow, true);
    const a4 = verifyEdgeAuth(cases[3]![1], request('/live/stream2/ab.ts', { ip: '203.0.113.7' }), settings(), NOW);
    assert.deepEqual(a4.ok && a4.grant, { format: 'akamai-edgeauth', exp: 1700003600, id: 'sess-42', scope: 'acl /live/stream1/*!/live/stream2/??.ts' });
  });

  it('tokens the SDK generates now verify; a path outside the ACL, another address, a changed field, expiry and the wrong key refuse', () => {
    const sdk = new EdgeAuth({ key: KEY, algorithm: 'sha256', windowSeconds: 600, ip: '198.51.100.4', sessionId: 'viewer-9' });
    const token = sdk.generateACLToken(['/hls/acme/cam1/*', '/hls/acme/cam2/index.m3u8']);
    const now = Math.floor(Date.now() / 1000);
    const at = (path: string, ip = '198.51.100.4', t = token) => problemOf(verifyEdgeAuth(t, request(path, { ip }), settings(), now));
    assert.equal(at('/hls/acme/cam1/seg_1.ts'), 'ok');
    assert.equal(at('/hls/acme/cam2/index.m3u8'), 'ok');
    assert.equal(at('/hls/acme/cam2/seg_1.ts'), 'path /hls/acme/cam2/seg_1.ts is outside the signed acl');
    assert.equal(at('/hls/acme/cam1/seg_1.ts', '198.51.100.5'), "address 198.51.100.5 is not the token's ip 198.51.100.4");
    assert.equal(at('/hls/acme/cam1/seg_1.ts', undefined, token.replace('id=viewer-9', 'id=viewer-8')), 'hmac does not match: the key, algorithm, salt or a signed field differs');
    assert.match(problemOf(verifyEdgeAuth(token, request('/hls/acme/cam1/a.ts', { ip: '198.51.100.4' }), settings(), now + 601)), /^expired at /);
    assert.equal(problemOf(verifyEdgeAuth(token, request('/hls/acme/cam1/a.ts', { ip: '198.51.100.4' }), settings({ key: 'ff'.repeat(16) }), now)), 'hmac does not match: the key, algorithm, salt or a signed field differs');
    // a transition key verifies while the key rotates
    assert.equal(problemOf(verifyEdgeAuth(token, request('/hls/acme/cam1/a.ts', { ip: '198.51.100.4' }), settings({ key: 'ff'.repeat(16), transitionKey: KEY }), now)), 'ok');
  });

  it("what Streamgate issues is byte for byte what the SDK issues for the same grant", () => {
    for (const escapeEarly of [false, true]) {
      const sdk = new EdgeAuth({ key: KEY, startTime: 1700000000, endTime: 1700003600, ip: '203.0.113.7', sessionId: 'a b', payload: 'x~y', escapeEarly });
      const mine = signEdgeAuth({ start: 1700000000, exp: 1700003600, ip: '203.0.113.7', id: 'a b', data: 'x~y', acl: ['/live/*'] }, settings({ escapeEarly }));
      assert.equal(mine, sdk.generateACLToken('/live/*'));
      const url = signEdgeAuth({ start: 1700000000, exp: 1700003600, url: '/vod/a b.mp4' }, settings({ escapeEarly }));
      assert.equal(url, new EdgeAuth({ key: KEY, startTime: 1700000000, endTime: 1700003600, escapeEarly }).generateURLToken('/vod/a b.mp4'));
    }
  });

  it('finds the token in hdnts or __token__, query first, then the cookie; a doubled parameter is refused', () => {
    assert.deepEqual(findEdgeAuth(request('/a?hdnts=exp=1~hmac=ab'), ['hdnts', '__token__']), { token: 'exp=1~hmac=ab', from: 'query hdnts' });
    assert.deepEqual(findEdgeAuth(request('/a?__token__=exp%3D1~hmac%3Dab'), ['hdnts', '__token__']), { token: 'exp=1~hmac=ab', from: 'query __token__' });
    assert.deepEqual(findEdgeAuth(request('/a', { cookies: { hdnts: 'exp=2~hmac=cd' } }), ['hdnts', '__token__']), { token: 'exp=2~hmac=cd', from: 'cookie hdnts' });
    assert.deepEqual(findEdgeAuth(request('/a?hdnts=a&hdnts=b'), ['hdnts']), { problem: 'parameter hdnts appears more than once' });
    assert.equal(findEdgeAuth(request('/a?x=1'), ['hdnts']), undefined);
  });

  it('malformed tokens are refused with a reason', () => {
    const t = (token: string) => problemOf(verifyEdgeAuth(token, request('/live/a.ts'), settings(), NOW));
    assert.equal(t('exp=1700003600~acl=/live/*'), 'no ~hmac= field: not an EdgeAuth token');
    assert.equal(t('exp=1700003600~exp=1700003601~acl=/live/*~hmac=00'), 'field exp appears more than once');
    assert.equal(t('foo=1~exp=1700003600~hmac=00'), 'field "foo" is not an EdgeAuth field (ip, st, exp, acl, id, data)');
    assert.equal(t('acl=/live/*~hmac=00'), 'exp is missing (EdgeAuth requires one)');
    assert.equal(t('exp=soon~hmac=00'), 'exp is not Unix seconds');
    assert.equal(t('exp=1700003600~hmac=ZZ'), 'hmac is not lower-case hex');
    assert.equal(t(`exp=1~acl=${'*'.repeat(9000)}~hmac=00`), 'the token is longer than 8192 characters');
  });
});

// ---- CloudFront --------------------------------------------------------------------------------

describe('cloudfront', () => {
  const RSA_PUBLIC =
    'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAkLxf5yxEYZVH2u4TVP5fN9vkI2r7PL3Nd4PuL7QUmaXJCumCfuhfysxslmEVLA+6N9alruQeR9abTtNqjR9KrI6zAAQZsPoNVJvo4D8RgW9CfxPHxl6+9bMJIS34NQZrZ2tUOzKVImytW1Cjk2cr53rW1god8M/koIOefkadSwOmjl4O+IX00a4xYGysTPzZJ/tD0fhaF63tDasO6sTPP3X34BweHWm+QT3lZIoZVcbwoIBPUXs4zBVA+aGsdIw7wElu05QmrK1FxilwIfx/L6Mi9Y3J3AkSRhnCIhQ8FPf0i876cy7x7eqayJfP6ib/0bx4hGXHfSWHZPlr1I6fuQIDAQAB';
  const RSA_PRIVATE =
    'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCQvF/nLERhlUfa7hNU/l832+Qjavs8vc13g+4vtBSZpckK6YJ+6F/KzGyWYRUsD7o31qWu5B5H1ptO02qNH0qsjrMABBmw+g1Um+jgPxGBb0J/E8fGXr71swkhLfg1Bmtna1Q7MpUibK1bUKOTZyvnetbWCh3wz+Sgg55+Rp1LA6aOXg74hfTRrjFgbKxM/Nkn+0PR+FoXre0Nqw7qxM8/dffgHB4dab5BPeVkihlVxvCggE9RezjMFUD5oax0jDvASW7TlCasrUXGKXAh/H8voyL1jcncCRJGGcIiFDwU9/SLzvpzLvHt6prIl8/qJv/RvHiEZcd9JYdk+WvUjp+5AgMBAAECggEAFNj1WBHXFavldOJG/ulBji+0/ZRayjCCqHI55ughnCdg58VOanjj12Jjn7ODKQdo6MMZDAcdWiFOLz1M7d/cfId0vritz1aX1fXmcL/U2y0gnwzv1ncY5Wtw51+84+e1T75fccQYRCRIQiIW4FQDjcJIBf42ECo5wb8Y9L0Mygbt95vkI6MFUx0AoyurREaSw8eXSyTTT3/wSdbpY32GfLajzoT93oPCYqF9XX1Tu38seBfYJECSvpX74q7bpis7NjtaNyIDq6NRCtU9RoCmM8MliwP2QcbssiLWAOdOLBXQnBPvgQ0ERSxOhEtyG6YZ87FNNATgKQR6E2ObNdwyQwKBgQDBDpuulR1aCF8Zw29LSRaO202wGQm6EdNLD0Qp7B0Exi6hkcArOnhk3fCCENge5rprjj26qisAcLDUgBUtx7Ry6MDTDqNYt3w/Rm/mXlMiyfcQI/H0d/XxaPSSWhzYQQ+ZSdHPVttY5Iu4YHGucOKinH+8fWVwfVJuR5PYGoQCxwKBgQC/7KobcjvhuMn/k5SFIofK5LK8mkVO3n4vVxJO7LkVoL9B4Y2+FLPvpPYJk6aE2HRWVnzhY5dRSemOinpkkVjsrSPijPS9/ClWNP6xiE8TaI9XcHfHxCAv3RTESbkWE2AzGzY+Lib8t4JtixMrB9cUkOEjUL2YRf8CrpHOPwXJfwKBgBR5Hh1nhtNTa/JpfVX4jEHeE+EG5rcqyMN+/PWNKo6lDbDoqf5rlvTrbGP+sUyln0NktDslbKYBTV9breNK+GHvOPOo672ux6hWKeu+OQbJcD/v7+rDBfvx623RzJlKXQMehvd7+Ir2wbJt1+Bt7DreadVtXuKNB77WLGGQfktlAoGAK++m5Y+aK8tc2thTKMNF6OnADTMX6L1Aj9/T/iNtH4lkH1XeWARvSM4v0PNvLHxM7bLw9bwR2Pcds5b5++nWPKBKVcPFB3UhlW2eXNACokPOhMrncODyKWLoLSNfbrFS1YBGQ6fXHwV3o1IyOiiaUUf1cls6fBCSF3AVSuzci0sCgYEAl/ldv72iKxarEQfstOtYIPnjbVm5ef5IkkFgC6Hn8a+SNQliVtHUiDu9E4JHCxMFgwYJlk0UmIolXX0pmuYed4T0HTrOATVK/ij/iKvsXQQEMSYJbqM4wpJahsw3zOozin6/pdZhgTcGR5we/lK6oJ9djLtSRsDAatgYn5GfFzU=';
  const EC_PUBLIC = 'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEI4wHrTou8CQtLYZduxTfyRH8pzxys7++vkQ8LOYhRn4CUON6b7JC83oO+fJCCqxQS01UQYeS8dG6ceNYCVAAqA==';
  const privatePem = createPrivateKey({ key: Buffer.from(RSA_PRIVATE, 'base64'), format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }) as string;
  const DIST = 'https://d111111abcdef8.cloudfront.net';
  const settings: CloudFrontSettings = { publicKeys: [{ id: 'K2JCJMDEHXQW5F', key: RSA_PUBLIC }, { id: 'KECDSAEXAMPLE1', key: EC_PUBLIC }], urls: ['https://video.example.com', DIST], clockSkewSeconds: 0 };
  const NOW = 1893400000;
  /** The origin's view of a signed URL: its path and query, the distribution's host gone. */
  const atOrigin = (signed: string, o: Parameters<typeof request>[1] = {}) => request(signed.replace(/^https:\/\/[^/]+/, ''), o);
  const check = (req: SignedRequest, now = NOW) => {
    const p = findCloudFront(req);
    if (p === undefined) return 'none';
    if ('problem' in p) return p.problem;
    return problemOf(verifyCloudFront(p, req, settings, now));
  };

  it("verifies the SDK's worked URLs (C1 canned SHA-1, C2 SHA-256, C3 with its own query, C4 custom, C5 wildcard, C8 ECDSA) and cookies (C6, C7)", () => {
    const C1 = `${DIST}/live/stream1/index.m3u8?Expires=1893456000&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=Ce8hrtCmc0OGKOA1KgCtozTXqQ6ZKlptjI02XFsx6PXTLDKGS0AfE2JO2PGZqJ9PG1c1reH12onLivoNgHuaoL7ZS5KAKUh4WpTPHdJ44MmeH5NFxDPuQpxwQ3wFOH24g1Z2FDkfh6ACotMQeH1tfkrLF2I0ewrKUlruYUTtKCs2M4kx6Rzr1gZVFbViXzcWR~9mw9inH111cdvfJ9wwr8vgIjwe3DT3dkzlPYjXTyE2G28kOaGCiiajwnBevOORQTxMol5FlLRFEhI4riFOMAmrESBVVAYA33vQxfxSTCr3YlV~b9x2N-dnMl~QmSl6kNpmug0iCEocksJLMkcJdg__`;
    const C2 = `${DIST}/live/stream1/index.m3u8?Expires=1893456000&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=COg8kjhr4z55~E0iURrGpxBLwXw4~uOixQL-UaEdBiye0YfQ6K2BUjvh8vBmCIoN-3mY2z9uJLlE3aPQJjfvSosYOe8yBi~s2WYe7RgJo0HQ~L9iiybOi~5sETB6U4TiVQidgvHTtMlqL1ZpD3nAenb2qillpHHg2oo-ECxx6WfBtI5vgUP3M4HSFaBRad1~VCT~jplNE3svocCWN5qyomwsUH6SoOMkAbiYrVE2mQ0NLwYETlqc65e5TLruoTrKuA1Bct4hAE-UJ2itaXb1kt2Rv4Y1h7wOv14ROGcYOd1DwXKncoqM2MM84jVmu8HLnHbZ8HU0y1piueN~swOxqw__&Hash-Algorithm=SHA256`;
    const C3 = `${DIST}/vod/a.mp4?color=red&Expires=1893456000&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=JPnaTg--FRRPBQvhwcsazh62Ma6a-CkG5NyzG0mAHx34k2yrmOXQUfqIHUwujFnN6vH3IYO9ElDwPGtbrRK5QwkhrhpHViam0wLTdsWzWMDcT8wWVY0ryCKLmrHa2mBUTiRXS3uToxD8Y1eOJmtV3kXx~ebJBCZvxhiPQapG7g4cEPljTxK-JJIE18EbI5fXCWbo3-qJ~uRof79~fzfOVSSuHsO5gnDHuJBbV97iyCczbw0ioQSiynkZqGMkPbv~LTHxthc2wVN7X0~EO94c64v-AVVrR11vlDAso0gGtj53Cq4Fam9Ypb1jwdzBtA90FkFNWITG0OAH68tJwh2faQ__`;
    const C4 = `${DIST}/live/stream1/index.m3u8?Policy=eyJTdGF0ZW1lbnQiOlt7IlJlc291cmNlIjoiaHR0cHM6Ly9kMTExMTExYWJjZGVmOC5jbG91ZGZyb250Lm5ldC9saXZlL3N0cmVhbTEvaW5kZXgubTN1OCIsIkNvbmRpdGlvbiI6eyJEYXRlTGVzc1RoYW4iOnsiQVdTOkVwb2NoVGltZSI6MTg5MzQ1NjAwMH0sIkRhdGVHcmVhdGVyVGhhbiI6eyJBV1M6RXBvY2hUaW1lIjoxODkzMzY5NjAwfSwiSXBBZGRyZXNzIjp7IkFXUzpTb3VyY2VJcCI6IjIwMy4wLjExMy4wLzI0In19fV19&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=PoyLhFQRg1GOY-7dAon2O0faO3qJ~M3qukiJFeuM4c2bqTZqfFzMHqz25B1xUemWz~U1oqc0B7YeV3GM0IvzDM77Fqag7GlDTcOOANh-nS0RnNQEEhLYyqRLorHQ7WGBtSKDWeSnDm9Ov2c4UFnBIc5TMTLJphtuZvBJdfjya25kVgpLEa0vq8SvztLjZfiOYU0BxsI9QDD4VK-9uIv9YhCNQWwzItq5XQPKk-fgm56AOMXdXx~5MZ3EBXaIeJ5JtGeKu07NYaeZXCE9KwyUu89tw22xkIrMi0FFmMSI83CKhi6ZoVj6asgZV54iY7ENZ6zFi4EcrTtsFdPn8so0MQ__`;
    const C5policy = 'eyJTdGF0ZW1lbnQiOlt7IlJlc291cmNlIjoiaHR0cHM6Ly9kMTExMTExYWJjZGVmOC5jbG91ZGZyb250Lm5ldC9saXZlL3N0cmVhbTEvKiIsIkNvbmRpdGlvbiI6eyJEYXRlTGVzc1RoYW4iOnsiQVdTOkVwb2NoVGltZSI6MTg5MzQ1NjAwMH19fV19';
    const C5sig = 'Ra7GNs0QwaBdW2nC0YyLwD2lM1nFr1Gwq-c-slU7bf5ioqF6H2Q~1Rtn2Arttf9YrvgkG8wumnnDFksCjYA5bnYt3F4tRXkX9NUAnQAbWoe5tKdTa8Z4LVSiTyYp-AVvE-BLwgMVnRbdvUi32EpM6h0FXcoRYd1M7PDxy5xweP2Klu-QmPz6vxUbj9hlUBmpXiSPxI3bzxh3fDmD4lJVULC8i3l68lq25TEgZ8fQSn4ALj2H9Usq7zOJlJYowK2g4P7IP35oteAPw1Ejh1zk13DzJJpS2Dq2WfML7Hlo4kISI3PlDuYayYOgaDwQ5NutrEDwxZ0XUNCGvuywPDzAVA__';
    const C5 = `${DIST}/live/stream1/seg_001.ts?Policy=${C5policy}&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=${C5sig}`;
    const C8 = `${DIST}/live/stream1/index.m3u8?Expires=1893456000&Key-Pair-Id=KECDSAEXAMPLE1&Signature=MEYCIQDu7-nq4TMFono~3iOYJRdxaOMdgpcqRe3liBTJ3qiPvwIhAOZYSXDvkA8odsuMNfR~wDXxEOPNy0xsnSFVgADzlJo4`;
    assert.equal(check(atOrigin(C1)), 'ok');
    assert.equal(check(atOrigin(C2)), 'ok');
    assert.equal(check(atOrigin(C3)), 'ok');
    assert.equal(check(atOrigin(C4, { ip: '203.0.113.77' })), 'ok');
    assert.equal(check(atOrigin(C4, { ip: '198.51.100.1' })), "address 198.51.100.1 is not in the policy's AWS:SourceIp 203.0.113.0/24");
    assert.match(check(atOrigin(C4, { ip: '203.0.113.77' }), 1893369000), /^not valid before 1893369600/);
    assert.equal(check(atOrigin(C5)), 'ok');
    assert.equal(check(atOrigin(C5.replace('/stream1/', '/stream2/'))), "the URL is outside the policy's Resource https://d111111abcdef8.cloudfront.net/live/stream1/*");
    assert.equal(check(atOrigin(C8)), 'ok');
    // cookies: the C5 policy as CloudFront-* cookies covers every segment; C7 canned cookies cover the one URL
    const c6 = { 'CloudFront-Policy': C5policy, 'CloudFront-Signature': C5sig, 'CloudFront-Key-Pair-Id': 'K2JCJMDEHXQW5F' };
    assert.equal(check(request('/live/stream1/seg_042.ts', { cookies: c6 })), 'ok');
    const c7sig = new URL(C1).searchParams.get('Signature')!;
    assert.equal(check(request('/live/stream1/index.m3u8', { cookies: { 'CloudFront-Expires': '1893456000', 'CloudFront-Signature': c7sig, 'CloudFront-Key-Pair-Id': 'K2JCJMDEHXQW5F' } })), 'ok');
    // the canned signature covers the URL: another path, a changed or dropped own query, expiry
    assert.match(check(atOrigin(C1.replace('index.m3u8', 'other.m3u8'))), /^the signature does not match the canned policy/);
    assert.match(check(atOrigin(C3.replace('color=red', 'color=blue'))), /^the signature does not match the canned policy/);
    assert.match(check(atOrigin(C1), 1893456000), /^expired at 1893456000/);
  });

  it('URLs and cookies the SDK signs now verify, canned and custom, SHA-1 and SHA-256; a tampered signature or an unknown key pair refuses', () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    const now = exp - 300;
    for (const algorithm of ['SHA1', 'SHA256'] as const) {
      const url = getSignedUrl({ url: 'https://video.example.com/hls/acme/cam1/index.m3u8', keyPairId: 'K2JCJMDEHXQW5F', privateKey: privatePem, dateLessThan: exp * 1000, algorithm });
      assert.equal(check(atOrigin(url), now), 'ok');
      const sig = new URL(url).searchParams.get('Signature')!;
      const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
      assert.match(check(atOrigin(url.replace(sig, flipped)), now), /^the signature does not match/);
      const policy = JSON.stringify({ Statement: [{ Resource: 'https://video.example.com/hls/acme/cam1/*', Condition: { DateLessThan: { 'AWS:EpochTime': exp } } }] });
      const cookies = getSignedCookies({ url: 'https://video.example.com/hls/acme/cam1/*', keyPairId: 'K2JCJMDEHXQW5F', privateKey: privatePem, policy, algorithm }) as unknown as Record<string, string>;
      assert.equal(check(request('/hls/acme/cam1/seg_7.ts', { cookies }), now), 'ok');
      assert.equal(check(request('/hls/acme/cam2/seg_7.ts', { cookies }), now), "the URL is outside the policy's Resource https://video.example.com/hls/acme/cam1/*");
    }
    const other = getSignedUrl({ url: `${DIST}/x`, keyPairId: 'KUNKNOWN', privateKey: privatePem, dateLessThan: exp * 1000 });
    assert.equal(check(atOrigin(other), now), 'key pair id KUNKNOWN is not one of the issuer\'s public keys');
  });

  it("what Streamgate signs is the SDK's output for a canned policy, and its custom policies verify with the public key by node:crypto", () => {
    const mine = signCloudFront({ resource: `${DIST}/live/stream1/index.m3u8`, exp: 1893456000 }, 'K2JCJMDEHXQW5F', privatePem, 'SHA1');
    const sdk = new URL(getSignedUrl({ url: `${DIST}/live/stream1/index.m3u8`, keyPairId: 'K2JCJMDEHXQW5F', privateKey: privatePem, dateLessThan: 1893456000 * 1000 })).searchParams;
    assert.deepEqual(mine, { Expires: sdk.get('Expires'), 'Key-Pair-Id': sdk.get('Key-Pair-Id'), Signature: sdk.get('Signature') });
    const custom = signCloudFront({ resource: `${DIST}/live/stream1/*`, exp: 1893456000, ip: '203.0.113.0/24' }, 'K2JCJMDEHXQW5F', privatePem, 'SHA256');
    const policy = cloudFrontBase64Decode(custom.Policy!)!;
    const pub = createPublicKey({ key: Buffer.from(RSA_PUBLIC, 'base64'), format: 'der', type: 'spki' });
    assert.equal(verifyBytes('sha256', policy, pub, cloudFrontBase64Decode(custom.Signature!)!), true);
    assert.deepEqual(JSON.parse(policy.toString()), { Statement: [{ Resource: `${DIST}/live/stream1/*`, Condition: { DateLessThan: { 'AWS:EpochTime': 1893456000 }, IpAddress: { 'AWS:SourceIp': '203.0.113.0/24' } } }] });
    assert.equal(custom['Hash-Algorithm'], 'SHA256');
  });

  it('malformed inputs are refused with a reason', () => {
    const base = '/live/stream1/index.m3u8?Expires=1893456000&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=AAAA';
    assert.equal(check(request(`${base}&Signature=BBBB`)), 'parameter Signature appears more than once');
    assert.equal(check(request('/a?Key-Pair-Id=K2JCJMDEHXQW5F&Signature=AAAA')), 'exactly one of Expires (a canned policy) and Policy (a custom one) is required');
    assert.equal(check(request('/a?Expires=1&Policy=e30_&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=AAAA')), 'exactly one of Expires (a canned policy) and Policy (a custom one) is required');
    assert.equal(check(request('/a?Expires=1&Signature=AAAA')), 'parameter Key-Pair-Id is missing');
    assert.equal(check(request(base.replace('Signature=AAAA', 'Signature=AA+A/A=='))), "the signature is not CloudFront's base64 (A-Z a-z 0-9 - _ ~)");
    assert.equal(check(request(base.replace('1893456000', '99999999999'))), 'Expires is not Unix seconds');
    assert.equal(check(request(`${base}&Hash-Algorithm=MD5`)), 'Hash-Algorithm MD5 is not SHA1 or SHA256');
    assert.equal(check(request(`/a?Policy=${'A'.repeat(9000)}&Key-Pair-Id=K2JCJMDEHXQW5F&Signature=AAAA`)), 'the policy and signature are longer than 8192 characters');
    assert.equal(check(request('/a')), 'none');
  });
});

// ---- CTA-5007 CAT ------------------------------------------------------------------------------

describe('cat', () => {
  const KEY_HEX = '403697de87af64611c1d32a05dab0fe1fcb715a86ab435f1ec99192d79569388';
  const T1 =
    '2D3RhEOhAQWhBExTeW1tZXRyaWMyNTZYfqwBZ2V5ZXZpbm4CZnVzZXItMQNjY2RuBBpw29iABRplU_EABhplU_EAB0gBAgMEBQYHCBkBNAAZATYBGQE3gdg0ghgYRMsAcQAZATijAKEAZWh0dHBzA6EBbi9saXZlL3N0cmVhbTEvCKEAZS5tM3U4GQE5gmNHRVRkSEVBRFggwYjKcyRsuJK0DqPCM17HBun7YNHwIdFyfv5tlrn2mbo';
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const settings = (o: Partial<CatSettings> = {}): CatSettings => ({
    keys: [
      { kid: 'Symmetric256', alg: 'HS256', secret: Buffer.from(KEY_HEX, 'hex') },
      { kid: 'es-1', alg: 'ES256', publicKey: ec.publicKey },
    ],
    issuer: 'eyevinn',
    audience: ['cdn'],
    urls: ['https://cdn.example.com'],
    queryParam: 'cat',
    clockSkewSeconds: 0,
    ...o,
  });
  const NOW = 1800000000;
  const check = (req: SignedRequest, s = settings(), now = NOW) => {
    const f = findCat(req, 'cat');
    if (f === undefined) return 'none';
    if ('problem' in f) return f.problem;
    return problemOf(verifyCat(f.token, req, s, now));
  };

  it('verifies the worked token T1 (tagged Mac0, HS256): catu, catm and catnip each decide', () => {
    const h = (path: string, ip = '203.0.113.9', method = 'GET') => request(path, { ip, method, headers: { 'CTA-Common-Access-Token': T1 } });
    assert.equal(check(h('/live/stream1/index.m3u8')), 'ok');
    assert.equal(check(h('/live/stream2/index.m3u8')), "the path /live/stream2/index.m3u8 fails catu's prefix match");
    assert.equal(check(h('/live/stream1/seg.ts')), "the extension .ts fails catu's exact match");
    assert.equal(check(h('/live/stream1/index.m3u8', '198.51.100.1')), 'address 198.51.100.1 is in no catnip entry');
    assert.equal(check(h('/live/stream1/index.m3u8', '203.0.113.9', 'POST')), 'method POST is not in catm');
    assert.equal(check(h('/live/stream1/index.m3u8'), settings({ urls: ['http://cdn.example.com'] })), "the scheme http fails catu's exact match");
    assert.equal(check(h('/live/stream1/index.m3u8'), settings({ issuer: 'someone-else' })), 'iss is not someone-else');
    assert.match(check(h('/live/stream1/index.m3u8'), settings(), 1893456000), /^expired at 1893456000/);
    const r = verifyCat(T1, h('/live/stream1/index.m3u8'), settings(), NOW);
    assert.deepEqual(r.ok && r.grant, { format: 'cat', exp: 1893456000, nbf: 1700000000, keyId: 'Symmetric256', id: '0102030405060708', scope: 'catu', narrow: true });
  });

  it("RFC 8392's MACed example (alg 4, a 64-bit tag) verifies and is refused as expired", () => {
    const a4 = Buffer.from('d83dd18443a10104a1044c53796d6d65747269633235365850a70175636f61703a2f2f61732e6578616d706c652e636f6d02656572696b77037818636f61703a2f2f6c696768742e6578616d706c652e636f6d041a5612aeb0051a5610d9f0061a5610d9f007420b7148093101ef6d789200', 'hex').toString('base64url');
    const r = verifyCat(a4, request('/x'), settings({ issuer: 'coap://as.example.com', audience: [] }), NOW);
    assert.equal(problemOf(r), 'expired at 1444064944 (2015-10-05T17:09:04.000Z)');
    assert.deepEqual(r.fields.find((f) => f.name === 'tag'), { name: 'tag', value: '093101ef6d789200', check: 'matches key Symmetric256', ok: true });
  });

  it('tokens @eyevinn/cat generates verify; tokens Streamgate issues pass @eyevinn/cat validate', async () => {
    const lib = new CAT({ keys: { Symmetric256: Buffer.from(KEY_HEX, 'hex') }, expectCwtTag: true });
    const exp = Math.floor(Date.now() / 1000) + 600;
    const theirs = await lib.generateFromJson(
      { iss: 'eyevinn', aud: 'cdn', exp, catu: { path: { 'prefix-match': '/hls/acme/cam1/' } }, catm: ['GET'] } as never,
      { type: 'mac', alg: 'HS256', kid: 'Symmetric256', generateCwtId: true },
    );
    assert.ok(theirs);
    assert.equal(check(request(`/hls/acme/cam1/index.m3u8?cat=${theirs}`), settings(), exp - 600), 'ok');
    assert.equal(check(request(`/hls/acme/cam2/index.m3u8?cat=${theirs}`), settings(), exp - 600), "the path /hls/acme/cam2/index.m3u8 fails catu's prefix match");

    const mine = signCat(
      new Map<number, unknown>([
        [1, 'eyevinn'],
        [3, 'cdn'],
        [4, exp],
        [7, Buffer.from('0a0b0c', 'hex')],
        [312, new Map([[3, new Map([[1, '/hls/acme/cam1/']])]])],
      ]),
      'Symmetric256',
      { alg: 'HS256', secret: Buffer.from(KEY_HEX, 'hex') },
    );
    const ok = await lib.validate(mine, 'mac', { issuer: 'eyevinn', audience: ['cdn'], url: new URL('https://cdn.example.com/hls/acme/cam1/index.m3u8') });
    assert.equal(ok.error, undefined);
    const refused = await lib.validate(mine, 'mac', { issuer: 'eyevinn', audience: ['cdn'], url: new URL('https://cdn.example.com/hls/acme/cam2/index.m3u8') });
    assert.match(String(refused.error?.message), /not allowed/);
    assert.equal(check(request('/hls/acme/cam1/a.ts', { cookies: { 'CTA-Common-Access-Token': mine } }), settings(), exp - 600), 'ok');
  });

  it('ES256 (COSE_Sign1) tokens verify with the public key; with the wrong key they refuse', () => {
    const exp = NOW + 60;
    const claims = new Map<number, unknown>([
      [1, 'eyevinn'],
      [3, ['other', 'cdn']],
      [4, exp],
    ]);
    const token = signCat(claims, 'es-1', { alg: 'ES256', privateKey: ec.privateKey });
    assert.equal(check(request('/any', { headers: { 'CTA-Common-Access-Token': token } })), 'ok');
    const stranger = signCat(claims, 'es-1', { alg: 'ES256', privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey });
    assert.equal(check(request('/any', { headers: { 'CTA-Common-Access-Token': stranger } })), 'the signature does not match: the key, algorithm or the claims differ');
  });

  it('claims that narrow: catreplay, catgeoiso3166, an uncheckable restriction, an ASN-only catnip, a missing exp', () => {
    const mac = (claims: Array<[number, unknown]>) => signCat(new Map<number, unknown>([[1, 'eyevinn'], [3, 'cdn'], ...claims]), 'Symmetric256', { alg: 'HS256', secret: Buffer.from(KEY_HEX, 'hex') });
    const at = (t: string, o: Parameters<typeof request>[1] = {}) => check(request('/live/a.m3u8', { ...o, headers: { 'CTA-Common-Access-Token': t } }));
    const once = verifyCat(mac([[4, NOW + 60], [7, Buffer.from('ff', 'hex')], [308, 1]]), request('/live/a.m3u8'), settings(), NOW);
    assert.deepEqual(once.ok && once.grant.replay, 'prohibited');
    assert.equal(at(mac([[4, NOW + 60], [308, 1]])), 'catreplay prohibits reuse, and the token has no cti to track it by');
    assert.equal(at(mac([[4, NOW + 60], [316, ['SE', 'US-CA']]]), { country: 'US' }), 'ok');
    assert.equal(at(mac([[4, NOW + 60], [316, ['SE']]]), { country: 'NO' }), 'country NO is not in catgeoiso3166');
    assert.equal(at(mac([[4, NOW + 60], [316, ['SE']]])), 'catgeoiso3166 restricts countries, and the viewer country is unknown');
    assert.equal(at(mac([[4, NOW + 60], [315, new Map()]])), 'the token carries cath (315), a restriction this origin cannot check');
    assert.equal(at(mac([[4, NOW + 60], [311, [64496]]]), { ip: '203.0.113.1' }), 'catnip names autonomous systems, which this origin cannot check');
    assert.equal(at(mac([[4, NOW + 60], [311, [new Tag([24, Buffer.from([203, 0, 113])], 52)]]]), { ip: '203.0.113.1' }), 'ok');
    assert.equal(at(mac([[311, [new Tag(Buffer.from([203, 0, 113, 1]), 52)]]]), { ip: '203.0.113.1' }), 'exp is missing (a token without one would never expire)');
    assert.equal(at(mac([[4, NOW + 60], [310, 2]])), 'catv 2 is not version 1');
  });

  it('malformed tokens are refused with a reason', () => {
    const at = (t: string) => check(request('/x', { headers: { 'CTA-Common-Access-Token': t } }));
    assert.equal(at('not base64!'), 'the token is not base64url');
    assert.equal(at(Buffer.from([0xff, 0x00]).toString('base64url')), 'not a CAT: not CBOR');
    assert.equal(at(Buffer.from([0x83, 0x01, 0x02, 0x03]).toString('base64url')), 'not a CAT: not a COSE_Mac0 or COSE_Sign1 (a 4-element array)');
    assert.equal(at(T1.slice(0, 40)), 'not a CAT: not CBOR');
    // node-cat's default (no expectCwtTag): a text payload is not a CWT
    const textPayload = Buffer.concat([Buffer.from('d18443a10105a1044c53796d6d6574726963323536', 'hex'), Buffer.from([0x62, 0x61, 0x62]), Buffer.from([0x41, 0x00])]).toString('base64url');
    assert.equal(at(textPayload), 'not a CAT: the payload is a text string, not a byte string holding the claims (a CWT needs a bstr payload)');
    assert.equal(at('A'.repeat(9000)), 'the token is longer than 8192 characters');
  });
});

// ---- Wowza SecureToken ---------------------------------------------------------------------------

describe('wowza-securetoken', () => {
  const settings = (o: Partial<WowzaSettings> = {}): WowzaSettings => ({ secret: 'mySharedSecret', prefix: 'wowzatoken', algorithm: 'sha256', includeClientIp: false, requireEndTime: true, clockSkewSeconds: 0, ...o });
  const NOW = 1700001000;

  it('verifies the worked hashes W1–W3 (SHA-256 VOD, SHA-512 with a custom parameter and the client address, SHA-384 with its own prefix)', () => {
    const w1 = '/vod/_definst_/mp4:sample.mp4/playlist.m3u8?wowzatokenstarttime=1700000000&wowzatokenendtime=1700003600&wowzatokenhash=ZoPQX8CRtyPbtdODBzo4z4cMzWZ-HfgnGaoyQLxOh-A=';
    const r1 = verifyWowza(request(w1), settings(), NOW);
    assert.equal(problemOf(r1), 'ok');
    assert.equal(r1.signed, 'vod/_definst_/mp4:sample.mp4?<secret>&wowzatokenendtime=1700003600&wowzatokenstarttime=1700000000');
    const w2 = '/live/_definst_/myStream/chunklist_w1.m3u8?wowzatokenCustomParameter=abcdef&wowzatokenstarttime=1700000000&wowzatokenendtime=1700003600&wowzatokenhash=syhS6XQkuxiOnL8l6B0U7j1W8J2l3VuhCz1J_44riwxBpuZgssaB2_o01Opjd9esBQzoXvdyKS1mrFBcUimvHg==';
    assert.equal(problemOf(verifyWowza(request(w2, { ip: '192.0.2.10' }), settings({ algorithm: 'sha512', includeClientIp: true }), NOW)), 'ok');
    assert.match(problemOf(verifyWowza(request(w2, { ip: '192.0.2.11' }), settings({ algorithm: 'sha512', includeClientIp: true }), NOW)), /^the hash does not match/);
    const w3 = '/live/_definst_/myStream/media_4.ts?myprefixendtime=1700003600&myprefixhash=nI4H-_uGbj_PLXByZ2p_W0Wflyay80_Bt7xKtB2eon6DzQHFgvRhyQcGdae5Pp-l';
    assert.equal(problemOf(verifyWowza(request(w3), settings({ prefix: 'myprefix', secret: 'xyzSharedSecret', algorithm: 'sha384' }), NOW)), 'ok');
    // another stream, expiry, a changed parameter
    assert.match(problemOf(verifyWowza(request(w1.replace('sample.mp4/', 'other.mp4/')), settings(), NOW)), /^the hash does not match/);
    assert.match(problemOf(verifyWowza(request(w1), settings(), 1700003600)), /^expired at 1700003600/);
    assert.match(problemOf(verifyWowza(request(w1.replace('endtime=1700003600', 'endtime=1800003600')), settings(), NOW)), /^the hash does not match/);
  });

  it("builds the string Wowza's SecureToken article prints for its RTSP example, in its required order", () => {
    // The article's inputs: content path vod/myInstance/sample.mp4, wowzatokenendtime=1500000000, the public
    // parameter wowzatokenCustomParameter=abcdef, shared secret xyzSharedSecret, no client address. The hash
    // it prints beside this string does not reproduce from it with SHA-256, -384 or -512 (nor with the
    // other spellings the article gives), so the string is the worked example asserted here.
    const params: Array<[string, string]> = [
      ['wowzatokenendtime', '1500000000'],
      ['wowzatokenCustomParameter', 'abcdef'],
    ];
    assert.equal(wowzaHashInput('vod/myInstance/sample.mp4', params, 'xyzSharedSecret', undefined), 'vod/myInstance/sample.mp4?wowzatokenCustomParameter=abcdef&wowzatokenendtime=1500000000&xyzSharedSecret');
    // with a client address, it sorts among the parameters as a bare item, as the article's PHP sample does
    assert.equal(wowzaHashInput('vod/_definst_/mp4:sample.mp4', [['wowzatokenendtime', '1459767008'], ['wowzatokenstarttime', '1459765208']], 'abcde', '192.168.1.4'), 'vod/_definst_/mp4:sample.mp4?192.168.1.4&abcde&wowzatokenendtime=1459767008&wowzatokenstarttime=1459765208');
  });

  it('what Streamgate issues verifies; no endtime, a doubled parameter and a missing hash are refused', () => {
    const params = signWowza('live/_definst_/cam1', { start: 1700000000, exp: 1700003600 }, settings());
    const q = params.map(([k, v]) => `${k}=${v}`).join('&');
    assert.equal(problemOf(verifyWowza(request(`/live/_definst_/cam1/playlist.m3u8?${q}`), settings(), NOW)), 'ok');
    // the documented rule, computed here: the sorted items after the content path, SHA-256, - and _ for + and /
    const expected = createHash('sha256').update('live/_definst_/cam1?mySharedSecret&wowzatokenendtime=1700003600&wowzatokenstarttime=1700000000').digest('base64').replace(/\+/g, '-').replace(/\//g, '_');
    assert.equal(q, `wowzatokenstarttime=1700000000&wowzatokenendtime=1700003600&wowzatokenhash=${expected}`);
    const noEnd = signWowza('live/_definst_/cam1', { exp: 0 }, settings()).filter(([k]) => k !== 'wowzatokenendtime');
    assert.equal(problemOf(verifyWowza(request(`/live/_definst_/cam1/playlist.m3u8?${noEnd.map(([k, v]) => `${k}=${v}`).join('&')}`), settings(), NOW)), 'wowzatokenendtime is missing (this issuer requires an expiry)');
    assert.equal(problemOf(verifyWowza(request(`/live/x/y.m3u8?${q}&wowzatokenendtime=1`), settings(), NOW)), 'parameter wowzatokenendtime appears more than once');
    assert.equal(problemOf(verifyWowza(request('/live/x/y.m3u8?wowzatokenendtime=1'), settings(), NOW)), 'parameter wowzatokenhash is missing');
    // an encoded = or & would merge two signed parameters into one (dropping endtime): refused
    const merged = q.replace('wowzatokenstarttime=1700000000&wowzatokenendtime=1700003600', 'wowzatokenendtime%3D1700003600%26wowzatokenstarttime=1700000000');
    assert.equal(problemOf(verifyWowza(request(`/live/_definst_/cam1/playlist.m3u8?${merged}`), settings({ requireEndTime: false }), NOW)), 'parameter wowzatokenendtime=1700003600&wowzatokenstarttime holds an encoded = or &');
  });
});

// ---- Nimble WMSAuth ------------------------------------------------------------------------------

describe('nimble-wmsauth', () => {
  const settings: NimbleSettings = { key: 'defaultpassword', toleranceSeconds: 0, maxValidMinutes: 1440 };
  const NOW = 1700000100;
  const check = (req: SignedRequest, s = settings, now = NOW) => {
    const v = findNimble(req);
    if (v === undefined) return 'none';
    if (typeof v === 'object') return v.problem;
    return problemOf(verifyNimble(v, req, s, now));
  };

  it("verifies the samples' worked signatures N1 (address), N2 (address and stream), N3 (pay-per-view id)", () => {
    const N1 = 'c2VydmVyX3RpbWU9MTEvMTQvMjAyMyAxMDoxMzoyMCBQTSZoYXNoX3ZhbHVlPSs0L1Y0b21pZFJWalJYc09WN0RNYUE9PSZ2YWxpZG1pbnV0ZXM9MjA=';
    const N2 = 'c2VydmVyX3RpbWU9MTEvMTQvMjAyMyAxMDoxMzoyMCBQTSZoYXNoX3ZhbHVlPVBzNGNMbGF5eTdxeThYRTVvTHRzR1E9PSZ2YWxpZG1pbnV0ZXM9MjAmc3RybV9sZW49MTE=';
    const N3 = 'c2VydmVyX3RpbWU9MTEvMTQvMjAyMyAxMDoxMzoyMCBQTSZoYXNoX3ZhbHVlPTdTdFRGd0kzQ01xUVowVHRYWUlNNmc9PSZ2YWxpZG1pbnV0ZXM9MjQwJmlkPTU=';
    assert.equal(check(request(`/live/stream/playlist.m3u8?wmsAuthSign=${N1}`, { ip: '203.0.113.7' })), 'ok');
    assert.match(check(request(`/live/stream/playlist.m3u8?wmsAuthSign=${N1}`, { ip: '203.0.113.8' })), /^hash_value does not match/);
    assert.equal(check(request(`/live/stream/chunk_1.ts?wmsAuthSign=${N2}`, { ip: '203.0.113.7' })), 'ok');
    assert.match(check(request(`/live/other/chunk_1.ts?wmsAuthSign=${N2}`, { ip: '203.0.113.7' })), /^hash_value does not match/);
    assert.equal(check(request(`/vod/any.mp4/playlist.m3u8?wmsAuthSign=${N3}`)), 'ok');
    // validity: server_time + validminutes
    assert.match(check(request(`/live/stream/playlist.m3u8?wmsAuthSign=${N1}`, { ip: '203.0.113.7' }), settings, 1700000000 + 20 * 60), /^expired at 1700001200/);
    const r = verifyNimble(N2, request('/live/stream/a.ts', { ip: '203.0.113.7' }), settings, NOW);
    assert.deepEqual(r.ok && r.grant, { format: 'nimble-wmsauth', exp: 1700001200, nbf: 1700000000, scope: 'stream live/stream' });
  });

  it('server_time in both sample layouts; signing reproduces N2; a + read as a space is restored', () => {
    assert.equal(parseServerTime('11/14/2023 10:13:20 PM'), 1700000000);
    assert.equal(parseServerTime('01/02/2024 01:02:03 AM'), 1704157323);
    assert.equal(parseServerTime('1/2/2024 1:02:03 AM'), 1704157323, "the JavaScript sample's unpadded layout");
    assert.equal(parseServerTime('2/30/2024 1:00:00 AM'), undefined);
    assert.equal(serverTime(1700000000), '11/14/2023 10:13:20 PM');
    const mine = signNimble({ issued: 1700000000, validMinutes: 20, ip: '203.0.113.7', stream: 'live/stream' }, 'defaultpassword');
    assert.equal(mine, 'c2VydmVyX3RpbWU9MTEvMTQvMjAyMyAxMDoxMzoyMCBQTSZoYXNoX3ZhbHVlPVBzNGNMbGF5eTdxeThYRTVvTHRzR1E9PSZ2YWxpZG1pbnV0ZXM9MjAmc3RybV9sZW49MTE=');
    const N1 = 'c2VydmVyX3RpbWU9MTEvMTQvMjAyMyAxMDoxMzoyMCBQTSZoYXNoX3ZhbHVlPSs0L1Y0b21pZFJWalJYc09WN0RNYUE9PSZ2YWxpZG1pbnV0ZXM9MjA=';
    assert.equal(findNimble(request(`/a?wmsAuthSign=${N1.replace(/\+/g, '%20')}`)), N1);
  });

  it('malformed signatures are refused with a reason', () => {
    const at = (text: string, ip = '203.0.113.7') => check(request(`/live/stream/a.m3u8?wmsAuthSign=${Buffer.from(text).toString('base64')}`, { ip }));
    assert.equal(at('server_time=11/14/2023 10:13:20 PM&validminutes=20'), 'the signature needs server_time, hash_value and validminutes');
    assert.equal(at('server_time=2023-11-14&hash_value=x&validminutes=20'), 'server_time is not M/D/YYYY h:mm:ss AM|PM (UTC)');
    assert.equal(at('server_time=11/14/2023 10:13:20 PM&hash_value=x&validminutes=99999'), "validminutes 99999 is more than this issuer's 1440");
    assert.equal(at('server_time=11/14/2023 10:13:20 PM&hash_value=x&validminutes=20&validminutes=20'), 'the signature holds validminutes more than once');
    assert.equal(at('evil=1'), 'the signature holds "evil", not a WMSAuth field');
    assert.equal(at('server_time=11/14/2023 10:13:20 PM&hash_value=x&validminutes=20&strm_len=99'), 'strm_len 99 is longer than the path live/stream/a.m3u8');
    assert.equal(check(request('/a?wmsAuthSign=not_base64!')), 'wmsAuthSign is not standard base64');
    // an address-bound signature re-encoded with the address as its id: the hashed text is the same, refused
    const bound = Buffer.from(signNimble({ issued: NOW - 10, validMinutes: 20, ip: '203.0.113.7', stream: 'live/stream' }, 'defaultpassword'), 'base64').toString('latin1');
    const spoofed = Buffer.from(`${bound}&id=203.0.113.7`, 'latin1').toString('base64');
    assert.equal(check(request(`/live/stream/a.ts?wmsAuthSign=${spoofed}`, { ip: '198.51.100.1' })), 'id begins with an address: it could stand for an address binding');
    assert.equal(check(request('/a?wmsAuthSign=a&wmsAuthSign=b')), 'parameter wmsAuthSign appears more than once');
  });
});
