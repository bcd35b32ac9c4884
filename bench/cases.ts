// The request shapes measured, made with tokens of the Streamgate under test.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Case } from './lib/load.js';
import type { Target } from './lib/targets.js';
import type { IssuerCase } from './seed.js';

export async function api(base: string, secret: string, method: string, p: string, body?: unknown) {
  const r = await fetch(base + p, { method, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  return (await r.json()) as { data: Record<string, unknown> & { id: number; token: string } };
}

/** Every case's name, in the order they run (BENCH_CASES picks among them). */
export const CASE_NAMES = [
  'authorize (JSON)',
  'nginx-rtmp (form)',
  'mediamtx auth',
  'mediamtx auth, limited token',
  'auth-request',
  'auth-request, session credential',
  'authorize (JSON), issuer JWT',
  'auth-request, akamai-edgeauth',
  'auth-request, cloudfront cookies',
  'auth-request, cat',
  'auth-request, wowza-securetoken',
  'auth-request, nimble-wmsauth',
  'director subscribe',
  'deny (stream)',
  'bind, already bound',
] as const;
export const AUTHORIZE = 'authorize (JSON)';
export const CREDENTIAL = 'auth-request, session credential';
export const ISSUER_JWT = 'authorize (JSON), issuer JWT';
/** The signed-URL cases (docs/api.md#signed-url-issuers), by issuer type. */
export const SIGNED_CASES = {
  'akamai-edgeauth': 'auth-request, akamai-edgeauth',
  cloudfront: 'auth-request, cloudfront cookies',
  cat: 'auth-request, cat',
  'wowza-securetoken': 'auth-request, wowza-securetoken',
  'nimble-wmsauth': 'auth-request, nimble-wmsauth',
} as const;

/**
 * The signed-URL cases: an issuer of each format narrowing one subscribe token, a credential from
 * its /sign for /hls/cam1/*, presented again and again as a viewer's player does after its first
 * answer: the query, the cookies or the header again, with the session credential that answer set
 * (docs/api.md#signed-url-issuers: one full decision per viewer, then the credential, checked in
 * memory and tied to the signed credential it was started with). The first request must be allowed
 * as the policy token and set a session credential, or the run stops.
 */
async function signedCases(sg: Target, secret: string, selected: ReadonlySet<string>): Promise<Case[]> {
  const wanted = Object.entries(SIGNED_CASES).filter(([, name]) => selected.has(name));
  if (wanted.length === 0) return [];
  const policy = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'signed policy', streams: [{ streamName: 'cam1' }] })).data;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const bodies: Record<string, Record<string, unknown>> = {
    'akamai-edgeauth': { secret: randomBytes(32).toString('hex') },
    cloudfront: {
      settings: { publicKeys: [{ id: 'KBENCH', key: rsa.publicKey.export({ type: 'spki', format: 'pem' }) }], urls: ['https://cdn.bench.example'], signingKeyId: 'KBENCH' },
      signingKey: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    },
    cat: { issuer: 'bench', secret: randomBytes(32).toString('hex'), settings: { secretKeyId: 'bench-hs256' } },
    'wowza-securetoken': { secret: randomBytes(24).toString('hex') },
    'nimble-wmsauth': { secret: randomBytes(24).toString('hex') },
  };
  const ip = '203.0.113.7';
  const out: Case[] = [];
  for (const [type, name] of wanted) {
    const issuer = (await api(sg.base, secret, 'POST', '/api/issuers', { label: `bench ${type}`, type, policyTokenId: policy.id, ...bodies[type] })).data;
    if (typeof issuer.id !== 'number') throw new Error(`${sg.name}: creating the ${type} issuer answered ${JSON.stringify(issuer)}`);
    const path = type === 'wowza-securetoken' ? '/hls/cam1' : '/hls/cam1/*';
    // no address bound (the bench's x-real-ip is not a trusted proxy's); WMSAuth then binds an id
    const signBody = { path, lifetimeSeconds: 86_400, ...(type === 'nimble-wmsauth' ? { id: 'bench-viewer' } : {}) };
    const signed = (await api(sg.base, secret, 'POST', `/api/issuers/${issuer.id}/sign`, signBody)).data as unknown as {
      queryString?: string;
      cookies?: Record<string, string>;
      headers?: Record<string, string>;
    };
    const uri = type === 'wowza-securetoken' ? '/hls/cam1/playlist.m3u8' : '/hls/cam1/index.m3u8';
    const headers: Record<string, string> = { 'x-original-uri': type === 'cloudfront' || type === 'cat' ? uri : `${uri}?${signed.queryString}`, 'x-real-ip': ip };
    if (type === 'cloudfront') headers.cookie = Object.entries(signed.cookies ?? {}).map(([k, v]) => `${k}=${v}`).join('; ');
    if (type === 'cat') Object.assign(headers, signed.headers);
    const check = await fetch(`${sg.base}/hooks/auth-request`, { headers });
    const body = await check.text();
    if (check.status !== 200 || check.headers.get('x-streamgate-token-id') !== String(policy.id)) {
      throw new Error(`${sg.name}: the ${type} credential was answered ${check.status} (token id ${check.headers.get('x-streamgate-token-id')}) ${body}, not 200 as policy token ${policy.id}`);
    }
    const session = check.headers.getSetCookie().find((c) => c.startsWith('streamgate_session='));
    if (session === undefined) throw new Error(`${sg.name}: the ${type} credential's first answer set no session credential (set-cookie ${JSON.stringify(check.headers.getSetCookie())})`);
    const pair = session.split(';')[0].trim();
    headers.cookie = headers.cookie === undefined ? pair : `${headers.cookie}; ${pair}`;
    out.push({ name, route: '/hooks/auth-request', method: 'GET', path: '/hooks/auth-request', headers, expect: 200 });
  }
  return out;
}

