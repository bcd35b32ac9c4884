// A real WHIP publish through docs/callers.md#whip-and-whep-behind-auth_request, with the bearer a
// credential issuer's JWT (docs/api.md#credential-issuers): Chromium running
// Eyevinn's WHIP client library (@eyevinn/whip-web-client) publishes its fake camera and microphone
// to Meetecho's simple-whip-server in front of Janus's VideoRoom, through Debian's nginx with the
// section's server block as written and its Streamgate settings with the simple-whip-server patterns
// the section gives; and Debian's own whip-client (GStreamer) publishing a test pattern with the
// JWT as its -t bearer (run beside a stand-in for the UPnP library it cannot load: janus-whip.ts).
// The client runs on nginx's origin (the page is served by the browser's request routing): it asks
// OPTIONS with its token before publishing, which from another origin needs OPTIONS in the server's
// Access-Control-Allow-Methods, and simple-whip-server's does not list it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { build } from 'vite';
import { parse } from 'yaml';
import { ROOT, startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { launchChromium, requireChromium } from './chromium.js';
import { sectionBlocks, substitute } from './doc-blocks.js';
import { requireJanusWhip, requireWhipClient, startJanus, startSimpleWhipServer, startWhipClient, type Janus, type SimpleWhipServer } from './janus-whip.js';
import { HTTP_TEMP_PATHS, requireBinaries, startNginx, stopAll, type Nginx } from './nginx.js';

const HEADING = '## WHIP and WHEP behind auth_request';
const ROOM = 1234;
const CLIENT_ENTRY = path.join(ROOT, 'node_modules/@eyevinn/whip-web-client/dist/whip-client.m.js');

/** What the page's fetch saw for each request the WHIP client made. */
interface Sent {
  method: string;
  path: string;
  status: number;
  location: string | null;
  authorization: string | null;
}

/** What one publish attempt did: the client's requests, its ICE state at the end, its console errors. */
interface Attempt {
  sent: Sent[];
  ice: string;
  errors: string[];
}

/** Installed before the page's scripts: every fetch the client makes, with the answer's status and Location. */
function recordFetches(): void {
  const w = window as unknown as { __sent: Sent[] };
  w.__sent = [];
  const native = window.fetch.bind(window);
  window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await native(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    const headers = new Headers(init?.headers);
    w.__sent.push({ method: init?.method ?? 'GET', path: url.pathname, status: res.status, location: res.headers.get('location'), authorization: headers.get('authorization') });
    return res;
  };
}

/** The client library as one script for the page (it ships ES modules importing npm packages). */
async function bundleClient(): Promise<string> {
  const out = await build({
    configFile: false,
    logLevel: 'warn',
    build: { write: false, minify: false, lib: { entry: CLIENT_ENTRY, formats: ['iife'], name: 'WHIPWebClient', fileName: () => 'whip-web-client.js' } },
  });
  const [first] = Array.isArray(out) ? out : [out];
  const chunk = 'output' in first ? first.output[0] : undefined;
  assert.ok(chunk && chunk.type === 'chunk', 'vite built one chunk');
  return chunk.code;
}

describe('a real WHIP publisher through nginx auth_request and Streamgate to simple-whip-server and Janus', () => {
  const hookSecret = randomBytes(24).toString('hex');
  let janus: Janus;
  let whip: SimpleWhipServer;
  let sg: RunningServer;
  let nginx: Nginx;
  let browser: Browser;
  let context: BrowserContext;
  let dataDir: string;
  let apiSecret: string;
  let origin: string;

  const api = async (method: string, p: string, body: object, status: number) => {
    const r = await fetch(`${sg.base}${p}`, { method, headers: { authorization: `Bearer ${apiSecret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, status, await r.clone().text());
    return ((await r.json()) as { data: Record<string, unknown> }).data;
  };

  /**
   * The credential a publisher presents as its bearer, and the policy token that decides it: a JWT
   * of a credential issuer (an identity provider's ES256 key, signed with jose), whose policy is a
   * publish token for the stream; and a forged one (the same iss and kid, another key).
   */
  const publishCredential = async (streamName: string): Promise<{ bearer: string; tokenId: number; forged: string }> => {
    const policy = await api('POST', '/api/publish_token', { label: 'whip encoder policy', streams: [{ streamName }] }, 200);
    const iss = `https://idp.example/${streamName}-${randomUUID()}`;
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    await api(
      'POST',
      '/api/issuers',
      { label: 'encoders idp', policyTokenId: policy.id, issuer: iss, algorithms: ['ES256'], jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'enc-1', alg: 'ES256', use: 'sig' }] } },
      201,
    );
    const jwt = (key: CryptoKey) => new SignJWT({ sub: streamName }).setProtectedHeader({ alg: 'ES256', kid: 'enc-1' }).setIssuer(iss).setExpirationTime('10m').sign(key);
    return { bearer: await jwt(privateKey), tokenId: policy.id as number, forged: await jwt((await generateKeyPair('ES256')).privateKey) };
  };

  /**
   * Streamgate's decision log lines from line `from` on, with the fields these tests read, once a
   * marker request sent now is logged too: a decision's line reaches the test later than its answer.
   */
  const decisions = async (from: number) => {
    const mark = randomUUID();
    await (await fetch(`${sg.base}/healthz`, { headers: { 'x-request-id': mark } })).arrayBuffer();
    await until('the marker request in Streamgate\'s log', async () => (sg.logs.some((l) => l.includes(mark)) ? true : undefined), 5000);
    return sg.logs
      .slice(from)
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      })
      .filter((j) => j.msg === 'decision')
      .map((j) => ({ action: j.action, allowed: j.allowed, status: j.status, reason: j.reason, streamName: j.streamName, tokenId: j.tokenId }));
  };

  /** streamgate_decisions_total as served on /metrics. */
  const counted = async () => {
    const text = await (await fetch(`${sg.base}/metrics`)).text();
    return text.split('\n').filter((l) => l.startsWith('streamgate_decisions_total{'));
  };

  /** Waits (real time, polling) until `probe` returns something other than undefined. */
  const until = async <T>(what: string, probe: () => Promise<T | undefined>, ms = 15000): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  /**
   * The WHIP client publishes the fake camera and microphone to `endpoint` with `bearer`, in a page
   * of its own; the page stays open (publishing) until `hangUp`, which calls the client's destroy().
   */
  const publish = async (endpoint: string, bearer: string) => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${origin}/publisher.html`);
    const { sent, ice } = await page.evaluate(
      async ({ endpoint, bearer }) => {
        const w = window as unknown as { WHIPWebClient: any; __client: any; __sent: Sent[] };
        // no ICE servers: the library's default is a public STUN server
        const client = new w.WHIPWebClient.WHIPClient({ endpoint, opts: { iceServers: [], authkey: bearer } });
        w.__client = client;
        const media = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
        await client.ingest(media);
        // ingest() resolves once the answer is applied, or after logging a refused offer
        const offered = () => w.__sent.find((s) => s.method === 'POST');
        const deadline = Date.now() + 15000;
        while (Date.now() < deadline && !(offered() && offered()!.status !== 201) && !['connected', 'completed', 'failed'].includes(client.getICEConnectionState())) {
          await new Promise((r) => setTimeout(r, 100));
        }
        return { sent: [...w.__sent], ice: client.getICEConnectionState() as string };
      },
      { endpoint, bearer },
    );
    const attempt: Attempt = { sent, ice, errors };
    return {
      attempt,
      /** The client's destroy() (its DELETE on the session URL), then every request the client made. */
      async hangUp(): Promise<Sent[]> {
        const all = await page.evaluate(async () => {
          const w = window as unknown as { __client: any; __sent: Sent[] };
          await w.__client.destroy();
          return [...w.__sent];
        });
        await page.close();
        return all;
      },
      /** Closes the page unless the hang-up did: a test that fails midway leaves no publisher trickling. */
      close: async () => {
        if (!page.isClosed()) await page.close();
      },
    };
  };

  before(async () => {
    requireBinaries();
    requireChromium();
    requireJanusWhip();
    requireWhipClient();
    if (!existsSync(CLIENT_ENTRY)) throw new Error(`${CLIENT_ENTRY} missing: the @eyevinn/whip-web-client dev dependency is not installed (npm ci)`);
    const md = readFileSync(path.join(ROOT, 'docs/callers.md'), 'utf8');
    const [server, ...moreNginx] = sectionBlocks(md, HEADING, 'nginx');
    const [settings, ...moreYaml] = sectionBlocks(md, HEADING, 'yaml');
    assert.ok(server !== undefined && moreNginx.length === 0, 'the section has exactly one nginx block');
    assert.ok(settings !== undefined && moreYaml.length === 0, 'the section has exactly one yaml block');
    // simple-whip-server's two patterns, as the section writes them inline
    const section = md.slice(md.indexOf(HEADING), md.indexOf('\n## ', md.indexOf(HEADING) + HEADING.length));
    const janusPatterns = [...section.matchAll(/`(\{ pattern: '\^\/whip\/(?:endpoint|resource)\/[^`]*\})`/g)].map((m) => parse(m[1]!) as Record<string, unknown>);
    assert.deepEqual(
      janusPatterns.map((p) => [p.pattern, p.action, p.methods, p.resource]),
      [
        ['^/whip/endpoint/(?<stream>[^/]+)$', 'publish', ['POST'], undefined],
        ['^/whip/resource/(?<stream>[^/]+)$', 'publish', ['PATCH', 'DELETE'], true],
      ],
      'the section gives simple-whip-server its endpoint and session URL patterns',
    );

    janus = await startJanus([ROOM]);
    whip = await startSimpleWhipServer(janus.wsUrl);
    // an endpoint per stream name, all publishing to the one room
    for (const stream of ['cam1', 'cam2']) await whip.createEndpoint(stream, ROOM, `publisher ${stream}`);

    dataDir = mkdtempSync(path.join(tmpdir(), 'sg-whip-real-'));
    const config = parse(substitute(settings, [['HOOK_SECRET', hookSecret]])) as { hooks: { authRequest: { streamPatterns: unknown[] } } };
    config.hooks.authRequest.streamPatterns = janusPatterns;
    const configFile = path.join(dataDir, 'streamgate.yaml');
    writeFileSync(configFile, JSON.stringify(config));
    sg = await startServer({ STREAMGATE_DATA_DIR: dataDir, STREAMGATE_CONFIG: configFile });
    apiSecret = readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim();

    const httpPort = await freePort();
    const block = substitute(server, [
      ['STREAMGATE_URL', sg.base],
      ['HOOK_SECRET', hookSecret],
      ['WHIP_SERVER', whip.base.replace('http://', '')],
      [/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${httpPort};`],
    ]);
    nginx = await startNginx(`http {\n  ${HTTP_TEMP_PATHS}\n  ${block}\n}`, [httpPort], false);
    origin = `http://127.0.0.1:${httpPort}`;

    const bundle = await bundleClient();
    browser = await launchChromium(['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream']);
    context = await browser.newContext();
    await context.grantPermissions(['camera', 'microphone'], { origin });
    await context.addInitScript({ content: 'globalThis.__name = (f) => f;' });
    await context.addInitScript(recordFetches);
    // The publisher's page and the client's script, on nginx's origin without passing through nginx.
    await context.route(`${origin}/publisher.html`, (route) =>
      route.fulfill({ contentType: 'text/html; charset=utf-8', body: '<!doctype html><html><head><meta charset="utf-8"><title>WHIP publisher</title><script src="/whip-web-client.js"></script></head><body></body></html>' }),
    );
    await context.route(`${origin}/whip-web-client.js`, (route) => route.fulfill({ contentType: 'text/javascript', body: bundle }));
  });

  after(async () => {
    await browser?.close();
    await stopAll([], nginx, sg);
    await whip?.stop();
    await janus?.stop();
    for (const d of [dataDir, nginx?.dir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('a publish token: the offer through nginx is answered 201 with the session URL, audio and video reach the Janus room, and the hang-up ends the publisher', async (t) => {
    const cred = await publishCredential('cam1');
    const logFrom = sg.logs.length;
    const seenFrom = (await whip.requests()).length;
    const pub = await publish(`${origin}/whip/endpoint/cam1`, cred.bearer);
    t.after(pub.close);
    const { ice, errors } = pub.attempt;
    assert.ok(['connected', 'completed'].includes(ice), `ICE ${ice}; the page's errors: ${errors.join('\n')}`);

    // Janus receives its Opus and VP8, and lists it in the room as a publisher (once its media is up)
    const flowing = await until('audio and video RTP at Janus', async () => {
      const p = await janus.publisher(ROOM, 'publisher cam1');
      return p && p.media.length === 2 && p.media.every((m) => m.packets > 50 && m.bytes > 0) ? p : undefined;
    });
    assert.equal(flowing.dtlsState, 'connected');
    assert.deepEqual(flowing.media.map((m) => [m.type, m.codec]), [['audio', 'opus'], ['video', 'vp8']]);
    const listed = await until('a publisher in the room', async () => {
      const all = await janus.participants(ROOM);
      return all.some((p) => p.publisher) ? all : undefined;
    });
    assert.deepEqual(listed.map((p) => [p.display, p.publisher]), [['publisher cam1', true]]);

    // The client asked which methods the endpoint allows, offered, trickled its candidates to the
    // session URL and hung up there, each with its bearer, each answered by the WHIP server.
    const sent = await pub.hangUp();
    assert.deepEqual(errors, [], 'no error in the page through the hang-up');
    const bearer = `Bearer ${cred.bearer}`;
    assert.deepEqual(sent.slice(0, 2), [
      { method: 'OPTIONS', path: '/whip/endpoint/cam1', status: 204, location: null, authorization: bearer },
      { method: 'POST', path: '/whip/endpoint/cam1', status: 201, location: '/whip/resource/cam1', authorization: bearer },
    ]);
    assert.deepEqual(sent.at(-1), { method: 'DELETE', path: '/whip/resource/cam1', status: 200, location: null, authorization: bearer });
    const trickles = sent.slice(2, -1);
    assert.ok(trickles.length > 0, 'the client trickled its candidates');
    for (const t of trickles) assert.deepEqual(t, { method: 'PATCH', path: '/whip/resource/cam1', status: 204, location: null, authorization: bearer });
    await until('the publisher gone from the room', async () => ((await janus.participants(ROOM)).length === 0 ? true : undefined));

    // everything the client sent reached the WHIP server, and Streamgate decided all but the OPTIONS
    assert.deepEqual((await whip.requests()).slice(seenFrom).sort(), sent.map((s) => `${s.method} ${s.path}`).sort());
    const allowed = { action: 'publish', allowed: true, status: 200, reason: 'allowed', streamName: 'cam1', tokenId: cred.tokenId };
    assert.deepEqual(await decisions(logFrom), sent.slice(1).map(() => allowed));
  });

  it('a wrong credential: nginx refuses the offer with 401 and the WHIP server never sees it', async () => {
    const logFrom = sg.logs.length;
    const seenFrom = (await whip.requests()).length;
    // the issuer's iss and kid, another key's signature
    const wrong = (await publishCredential('cam1')).forged;
    const pub = await publish(`${origin}/whip/endpoint/cam1`, wrong);
    await pub.close();
    const { sent, errors } = pub.attempt;
    assert.deepEqual(
      sent.map((s) => [s.method, s.path, s.status]),
      [
        ['OPTIONS', '/whip/endpoint/cam1', 204],
        ['POST', '/whip/endpoint/cam1', 401],
      ],
    );
    // Chromium's line for the refused request, then the client's own
    assert.deepEqual(
      errors.map((e) => e.split(/\r?\n/)[0]),
      ['Failed to load resource: the server responded with a status of 401 (Unauthorized)', 'WHIPClient IceCandidate Failed to setup stream connection with endpoint 401 <html>'],
    );
    // the OPTIONS (a preflight, never decided) reached it; the offer did not
    assert.deepEqual((await whip.requests()).slice(seenFrom), ['OPTIONS /whip/endpoint/cam1']);
    assert.deepEqual(await decisions(logFrom), [{ action: 'publish', allowed: false, status: 401, reason: 'token_invalid', streamName: 'cam1', tokenId: undefined }]);
    assert.deepEqual(await janus.participants(ROOM), []);

    // another stream's publish token, straight at the endpoint: 403, and nothing reaches the server either
    const other = await publishCredential('cam2');
    const offer = await fetch(`${origin}/whip/endpoint/cam1`, { method: 'POST', headers: { authorization: `Bearer ${other.bearer}`, 'content-type': 'application/sdp' }, body: 'v=0\r\n' });
    assert.equal(offer.status, 403);
    assert.deepEqual((await whip.requests()).slice(seenFrom), ['OPTIONS /whip/endpoint/cam1']);
    assert.deepEqual((await decisions(logFrom)).slice(1), [{ action: 'publish', allowed: false, status: 403, reason: 'stream_not_allowed', streamName: 'cam1', tokenId: other.tokenId }]);
  });

  it("Debian's whip-client: its -t bearer (the issuer JWT) publishes a test pattern through nginx to Janus; a forged one is refused before the WHIP server", async (t) => {
    const cred = await publishCredential('cam2');
    const logFrom = sg.logs.length;
    const seenFrom = (await whip.requests()).length;
    const client = await startWhipClient(`${origin}/whip/endpoint/cam2`, cred.bearer);
    t.after(client.stop);
    const flowing = await until('audio and video RTP from whip-client at Janus', async () => {
      const p = await janus.publisher(ROOM, 'publisher cam2');
      return p && p.media.length === 2 && p.media.every((m) => m.packets > 50 && m.bytes > 0) ? p : undefined;
    }).catch((e: Error) => {
      throw new Error(`${e.message}; whip-client said:\n${client.logs.slice(-40).join('\n')}`);
    });
    assert.equal(flowing.dtlsState, 'connected');
    // (the client's offer orders its m-lines as GStreamer links its pads)
    assert.deepEqual(flowing.media.map((m) => [m.type, m.codec]).sort(), [['audio', 'opus'], ['video', 'vp8']]);
    // Ctrl-C: the client hangs up on its session URL and exits
    await client.stop();
    assert.equal(await client.exited, 0, client.logs.slice(-20).join('\n'));
    await until('the publisher gone from the room', async () => ((await janus.participants(ROOM)).length === 0 ? true : undefined));
    // no trickle: the offer (its candidates in it) and the hang-up, both decided and allowed
    assert.deepEqual((await whip.requests()).slice(seenFrom), ['POST /whip/endpoint/cam2', 'DELETE /whip/resource/cam2']);
    const allowed = { action: 'publish', allowed: true, status: 200, reason: 'allowed', streamName: 'cam2', tokenId: cred.tokenId };
    assert.deepEqual(await decisions(logFrom), [allowed, allowed]);

    // the same iss and kid signed by another key: nginx answers 401, the client gives up, nothing reaches the server
    const forgedFrom = sg.logs.length;
    const seenBefore = (await whip.requests()).length;
    const forged = await startWhipClient(`${origin}/whip/endpoint/cam2`, cred.forged);
    t.after(forged.stop);
    let ended: number | string | undefined;
    void forged.exited.then((code) => {
      ended = code;
    });
    await until('whip-client to exit at the 401', async () => ended, 15000).catch((e: Error) => {
      throw new Error(`${e.message}:\n${forged.logs.slice(-20).join('\n')}`);
    });
    assert.ok(forged.logs.some((l) => /\b401\b/.test(l)), `whip-client reports the 401:\n${forged.logs.slice(-20).join('\n')}`);
    assert.deepEqual((await whip.requests()).slice(seenBefore), []);
    assert.deepEqual(await decisions(forgedFrom), [{ action: 'publish', allowed: false, status: 401, reason: 'token_invalid', streamName: 'cam2', tokenId: undefined }]);
    assert.deepEqual(await janus.participants(ROOM), []);
  });

  it('a CORS preflight reaches the WHIP server with nothing decided or counted', async () => {
    const logFrom = sg.logs.length;
    const seenFrom = (await whip.requests()).length;
    const countedBefore = await counted();
    const preflight = (p: string, method: string) =>
      fetch(`${origin}${p}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://studio.example', 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
      });
    const offer = await preflight('/whip/endpoint/cam1', 'POST');
    // simple-whip-server's own answers: 204 on the endpoint, express's 200 on the session URL
    assert.equal(offer.status, 204);
    assert.equal(offer.headers.get('access-control-allow-origin'), '*');
    assert.equal(offer.headers.get('access-control-allow-methods'), 'GET,HEAD,PUT,PATCH,POST,DELETE');
    const trickle = await preflight('/whip/resource/cam1', 'PATCH');
    assert.equal(trickle.status, 200);
    assert.equal(trickle.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual((await whip.requests()).slice(seenFrom), ['OPTIONS /whip/endpoint/cam1', 'OPTIONS /whip/resource/cam1']);
    assert.deepEqual(await decisions(logFrom), [], 'a preflight is no decision');
    assert.deepEqual(await counted(), countedBefore);
  });
});
