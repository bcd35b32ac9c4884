// docs/callers.md#whip-and-whep-behind-auth_request run as the page gives it: its Streamgate
// settings (```yaml) and nginx server block (```nginx), with only their placeholders replaced
// (the hook secret, Streamgate's URL, the WHIP server, the listen port), in front of a stand-in
// WHIP endpoint: a small HTTP server answering as RFC 9725 says (201 + Location to a POST, 204 to
// PATCH and OPTIONS, 200 to DELETE) that records what reaches it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { HTTP_TEMP_PATHS, requireBinaries, startNginx, stopAll, type Nginx } from './nginx.js';
import { sectionBlocks, substitute } from './doc-blocks.js';

const HEADING = '## WHIP and WHEP behind auth_request';

describe('docs/callers.md: WHIP and WHEP behind auth_request, as documented', () => {
  const hookSecret = randomBytes(24).toString('hex');
  let sg: RunningServer;
  let nginx: Nginx;
  let whip: Server;
  let httpPort: number;
  let dataDir: string;
  let apiSecret: string;
  /** "METHOD path" of every request that reached the stand-in WHIP server. */
  const reached: string[] = [];

  const api = async (p: string, body: unknown) => {
    const r = await fetch(sg.base + p, { method: 'POST', headers: { authorization: `Bearer ${apiSecret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 200, p);
    return ((await r.json()) as { data: { id: number; token: string } }).data;
  };
  const send = (method: string, p: string, token?: string, body?: string) =>
    fetch(`http://127.0.0.1:${httpPort}${p}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/sdp' } : {}) },
      body,
      redirect: 'manual',
    });

  before(async () => {
    requireBinaries();
    const md = readFileSync(path.join(ROOT, 'docs/callers.md'), 'utf8');
    const [server, ...moreNginx] = sectionBlocks(md, HEADING, 'nginx');
    const [settings, ...moreYaml] = sectionBlocks(md, HEADING, 'yaml');
    assert.ok(server !== undefined && moreNginx.length === 0, 'the section has exactly one nginx block');
    assert.ok(settings !== undefined && moreYaml.length === 0, 'the section has exactly one yaml block');

    whip = createServer((req, res) => {
      reached.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST') res.writeHead(201, { location: `${req.url}/${randomUUID()}`, 'content-type': 'application/sdp' }).end('v=0\r\n');
        else if (req.method === 'OPTIONS') res.writeHead(204, { 'accept-post': 'application/sdp', 'access-control-allow-origin': '*' }).end();
        else if (req.method === 'PATCH') res.writeHead(204).end();
        else res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => whip.listen(0, '127.0.0.1', r));
    const whipPort = (whip.address() as { port: number }).port;

    dataDir = mkdtempSync(path.join(tmpdir(), 'sg-whip-'));
    const configFile = path.join(dataDir, 'streamgate.yaml');
    writeFileSync(configFile, substitute(settings, [['HOOK_SECRET', hookSecret]]));
    sg = await startServer({ STREAMGATE_DATA_DIR: dataDir, STREAMGATE_CONFIG: configFile });
    apiSecret = readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim();

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
    for (const d of [dataDir, nginx?.dir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('a WHIP publisher with its publish token reaches the endpoint, trickles ICE and hangs up on the session URL', async () => {
    const pub = await api('/api/publish_token', { label: 'encoder', streams: [{ streamName: 'cam1' }] });
    const offer = await send('POST', '/whip/cam1', pub.token, 'v=0\r\n');
    assert.equal(offer.status, 201, await offer.text());
    const session = offer.headers.get('location');
    assert.match(session ?? '', /^\/whip\/cam1\/[0-9a-f-]{36}$/);
    assert.equal((await send('PATCH', session!, pub.token, 'a=candidate')).status, 204);
    assert.equal((await send('DELETE', session!, pub.token)).status, 200);
    assert.deepEqual(reached.slice(-3).map((r) => r.split(' ')[0]), ['POST', 'PATCH', 'DELETE']);
  });

  it('refuses a wrong token, another stream and a missing token before the endpoint sees the request', async () => {
    const pub = await api('/api/publish_token', { label: 'encoder', streams: [{ streamName: 'cam1' }] });
    const viewer = await api('/api/subscribe_token', { label: 'viewer', streams: [{ streamName: 'cam1' }] });
    const before = reached.length;
    assert.equal((await send('POST', '/whip/cam1', viewer.token, 'v=0\r\n')).status, 401);
    assert.equal((await send('POST', '/whip/cam1', 'f'.repeat(64), 'v=0\r\n')).status, 401);
    assert.equal((await send('POST', '/whip/cam2', pub.token, 'v=0\r\n')).status, 403);
    assert.equal((await send('POST', '/whip/cam1', undefined, 'v=0\r\n')).status, 401);
    assert.equal((await send('DELETE', `/whip/cam1/${randomUUID()}`)).status, 401);
    assert.equal((await send('GET', '/whip/cam1', pub.token)).status, 403, 'a method no pattern is for');
    assert.equal(reached.length, before, `nothing reached the endpoint: ${reached.slice(before).join(', ')}`);
  });

  it('lets the CORS preflight through without a credential, and serves WHEP to a subscribe token', async () => {
    const preflight = await send('OPTIONS', '/whip/cam1');
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('accept-post'), 'application/sdp');
    const viewer = await api('/api/subscribe_token', { label: 'player', streams: [{ streamName: 'cam1' }] });
    assert.equal((await send('POST', '/whep/cam1', viewer.token, 'v=0\r\n')).status, 201);
    assert.deepEqual(reached.slice(-2), ['OPTIONS /whip/cam1', 'POST /whep/cam1']);
  });
});