/**
 * The viewer's first request with its token, as nginx auth_request forwards it: its answer's
 * Set-Cookie (name=value) is the session credential the credential case presents. Without one
 * (viewer sessions off or not in this build) the case would measure refusals or full decisions:
 * the run stops instead.
 */
async function sessionCookie(sg: Target, token: string, ip: string): Promise<string> {
  const r = await fetch(`${sg.base}/hooks/auth-request`, { headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${token}`, 'x-real-ip': ip } });
  const body = await r.text();
  const setCookie = r.headers.getSetCookie().find((c) => c.startsWith('streamgate_session='));
  if (r.status !== 200 || setCookie === undefined) {
    throw new Error(`${sg.name}: no session credential in the answer to the first auth-request (status ${r.status}, set-cookie ${JSON.stringify(r.headers.getSetCookie())}, body ${body})`);
  }
  return setCookie.split(';')[0].trim();
}

/**
 * The issuer-JWT case: the token case ('authorize (JSON)') with one credential issuer's JWT as its
 * token, the same JWT every time (docs/api.md#repeat-presentations-and-revocation: after the
 * first, a hash and the checks, no signature). One request first must be allowed as the policy
 * token, or the run stops.
 */
async function issuerJwtCase(sg: Target, issuer: IssuerCase | undefined): Promise<Case> {
  if (!issuer) throw new Error(`${sg.name}: the issuer-JWT case needs its issuer seeded before Streamgate starts (bench/seed.ts prepareStore)`);
  const headers = { 'content-type': 'application/json' };
  const body = JSON.stringify({ action: 'subscribe', token: issuer.jwt, streamName: 'cam1', clientIp: '203.0.113.7', protocol: 'hls' });
  const check = await fetch(`${sg.base}/hooks/authorize`, { method: 'POST', headers, body });
  const answer = await check.text();
  const tokenId = (JSON.parse(answer) as { tokenId?: number }).tokenId;
  if (check.status !== 200 || tokenId !== issuer.policyTokenId) {
    throw new Error(`${sg.name}: the issuer JWT was answered ${check.status} (token id ${tokenId}) ${answer}, not 200 as policy token ${issuer.policyTokenId}`);
  }
  return { name: ISSUER_JWT, route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers, body, expect: 200 };
}

/**
 * The request shapes, with the tokens of the Streamgate under test: the selected ones (all by
 * default), in CASE_NAMES order. `issuer`: what prepareStore seeded for the issuer-JWT case.
 */
export async function cases(sg: Target, secret: string, selected: ReadonlySet<string> = new Set(CASE_NAMES), issuer?: IssuerCase): Promise<Case[] & { subscribeTokenId?: number }> {
  // BENCH_SHARING=on: the account's token-sharing policy is on, so every allowed use is offered to
  // detection (docs/api.md#token-sharing); its cost is that against STREAMGATE_SHARING_ENABLED=false
  if (process.env.BENCH_SHARING === 'on') await api(sg.base, secret, 'PUT', '/api/sharing/policy', { enabled: true });
  const sub = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'bench', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'bench' } })).data;
  const bind = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'bind', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: 1 })).data;
  // a limited token: its admission registers the session in the decision's store step (one connection id, re-registered each time)
  const limited = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'limited', streams: [{ streamName: 'cam1' }], maxConcurrentSessions: 1 })).data;
  const mediamtx = (token: string, id: string | null) =>
    JSON.stringify({ ip: '203.0.113.7', user: '', password: '', token, action: 'read', path: 'cam1', protocol: 'hls', id, query: '' });
  const json = { 'content-type': 'application/json' };
  const authorize = (token: string, streamName = 'cam1') => JSON.stringify({ action: 'subscribe', token, streamName, clientIp: '203.0.113.7', protocol: 'hls' });
  await fetch(`${sg.base}/hooks/authorize`, { method: 'POST', headers: json, body: authorize(bind.token) }); // binds 203.0.113.7
  // The credential case: a token of its own (the other cases' full decisions leave its viewer
  // session alone); one full decision with the token gives the cookie, then every request is a
  // segment of the same stream with the cookie and no token, checked in memory.
  let credential: Case | undefined;
  if (selected.has(CREDENTIAL)) {
    const viewer = (await api(sg.base, secret, 'POST', '/api/subscribe_token', { label: 'viewer', streams: [{ streamName: 'cam1' }] })).data;
    const ip = '203.0.113.9';
    // /hls/cam1/seg-17.ts names stream cam1 by the first of config/default.yaml's hooks.authRequest.streamPatterns
    const headers = { 'x-original-uri': '/hls/cam1/seg-17.ts', 'x-real-ip': ip, cookie: await sessionCookie(sg, viewer.token, ip) };
    const check = await fetch(`${sg.base}/hooks/auth-request`, { headers });
    const body = await check.text();
    if (check.status !== 200) throw new Error(`${sg.name}: a segment request with the session credential was answered ${check.status} ${body}, not 200`);
    credential = { name: CREDENTIAL, route: '/hooks/auth-request', method: 'GET', path: '/hooks/auth-request', headers, expect: 200 };
  }
  const list: Case[] = [
    { name: 'authorize (JSON)', route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers: json, body: authorize(sub.token), expect: 200 },
    { name: 'nginx-rtmp (form)', route: '/hooks/nginx-rtmp', method: 'POST', path: '/hooks/nginx-rtmp', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `app=live&flashver=FMLE%2F3.0&swfurl=&tcurl=rtmp%3A%2F%2Fh%2Flive&pageurl=&addr=203.0.113.7&call=play&name=cam1&start=0&duration=0&reset=0&token=${sub.token}`, expect: 200 },
    { name: 'mediamtx auth', route: '/hooks/mediamtx/auth', method: 'POST', path: '/hooks/mediamtx/auth', headers: json, body: mediamtx(sub.token, null), expect: 200 },
    { name: 'mediamtx auth, limited token', route: '/hooks/mediamtx/auth', method: 'POST', path: '/hooks/mediamtx/auth', headers: json, body: mediamtx(limited.token, '5f1c2b0e-6a3d-4c1e-9d0b-1d2f3a4b5c6d'), expect: 200, storeWrite: true },
    { name: 'auth-request', route: '/hooks/auth-request', method: 'GET', path: '/hooks/auth-request', headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${sub.token}`, 'x-real-ip': '203.0.113.7' }, expect: 200 },
    ...(credential ? [credential] : []),
    ...(selected.has(ISSUER_JWT) ? [await issuerJwtCase(sg, issuer)] : []),
    ...(await signedCases(sg, secret, selected)),
    { name: 'director subscribe', route: '/api/director/subscribe', method: 'POST', path: '/api/director/subscribe', headers: { ...json, authorization: `Bearer ${sub.token}` }, body: JSON.stringify({ streamName: 'cam1' }), expect: 200 },
    { name: 'deny (stream)', route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers: json, body: authorize(sub.token, 'nope'), expect: 403 },
    { name: 'bind, already bound', route: '/hooks/authorize', method: 'POST', path: '/hooks/authorize', headers: json, body: authorize(bind.token), expect: 200 },
  ];
  const out: Case[] & { subscribeTokenId?: number } = list.filter((c) => selected.has(c.name));
  out.subscribeTokenId = sub.id;
  return out;
}

/** The account of the first-start secret: what a decision on one of its tokens names. */
export async function accountOf(base: string, secret: string): Promise<string> {
  const t = (await api(base, secret, 'POST', '/api/publish_token', { label: 'probe', streams: [{ streamName: 'x' }] })).data;
  const d = await fetch(`${base}/hooks/authorize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'publish', token: t.token, streamName: 'x' }) });
  return ((await d.json()) as { accountId: string }).accountId;
}

