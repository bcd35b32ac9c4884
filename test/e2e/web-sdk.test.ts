// The hosted platform's official Web SDK (@millicast/sdk, its browser bundle) in Debian's Chromium,
// with Streamgate as its director: Director.getPublisher/getSubscriber, then Publish/View connect().
// A stand-in media server (test/e2e/ws-stand-in.ts) takes the SDK's WebSocket at the director's
// urls[0] and answers its publish/view command with an SDP answer from a plain RTCPeerConnection in a
// second page, so connect() runs to its end. Media never flows (no media server here): what is
// proven is everything the SDK does with the director's answer up to and through signalling.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, requireChromium } from './chromium.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { sqliteFactory } from '../helpers/stores.js';
import { ROOT } from '../helpers/process.js';
import { createHttpServer } from '../../src/http/server.js';
import { startWsStandIn, type WsStandIn, type StandInConnection } from './ws-stand-in.js';

// The SDK's browser build (package.json "browser"): a UMD bundle that defines window.millicast.
const SDK_BUNDLE = path.join(ROOT, 'node_modules/@millicast/sdk/dist/millicast.umd.js');

// Configured in three casings; the director must answer them as RTCPeerConnection spells them.
const ICE_CONFIG = [
  { URLs: 'stun:127.0.0.1:3478' },
  { Urls: ['turn:127.0.0.1:3478?transport=udp'], UserName: 'viewer', Credential: 'pass' },
];
const ICE_ANSWER = [{ urls: ['stun:127.0.0.1:3478'] }, { urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'viewer', credential: 'pass' }];
// What Chromium's RTCPeerConnection.getConfiguration() reports for them once accepted.
const ICE_IN_PEER = [
  { urls: ['stun:127.0.0.1:3478'], username: '', credential: '' },
  { urls: ['turn:127.0.0.1:3478?transport=udp'], username: 'viewer', credential: 'pass' },
];

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Web SDK</title>
<script src="/millicast.umd.js"></script></head><body></body></html>`;

type LogEntry = { kind: string; text: string };

/** Installed before any page script: one ordered log of errors and WebSocket events. */
function installPageLog(): void {
  const log: LogEntry[] = [];
  const w = window as unknown as { __log: LogEntry[]; WebSocket: typeof WebSocket };
  w.__log = log;
  const error = console.error.bind(console);
  console.error = (...args: unknown[]) => {
    log.push({ kind: 'console.error', text: args.map(String).join(' ') });
    error(...args);
  };
  window.addEventListener('error', (e) => log.push({ kind: 'pageerror', text: String(e.message) }));
  window.addEventListener('unhandledrejection', (e) => log.push({ kind: 'unhandledrejection', text: String(e.reason) }));
  const Native = window.WebSocket;
  w.WebSocket = class extends Native {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      log.push({ kind: 'ws-new', text: String(url) });
      this.addEventListener('open', () => log.push({ kind: 'ws-open', text: String(url) }));
      this.addEventListener('error', () => log.push({ kind: 'ws-error', text: String(url) }));
      this.addEventListener('close', () => log.push({ kind: 'ws-close', text: String(url) }));
    }
  };
}

/** What the page did: the director answers the token generator got, the outcome of connect(), the log. */
interface Run {
  answers: Array<{ urls: string[]; jwt: string; iceServers: unknown; streamAccountId: string }>;
  connected: boolean;
  error: string | null;
  peerIceServers: unknown;
  log: LogEntry[];
}

const errorsIn = (log: LogEntry[]) => log.filter((e) => /^(console\.error|pageerror|unhandledrejection|ws-error|sdk-ERROR)$/.test(e.kind));

describe('the official Web SDK in Chromium against Streamgate', () => {
  const store = sqliteFactory();
  let t: TestApp;
  let server: Server;
  let base: string;
  let pages: Server;
  let pageBase: string;
  let standIn: WsStandIn;
  let acct: { id: string; secret: string };
  let browser: Browser;
  let context: BrowserContext;
  let answerer: Page;

  const api = async (p: string, body: unknown) => {
    const r = await fetch(base + p, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const out = (await r.json()) as { status: string; data: { id: number; token: string } };
    if (out.status !== 'success') throw new Error(`${p}: ${r.status} ${JSON.stringify(out)}`);
    return out.data;
  };

  /** The JWT's claims once its ES256 signature checks out against Streamgate's published JWKS. */
  const verify = async (jwt: string) => {
    const { payload, protectedHeader } = await jwtVerify(jwt, createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`)), { algorithms: ['ES256'], issuer: 'streamgate' });
    assert.equal(protectedHeader.kid, t.services.keys.kid);
    return payload as Record<string, unknown>;
  };

  const newSdkPage = async (): Promise<Page> => {
    const page = await context.newPage();
    await page.goto(`${pageBase}/`);
    await page.evaluate(() => {
      const w = window as unknown as { millicast: any; __log: LogEntry[] };
      const { Logger } = w.millicast;
      // Every SDK log line at WARN and above joins the ordered log (the SDK writes nothing to the
      // console by default).
      Logger.setHandler((messages: ArrayLike<unknown>, ctx: { name?: string; level: { name: string } }) => {
        const text = Array.from(messages, (m) => (m instanceof Error ? m.message : typeof m === 'object' ? JSON.stringify(m) : String(m))).join(' ');
        w.__log.push({ kind: `sdk-${ctx.level.name}`, text: `[${ctx.name ?? ''}] ${text}` });
      }, Logger.WARN);
    });
    return page;
  };

  /** The stand-in's answer to the SDK's offer, made by a plain RTCPeerConnection in the answerer page. */
  const sdpAnswer = (offer: string) =>
    answerer.evaluate(async (sdp) => {
      const pc = new RTCPeerConnection();
      const w = window as unknown as { pcs?: RTCPeerConnection[] };
      w.pcs ??= [];
      w.pcs.push(pc);
      await pc.setRemoteDescription({ type: 'offer', sdp });
      await pc.setLocalDescription(await pc.createAnswer());
      return pc.localDescription!.sdp;
    }, offer);

  before(async () => {
    requireChromium();
    if (!existsSync(SDK_BUNDLE)) throw new Error(`${SDK_BUNDLE} missing: the @millicast/sdk dev dependency is not installed (npm ci)`);
    standIn = await startWsStandIn();
    standIn.onCommand = async (cmd) => {
      if (cmd.name === 'publish') return { data: { sdp: await sdpAnswer(String(cmd.data.sdp)), publisherId: 'pub-1', clusterId: 'local', feedId: 'feed-1' } };
      if (cmd.name === 'view') return { data: { sdp: await sdpAnswer(String(cmd.data.sdp)), subscriberId: 'sub-1', clusterId: 'local', streamViewId: 'view-1' } };
      return { error: `the stand-in does not do ${cmd.name}` };
    };
    await store.setup();
    t = await testApp(await store.make(), {
      director: {
        publishUrls: [`ws://127.0.0.1:${standIn.port}/ws/pub/{accountId}/{streamName}`],
        subscribeUrls: [`ws://127.0.0.1:${standIn.port}/ws/sub/{accountId}/{streamName}`],
        iceServers: ICE_CONFIG,
      },
    });
    acct = await t.account('sdk');
    server = createHttpServer(t.app).listen(0, '127.0.0.1');
    await new Promise<void>((r) => server.once('listening', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    // The customer's page, on an origin of its own (so the director's CORS is exercised too).
    const bundle = readFileSync(SDK_BUNDLE);
    pages = createServer((req, res) => {
      if (req.url === '/millicast.umd.js') {
        res.setHeader('content-type', 'text/javascript');
        res.end(bundle);
      } else if (req.url === '/' || req.url === '/answerer.html') {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(req.url === '/' ? PAGE : '<!doctype html><title>answerer</title>');
      } else {
        res.statusCode = 404;
        res.end();
      }
    }).listen(0, '127.0.0.1');
    await new Promise<void>((r) => pages.once('listening', () => r()));
    pageBase = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;

    browser = await launchChromium(['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream']);
    context = await browser.newContext();
    await context.grantPermissions(['camera', 'microphone'], { origin: pageBase });
    // tsx compiles this file keeping function names, which wraps named functions in a `__name(...)`
    // helper call; the functions sent to the page need that helper there too.
    await context.addInitScript({ content: 'globalThis.__name = (f) => f;' });
    await context.addInitScript(installPageLog);
    answerer = await context.newPage();
    await answerer.goto(`${pageBase}/answerer.html`);
  });

  after(async () => {
    await browser?.close();
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    await new Promise((r) => (pages ? pages.close(r) : r(undefined)));
    await standIn?.close();
    await t?.services.close?.();
    await store.teardown();
  });

  /** Publishes with the SDK from a fresh page: new Publish(streamName, () => Director.getPublisher(...)).connect(). */
  const publish = async (token: string, streamName: string, options: { record?: boolean } = {}): Promise<Run> => {
    const page = await newSdkPage();
    try {
      return await page.evaluate(
        async ({ director, token, streamName, record }) => {
          const w = window as unknown as { millicast: any; __log: LogEntry[] };
          const { Director, Publish } = w.millicast;
          Director.setEndpoint(director);
          const answers: Run['answers'] = [];
          const tokenGenerator = async () => {
            const answer = await Director.getPublisher({ token, streamName });
            answers.push(answer);
            return answer;
          };
          const mediaStream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
          const pub = new Publish(streamName, tokenGenerator);
          let connected = false;
          let error: string | null = null;
          try {
            await pub.connect(record === undefined ? { mediaStream } : { mediaStream, record });
            connected = true;
          } catch (e) {
            error = e instanceof Error ? e.message : String(e);
          }
          const peerIceServers = pub.getRTCPeerConnection()?.getConfiguration().iceServers ?? null;
          pub.stop();
          return { answers, connected, error, peerIceServers, log: [...w.__log] };
        },
        { director: base, token, streamName, record: options.record },
      );
    } finally {
      await page.close();
    }
  };

  /** Views with the SDK from a fresh page: new View(streamName, () => Director.getSubscriber(...)).connect(). */
  const view = async (streamName: string, subscriberToken?: string): Promise<Run> => {
    const page = await newSdkPage();
    try {
      return await page.evaluate(
        async ({ director, streamName, streamAccountId, subscriberToken }) => {
          const w = window as unknown as { millicast: any; __log: LogEntry[] };
          const { Director, View } = w.millicast;
          Director.setEndpoint(director);
          const answers: Run['answers'] = [];
          const tokenGenerator = async () => {
            const answer = await Director.getSubscriber(subscriberToken ? { streamName, streamAccountId, subscriberToken } : { streamName, streamAccountId });
            answers.push(answer);
            return answer;
          };
          const viewer = new View(streamName, tokenGenerator);
          let connected = false;
          let error: string | null = null;
          try {
            await viewer.connect();
            connected = true;
          } catch (e) {
            error = e instanceof Error ? e.message : String(e);
          }
          const peerIceServers = viewer.getRTCPeerConnection()?.getConfiguration().iceServers ?? null;
          viewer.stop();
          return { answers, connected, error, peerIceServers, log: [...w.__log] };
        },
        { director: base, streamName, streamAccountId: acct.id, subscriberToken },
      );
    } finally {
      await page.close();
    }
  };

  /** The one stand-in connection whose request target starts with `prefix`. */
  const connectionFor = (prefix: string): StandInConnection => {
    const found = standIn.connections.filter((c) => c.url.startsWith(prefix));
    assert.equal(found.length, 1, `one stand-in connection at ${prefix}: ${JSON.stringify(standIn.connections.map((c) => c.url))}`);
    return found[0];
  };

  /** No error of any kind before the SDK's WebSocket opened, and the open is there. */
  const assertCleanUntilOpen = (run: Run, wsUrl: string) => {
    const open = run.log.findIndex((e) => e.kind === 'ws-open' && e.text === wsUrl);
    assert.ok(open >= 0, `the SDK opened ${wsUrl}: ${JSON.stringify(run.log)}`);
    assert.deepEqual(errorsIn(run.log.slice(0, open)), [], 'errors before the WebSocket opened');
  };

  it('publish: the SDK takes the director answer, opens urls[0]?token=<jwt>, sends its publish command and connect() resolves', async () => {
    const p = await api('/api/publish_token', { label: 'sdk', streams: [{ streamName: 'sdk-cam' }], record: true });
    const run = await publish(p.token, 'sdk-cam', { record: true });
    assert.equal(run.error, null, JSON.stringify(run.log));
    assert.equal(run.connected, true);
    assert.equal(run.answers.length, 1);
    const [answer] = run.answers;
    assert.deepEqual(answer.urls, [`ws://127.0.0.1:${standIn.port}/ws/pub/${acct.id}/sdk-cam`]);
    assert.deepEqual(answer.iceServers, ICE_ANSWER);
    assert.equal(answer.streamAccountId, acct.id);

    const wsUrl = `/ws/pub/${acct.id}/sdk-cam?token=${answer.jwt}`;
    const conn = connectionFor(`/ws/pub/${acct.id}/sdk-cam`);
    assert.equal(conn.url, wsUrl, 'the stand-in got ?token=<the director JWT> on urls[0]');
    assert.equal(conn.origin, pageBase);
    const claims = await verify(new URLSearchParams(conn.url.split('?')[1]).get('token')!);
    assert.deepEqual(claims.millicast, { type: 'Publish', streamAccountId: acct.id, streamName: 'sdk-cam', serverId: 'streamgate', record: true, customData: null });
    assert.deepEqual(claims.streaming, { tokenId: p.id, tokenType: 'Publish', accountId: acct.id, streamName: 'sdk-cam', record: true });

    // The SDK published under the claim's stream name and asked to record, as the claim allows.
    const cmd = conn.messages.find((m) => (m as { name?: string }).name === 'publish') as { data: Record<string, unknown> } | undefined;
    assert.ok(cmd, JSON.stringify(conn.messages).slice(0, 500));
    assert.equal(cmd.data.name, 'sdk-cam');
    assert.equal(cmd.data.record, true);
    assert.match(String(cmd.data.sdp), /^v=0\r\n/);
    assert.match(String(cmd.data.sdp), /^m=video /m);

    // The ICE servers reached RTCPeerConnection, which accepted them (a TURN entry without
    // username/credential, as a wrongly cased config would give, makes its constructor throw).
    assert.deepEqual(run.peerIceServers, ICE_IN_PEER);
    assertCleanUntilOpen(run, `ws://127.0.0.1:${standIn.port}${wsUrl}`);
    assert.deepEqual(errorsIn(run.log), [], 'no error through connect()');
  });

  it('publish asking to record with a token that does not record: the SDK refuses, reading millicast.record', async () => {
    const p = await api('/api/publish_token', { label: 'sdk', streams: [{ streamName: 'sdk-norec' }], record: false });
    const run = await publish(p.token, 'sdk-norec', { record: true });
    assert.equal(run.connected, false);
    assert.equal(run.error, 'Record option detected but recording is not available');
    assert.equal(run.answers.length, 1, 'the director answered');
    assert.deepEqual((await verify(run.answers[0].jwt)).millicast, {
      type: 'Publish', streamAccountId: acct.id, streamName: 'sdk-norec', serverId: 'streamgate', record: false, customData: null,
    });
    assert.deepEqual(standIn.connections.filter((c) => c.url.includes('sdk-norec')), [], 'no WebSocket was opened');
    // Without asking to record, the same token publishes.
    const plain = await publish(p.token, 'sdk-norec');
    assert.equal(plain.error, null, JSON.stringify(plain.log));
    assert.equal(plain.connected, true);
    const cmd = connectionFor(`/ws/pub/${acct.id}/sdk-norec`).messages.find((m) => (m as { name?: string }).name === 'publish') as { data: Record<string, unknown> };
    assert.equal(cmd.data.record, undefined);
  });

  it('view with a subscribe token: Director.getSubscriber, urls[0]?token=<jwt>, the view command, connect() resolves', async () => {
    const s = await api('/api/subscribe_token', { label: 'sdk', streams: [{ streamName: 'sdk-show' }] });
    const run = await view('sdk-show', s.token);
    assert.equal(run.error, null, JSON.stringify(run.log));
    assert.equal(run.connected, true);
    const [answer] = run.answers;
    assert.deepEqual(answer.urls, [`ws://127.0.0.1:${standIn.port}/ws/sub/${acct.id}/sdk-show`]);
    assert.deepEqual(answer.iceServers, ICE_ANSWER);
    const wsUrl = `/ws/sub/${acct.id}/sdk-show?token=${answer.jwt}`;
    const conn = connectionFor(`/ws/sub/${acct.id}/sdk-show`);
    assert.equal(conn.url, wsUrl);
    const claims = await verify(new URLSearchParams(conn.url.split('?')[1]).get('token')!);
    assert.deepEqual(claims.millicast, { type: 'Subscribe', streamAccountId: acct.id, streamName: 'sdk-show', serverId: 'streamgate', record: false, customData: null });
    assert.deepEqual(claims.streaming, { tokenId: s.id, tokenType: 'Subscribe', accountId: acct.id, streamName: 'sdk-show' });
    const cmd = conn.messages.find((m) => (m as { name?: string }).name === 'view') as { data: Record<string, unknown> } | undefined;
    assert.ok(cmd, JSON.stringify(conn.messages).slice(0, 500));
    assert.equal(cmd.data.streamId, 'sdk-show');
    assert.deepEqual(run.peerIceServers, ICE_IN_PEER);
    assertCleanUntilOpen(run, `ws://127.0.0.1:${standIn.port}${wsUrl}`);
    assert.deepEqual(errorsIn(run.log), [], 'no error through connect()');
  });

  it('view of an open stream without a token (the SDK sends no authorization header)', async () => {
    const run = await view('sdk-open');
    assert.equal(run.error, null, JSON.stringify(run.log));
    assert.equal(run.connected, true);
    const conn = connectionFor(`/ws/sub/${acct.id}/sdk-open`);
    assert.equal(conn.url, `/ws/sub/${acct.id}/sdk-open?token=${run.answers[0].jwt}`);
    const claims = await verify(run.answers[0].jwt);
    assert.deepEqual(claims.millicast, { type: 'Subscribe', streamAccountId: acct.id, streamName: 'sdk-open', serverId: 'streamgate', record: false, customData: null });
    assert.equal((claims.streaming as { tokenId?: unknown }).tokenId, undefined);
    assertCleanUntilOpen(run, `ws://127.0.0.1:${standIn.port}${conn.url}`);
  });

  it('a refused viewer: the SDK surfaces the director refusal and opens no WebSocket', async () => {
    const s = await api('/api/subscribe_token', { label: 'sdk', streams: [{ streamName: 'sdk-other' }] });
    const run = await view('sdk-elsewhere', s.token);
    assert.equal(run.connected, false);
    assert.equal(run.error, 'Unauthorized: Stream name not allowed');
    assert.deepEqual(run.answers, []);
    assert.deepEqual(standIn.connections.filter((c) => c.url.includes('sdk-elsewhere')), []);
  });
});
