// Credential issuers' JWTs through real nginx (docs/api.md#credential-issuers): the WHIP block and
// settings of docs/callers.md#whip-and-whep-behind-auth_request, with the account in the path, in
// front of a stand-in WHIP endpoint (201 to a POST, 204 to a preflight) that records what reaches
// it. The issuer's keys come from a JWKS URL served over HTTPS by this test (a certificate made with
// openssl, trusted through issuers.jwksCaFile) with a max-age of 2 s: a key dropped from the set ends
// the JWTs it signed, new and remembered, once the max-age has passed; a key rotated in verifies
// after one refetch. The issuer is written into the store before Streamgate starts (issuer-seed.ts).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { JWK } from 'jose';
import { ROOT, startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { selfSignedCert } from '../helpers/receiver.js';
import { keyPair, sign, type TestKey } from '../helpers/issuers.js';
import { HTTP_TEMP_PATHS, startNginx, stopAll, type Nginx } from './nginx.js';
import { sectionBlocks, substitute } from './doc-blocks.js';
import { delta } from './hls-stand.js';
import { seedIssuer, type SeededIssuer } from './issuer-seed.js';

const HEADING = '## WHIP and WHEP behind auth_request';
const ISS = 'https://idp.example.com/realms/media';
/** The JWKS's Cache-Control max-age, and the refetch cooldown (seconds); both lowered from their floors for the test. */
const MAX_AGE = 2;
const COOLDOWN = 1;

const nowS = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** nginx, and openssl for the JWKS server's certificate: a missing one fails naming its Debian package. */
function requireBinaries(): void {
  const missing = ['nginx', 'openssl'].filter((bin) => spawnSync(bin, [bin === 'nginx' ? '-v' : 'version']).error);
  if (missing.length > 0) throw new Error(`this end-to-end test needs ${missing.join(', ')}: apt-get install -y ${missing.join(' ')}`);
}

/** A decision's label set in streamgate_decisions_total, for the auth-request hook. */
const decided = (action: string, result: string, reason: string) => `{action="${action}",adapter="auth-request",result="${result}",reason="${reason}",kind="full"}`;

describe('issuer JWTs through nginx auth_request, keys from a JWKS URL', () => {
  const hookSecret = randomBytes(24).toString('hex');
  let sg: RunningServer;
  let nginx: Nginx;
  let whip: Server;
  let jwksServer: HttpsServer;
  let httpPort: number;
  let dataDir: string;
  let certDir: string;
  let seeded: SeededIssuer;
  let first: TestKey;
  let second: TestKey;
  let third: TestKey;
  /** The key set the JWKS URL answers with now. */
  let jwks: JWK[] = [];
  /** When each request reached the JWKS URL (ms). */
  const jwksRequests: number[] = [];
  /** "METHOD path" of every request that reached the stand-in WHIP endpoint. */
  const reached: string[] = [];

  const send = (method: string, p: string, jwt?: string) =>
    fetch(`http://127.0.0.1:${httpPort}${p}`, {
      method,
      headers: { ...(jwt ? { authorization: `Bearer ${jwt}` } : {}), ...(method === 'POST' ? { 'content-type': 'application/sdp' } : {}) },
      body: method === 'POST' ? 'v=0\r\n' : undefined,
      redirect: 'manual',
    });
  const publish = async (stream: string, jwt: string) => (await send('POST', `/whip/${seeded.accountId}/${stream}`, jwt)).status;
  /** A JWT of the issuer for `stream`, signed with `key` (its kid in the header). */
  const jwtFor = (key: TestKey, stream: string) => sign(key, { iss: ISS, sub: stream, jti: randomUUID(), exp: nowS() + 600 }, { kid: key.jwk.kid });
  /** Streamgate's streamgate_decisions_total, by label set. */
  const decisions = async () => {
    const out = new Map<string, number>();
    for (const line of (await (await fetch(`${sg.base}/metrics`)).text()).split('\n')) {
      const m = /^streamgate_decisions_total(\{[^}]*\}) (\S+)$/.exec(line);
      if (m) out.set(m[1]!, Number(m[2]));
    }
    return out;
  };

  before(async () => {
    requireBinaries();
    const md = readFileSync(path.join(ROOT, 'docs/callers.md'), 'utf8');
    const [server, ...moreNginx] = sectionBlocks(md, HEADING, 'nginx');
    const [settings, ...moreYaml] = sectionBlocks(md, HEADING, 'yaml');
    assert.ok(server !== undefined && moreNginx.length === 0, 'the section has exactly one nginx block');
    assert.ok(settings !== undefined && moreYaml.length === 0, 'the section has exactly one yaml block');

    [first, second, third] = await Promise.all([keyPair('RS256', 'idp-1'), keyPair('RS256', 'idp-2'), keyPair('RS256', 'idp-3')]);
    jwks = [first.jwk];
    const cert = selfSignedCert(); // for 127.0.0.1 and localhost, its own CA
    certDir = cert.dir;
    jwksServer = createHttpsServer({ cert: readFileSync(cert.cert), key: readFileSync(cert.key) }, (req, res) => {
      jwksRequests.push(Date.now());
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': `public, max-age=${MAX_AGE}` }).end(JSON.stringify({ keys: jwks }));
    });
    await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
    const jwksPort = (jwksServer.address() as { port: number }).port;

    whip = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST') res.writeHead(201, { location: `${req.url}/${randomUUID()}`, 'content-type': 'application/sdp' }).end('v=0\r\n');
        else if (req.method === 'OPTIONS') res.writeHead(204, { 'accept-post': 'application/sdp', 'access-control-allow-origin': '*' }).end();
        else res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => whip.listen(0, '127.0.0.1', r));
    const whipPort = (whip.address() as { port: number }).port;

    // The documented settings with every path's first segment naming the account.
    dataDir = mkdtempSync(path.join(tmpdir(), 'sg-issuer-e2e-'));
    const configFile = path.join(dataDir, 'streamgate.yaml');
    const yaml = substitute(settings, [
      ['HOOK_SECRET', hookSecret],
      ['(?<stream>', '(?<account>[^/]+)/(?<stream>'],
      [/^hooks:\n/m, 'hooks:\n  accountInPath: true\n'],
    ]);
    writeFileSync(
      configFile,
      `${yaml}issuers:
  allowPrivateJwksHosts: ['127.0.0.1']
  jwksCaFile: ${JSON.stringify(cert.cert)}
  jwksMinCacheSeconds: 1
  jwksRefetchCooldownSeconds: ${COOLDOWN}
`,
    );
    assert.ok(yaml.includes("{ pattern: '^/whip/(?<account>[^/]+)/(?<stream>[^/]+)$', action: publish, methods: [POST] }"), yaml);
    const env = { STREAMGATE_DATA_DIR: dataDir, STREAMGATE_CONFIG: configFile };
    // The policy token allows cam1 and cam2: a credential for cam1 narrows it to cam1.
    seeded = await seedIssuer(env, 'publish', { label: 'encoders', streams: [{ streamName: 'cam1' }, { streamName: 'cam2' }] }, (policyTokenId) => ({
      label: 'idp',
      type: 'jwt',
      isActive: true,
      policyTokenId,
      issuer: ISS,
      keyIds: [],
      audience: [],
      algorithms: ['RS256'],
      jwks: null,
      jwksUrl: `https://127.0.0.1:${jwksPort}/protocol/openid-connect/certs`,
      secret: null,
      clockSkewSeconds: 0,
      maxLifetimeSeconds: null,
      claims: { stream: 'sub' },
      cookieName: null,
      revoked: { jti: [], sub: [], kid: [] },
      settings: null,
      signingKey: null,
      secretFrom: null,
      signingKeyFrom: null,
    }));
    sg = await startServer(env);

    httpPort = await freePort();
    const block = substitute(server, [
      ['STREAMGATE_URL', sg.base],
      ['HOOK_SECRET', hookSecret],
      ['WHIP_SERVER', `127.0.0.1:${whipPort}`],
      [/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${httpPort};`],
    ]);
    nginx = await startNginx(`http {\n  ${HTTP_TEMP_PATHS}\n  ${block}\n}`, [httpPort], false);
  });

  after(async () => {
    await stopAll([], nginx, sg);
    await new Promise((r) => whip?.close(r));
    await new Promise((r) => jwksServer?.close(r));
    for (const d of [dataDir, certDir, nginx?.dir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('publishes the stream an issuer JWT names, refuses another stream before the endpoint, and lets the preflight through undecided', async () => {
    const before = await decisions();
    const jwt = await jwtFor(first, 'cam1');
    assert.equal(await publish('cam1', jwt), 201);
    assert.equal(jwksRequests.length, 1, 'the first decision fetched the JWKS once');
    assert.deepEqual(reached, [`POST /whip/${seeded.accountId}/cam1`]);
    // the policy token allows cam2, the credential does not
    assert.equal(await publish('cam2', jwt), 403);
    const preflight = await send('OPTIONS', `/whip/${seeded.accountId}/cam1`);
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('accept-post'), 'application/sdp');
    assert.deepEqual(reached, [`POST /whip/${seeded.accountId}/cam1`, `OPTIONS /whip/${seeded.accountId}/cam1`]);
    assert.deepEqual(delta(before, await decisions()), {
      [decided('publish', 'allow', 'allowed')]: 1,
      [decided('publish', 'deny', 'stream_not_allowed')]: 1,
    });
  });

  it('a key dropped from the JWKS refuses its JWTs once the max-age has passed, a remembered one too', async () => {
    const remembered = await jwtFor(first, 'cam1');
    assert.equal(await publish('cam1', remembered), 201);
    assert.equal(await publish('cam1', remembered), 201, 'presented again: from the memo');
    jwks = [second.jwk];
    await sleep(jwksRequests.at(-1)! + MAX_AGE * 1000 + 250 - Date.now());
    const fetched = jwksRequests.length;
    const before = await decisions();
    const reachedBefore = reached.length;
    assert.equal(await publish('cam1', await jwtFor(first, 'cam1')), 401, 'a new JWT of the dropped key');
    assert.ok(jwksRequests.length > fetched, 'the set past its max-age was fetched again before the decision');
    assert.equal(await publish('cam1', remembered), 401, 'the JWT the dropped key verified before');
    assert.deepEqual(reached.slice(reachedBefore), [], 'nothing reached the endpoint');
    assert.deepEqual(delta(before, await decisions()), { [decided('publish', 'deny', 'token_invalid')]: 2 });
    assert.equal(await publish('cam1', await jwtFor(second, 'cam1')), 201, 'the key the set holds now');
  });

  it('a key rotated into the JWKS verifies after one refetch', async () => {
    jwks = [second.jwk, third.jwk];
    // the refetch an unknown kid makes waits for the cooldown counted from the last fetch
    await sleep(jwksRequests.at(-1)! + COOLDOWN * 1000 + 250 - Date.now());
    const fetched = jwksRequests.length;
    assert.equal(await publish('cam1', await jwtFor(third, 'cam1')), 201);
    assert.equal(jwksRequests.length, fetched + 1, 'one refetch for the unknown kid');
    assert.equal(await publish('cam1', await jwtFor(second, 'cam1')), 201);
    assert.equal(await publish('cam2', await jwtFor(third, 'cam2')), 201);
    assert.equal(jwksRequests.length, fetched + 1, 'no other fetch while the set is fresh');
    assert.deepEqual(reached.slice(-3), [`POST /whip/${seeded.accountId}/cam1`, `POST /whip/${seeded.accountId}/cam1`, `POST /whip/${seeded.accountId}/cam2`]);
  });
});
