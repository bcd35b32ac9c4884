// Signed URLs, signed cookies and CATs at the origin (docs/callers.md#signed-urls-and-cookies-from-a-cdn):
// ffmpeg publishes over RTMP to Debian's nginx-rtmp writing HLS, the same nginx serves it behind
// auth_request to a real Streamgate process on a private Redis, and a viewer with a cookie jar plays
// it with a CloudFront signed cookie set (AWS's signer), an EdgeAuth hdnts query (Akamai's SDK) and a
// CTA-Common-Access-Token header (Eyevinn's library): one full decision per viewer, then the session
// credential. A tampered signature, an expired credential and a path outside the signed grant are 403.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import EdgeAuth from 'akamai-edgeauth';
import { getSignedCookies } from '@aws-sdk/cloudfront-signer';
import { CAT } from '@eyevinn/cat';
import { STREAM, delta, get, startHlsStand, type HlsStand } from './hls-stand.js';

const COOKIE = 'streamgate_session';
const FULL_ALLOWED = '{action="subscribe",adapter="auth-request",result="allow",reason="allowed",kind="full"}';
const CREDENTIAL_ALLOWED = '{action="subscribe",adapter="auth-request",result="allow",reason="allowed",kind="credential"}';
const HEX_KEY = '00112233445566778899aabbccddeeff';
const CAT_KEY = '403697de87af64611c1d32a05dab0fe1fcb715a86ab435f1ec99192d79569388';
const nowS = () => Math.floor(Date.now() / 1000);

/** What a viewer presents besides its session cookie: a query on the playlist URL, cookies and headers on every request. */
interface Presented {
  query?: string;
  cookies?: Record<string, string>;
  headers?: Record<string, string>;
}

/** A player: the playlist every second with its credential, every new segment by its relative URI, the session cookie kept. */
async function play(port: number, p: Presented, ms: number): Promise<Array<{ target: string; status: number; media?: boolean }>> {
  let session: string | undefined;
  const seen = new Set<string>();
  const log: Array<{ target: string; status: number; media?: boolean }> = [];
  const fetch = async (target: string) => {
    const jar = { ...p.cookies, ...(session !== undefined ? { [COOKIE]: session } : {}) };
    const cookie = Object.entries(jar)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
    const a = await get(port, target, { cookie: cookie === '' ? undefined : cookie, headers: p.headers });
    for (const line of a.setCookie) {
      const m = new RegExp(`^${COOKIE}=([^;]*)`).exec(line);
      if (m) session = m[1];
    }
    log.push({ target, status: a.status, ...(target.endsWith('.ts') ? { media: a.body[0] === 0x47 } : {}) });
    return a;
  };
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const pl = await fetch(`/hls/${STREAM}.m3u8${p.query ? `?${p.query}` : ''}`);
    if (pl.status === 200) {
      for (const uri of pl.body.toString('utf8').split('\n').filter((l) => l.endsWith('.ts'))) {
        if (seen.has(uri)) continue;
        seen.add(uri);
        await fetch(new URL(uri, `http://nginx/hls/${STREAM}.m3u8`).pathname);
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return log;
}

describe('signed credentials at the origin: nginx auth_request to Streamgate, HLS from nginx-rtmp', () => {
  let s: HlsStand;
  let policy: number;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const PRIVATE_PEM = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const cat = new CAT({ keys: { Symmetric256: Buffer.from(CAT_KEY, 'hex') }, expectCwtTag: true });

  before(async () => {
    s = await startHlsStand({ STREAMGATE_SESSIONS_HTTP_CREDENTIALSECONDS: '60' });
    const pub = await s.api('POST', '/api/publish_token', { label: 'source', streams: [{ streamName: STREAM }], subscribeRequiresAuth: true });
    assert.equal(pub.status, 200, JSON.stringify(pub.body));
    const sub = await s.api('POST', '/api/subscribe_token', { label: 'cdn viewers', streams: [{ streamName: STREAM }] });
    policy = sub.body.data.id;
    for (const body of [
      { label: 'akamai', type: 'akamai-edgeauth', secret: HEX_KEY },
      { label: 'cloudfront', type: 'cloudfront', settings: { publicKeys: [{ id: 'KE2E', key: rsa.publicKey.export({ type: 'spki', format: 'pem' }) }], urls: ['https://cdn.example.com'] } },
      { label: 'cat', type: 'cat', issuer: 'eyevinn', secret: CAT_KEY, settings: { secretKeyId: 'Symmetric256' } },
    ]) {
      const r = await s.api('POST', '/api/issuers', { policyTokenId: policy, ...body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
  });
  after(async () => {
    await s?.stop();
  });

  const cloudfront = (resource: string, exp: number): Presented => {
    const policyJson = JSON.stringify({ Statement: [{ Resource: `https://cdn.example.com${resource}`, Condition: { DateLessThan: { 'AWS:EpochTime': exp } } }] });
    return { cookies: getSignedCookies({ keyPairId: 'KE2E', privateKey: PRIVATE_PEM, policy: policyJson, algorithm: 'SHA256' }) as unknown as Record<string, string> };
  };
  const akamai = (acl: string, start: number, end: number): Presented => ({ query: `hdnts=${new EdgeAuth({ key: HEX_KEY, startTime: start, endTime: end }).generateACLToken(acl)}` });
  const catHeader = async (prefix: string, exp: number): Promise<Presented> => {
    const t = await cat.generateFromJson({ iss: 'eyevinn', exp, catu: { path: { 'prefix-match': prefix } } } as never, { type: 'mac', alg: 'HS256', kid: 'Symmetric256', generateCwtId: true });
    return { headers: { 'CTA-Common-Access-Token': t! } };
  };

  for (const [format, make] of [
    ['CloudFront signed cookies', async () => cloudfront(`/hls/${STREAM}*`, nowS() + 300)],
    ['an EdgeAuth hdnts query', async () => akamai(`/hls/${STREAM}*`, nowS() - 5, nowS() + 300)],
    ['a CTA-Common-Access-Token header', async () => catHeader(`/hls/${STREAM}`, nowS() + 300)],
  ] as const) {
    it(`plays with ${format}: every request 200, one full decision, the rest on the session credential`, async () => {
      const before = await s.decisions();
      const log = await play(s.httpPort, await make(), 5000);
      const counted = delta(before, await s.decisions());
      const segments = log.filter((l) => l.target.endsWith('.ts'));
      console.log(`# ${format}: ${log.length} requests (${segments.length} segments); decisions ${JSON.stringify(counted)}`);
      assert.deepEqual(
        log.filter((l) => l.status !== 200),
        [],
      );
      assert.ok(segments.length >= 3 && segments.every((x) => x.media), JSON.stringify(segments));
      assert.deepEqual(counted, { [FULL_ALLOWED]: 1, [CREDENTIAL_ALLOWED]: log.length - 1 });
    });
  }

  // expired a minute ago: past the issuers' default clockSkewSeconds (30)
  it('a tampered signature, an expired credential and a path outside the grant are refused (403) by nginx', async () => {
    const playlist = `/hls/${STREAM}.m3u8`;
    const status = async (p: Presented) => (await get(s.httpPort, `${playlist}${p.query ? `?${p.query}` : ''}`, { cookie: p.cookies ? Object.entries(p.cookies).map(([k, v]) => `${k}=${v}`).join('; ') : undefined, headers: p.headers })).status;
    const flip = (v: string, i: number) => v.slice(0, i) + (v[i] === 'A' ? 'B' : 'A') + v.slice(i + 1);

    const cf = cloudfront(`/hls/${STREAM}*`, nowS() + 300);
    const sig = cf.cookies!['CloudFront-Signature']!;
    const seen = {
      cloudfront: [
        await status({ cookies: { ...cf.cookies, 'CloudFront-Signature': flip(sig, 10) } }),
        await status(cloudfront(`/hls/${STREAM}*`, nowS() - 60)),
        await status(cloudfront('/hls/cam2*', nowS() + 300)),
      ],
      akamai: [
        await status({ query: akamai(`/hls/${STREAM}*`, nowS() - 5, nowS() + 300).query!.replace(/hmac=(.)/, (_m, c: string) => `hmac=${c === '0' ? '1' : '0'}`) }),
        await status(akamai(`/hls/${STREAM}*`, nowS() - 600, nowS() - 60)),
        await status(akamai('/hls/cam2*', nowS() - 5, nowS() + 300)),
      ],
      cat: [
        await status({ headers: { 'CTA-Common-Access-Token': flip((await catHeader(`/hls/${STREAM}`, nowS() + 300)).headers!['CTA-Common-Access-Token']!, 60) } }),
        await status(await catHeader(`/hls/${STREAM}`, nowS() - 60)),
        await status(await catHeader('/hls/cam2', nowS() + 300)),
      ],
    };
    assert.deepEqual(seen, { cloudfront: [403, 403, 403], akamai: [403, 403, 403], cat: [403, 403, 403] });
    // and without any credential the secured stream is 401
    assert.equal(await status({}), 401);
  });

  it('a CAT with catreplay 1 is admitted once across two instances sharing Redis', async () => {
    const once = await cat.generateFromJson({ iss: 'eyevinn', exp: nowS() + 300, catreplay: 1 } as never, { type: 'mac', alg: 'HS256', kid: 'Symmetric256', generateCwtId: true });
    const ask = async (base: string) => {
      const r = await fetch(`${base}/hooks/auth-request`, { headers: { 'x-original-uri': `/hls/${STREAM}.m3u8`, 'x-real-ip': '127.0.0.1', 'cta-common-access-token': once! } });
      return [r.status, ((await r.json()) as { reason?: string }).reason ?? 'allowed'];
    };
    // the other instance learns of the issuers through the store
    const [first, second, again] = [await ask(s.sg.base), await ask(s.other.base), await ask(s.sg.base)];
    assert.deepEqual([first, second, again], [[200, 'allowed'], [403, 'uses_exhausted'], [403, 'uses_exhausted']]);
  });
});
