// The delivery client against real TLS servers on 127.0.0.1: what reaches the receiver, and that
// a refused target, a redirect, a hang or a bad certificate all come back as data. The delivery
// timeout runs on node:test's mocked clock (setTimeout, and performance.now for durationMs).
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { WebhookClient, type DeliveryOptions } from '../../src/webhooks/client.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  remotePort: number;
}

interface TestServer {
  url: (p?: string) => string;
  port: number;
  received: Received[];
  connections: number;
  close: () => Promise<void>;
}

let dir: string;
let keyPem: string;
let certPem: string;
let caFile: string;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sg-webhook-'));
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem'),
    ],
    { stdio: 'pipe' },
  );
  keyPem = fs.readFileSync(path.join(dir, 'k.pem'), 'utf8');
  certPem = fs.readFileSync(path.join(dir, 'c.pem'), 'utf8');
  caFile = path.join(dir, 'c.pem');
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

type Responder = (req: Received, res: import('node:http').ServerResponse) => void;

async function startServer(respond: Responder): Promise<TestServer> {
  const received: Received[] = [];
  const server = https.createServer({ key: keyPem, cert: certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        remotePort: req.socket.remotePort ?? 0,
      };
      received.push(r);
      respond(r, res);
    });
  });
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    get connections() {
      return state.connections;
    },
    url: (p = '/hook') => `https://127.0.0.1:${port}${p}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function withClient<T>(opts: Partial<DeliveryOptions>, fn: (c: WebhookClient) => Promise<T>): Promise<T> {
  const client = new WebhookClient({ timeoutMs: 2000, allowPrivateTargets: true, ...opts });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** One turn of the event loop: undici hands a connection back to its pool a turn (setImmediate) after the reply. */
const nextTurn = () => new Promise((r) => setImmediate(r));

/** The mocked clock, with performance.now (what durationMs is measured on) following it. */
function mockClock(t: TestContext): void {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  t.mock.method(performance, 'now', () => Date.now());
}

/** A receiver that reads each request and never answers; `arrived` resolves once one has come in. */
async function silentServer(): Promise<TestServer & { arrived: Promise<void> }> {
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const server = await startServer(() => arrive());
  return Object.assign(server, { arrived });
}

// Every byte value, so any re-encoding on the way would show.
const BODY = Buffer.concat([Buffer.from('{"type":"feeds","event":"started"}\n'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]);
const HEADERS = {
  'content-type': 'application/json',
  'x-service-signature': 'sha1=0123456789abcdef0123456789abcdef01234567',
  'webhook-id': 'msg_1',
};

describe('WebhookClient', () => {
  it('(a) delivers the exact body and headers to a private target when allowed, trusting caFile', async () => {
    const server = await startServer((_r, res) => res.writeHead(200).end('ok'));
    try {
      const result = await withClient({ caFile }, (c) => c.post(server.url('/hook?x=1'), BODY, HEADERS));
      assert.equal(result.error, undefined);
      assert.equal(result.statusCode, 200);
      assert.ok(result.durationMs >= 0);
      assert.equal(server.received.length, 1);
      const got = server.received[0];
      assert.equal(got.method, 'POST');
      assert.equal(got.url, '/hook?x=1');
      assert.ok(got.body.equals(BODY));
      assert.equal(got.headers['content-length'], String(BODY.length));
      for (const [k, v] of Object.entries(HEADERS)) assert.equal(got.headers[k], v);
    } finally {
      await server.close();
    }
  });

  // undici's pool frees a connection one turn of the event loop after the response completes, so
  // back-to-back posts can open a second socket; waiting that turn keeps this about draining.
  it('reuses the connection when the reply body is small enough to drain', async () => {
    const server = await startServer((_r, res) => res.writeHead(200).end('x'.repeat(10_000)));
    try {
      await withClient({ caFile }, async (c) => {
        for (let i = 0; i < 3; i++) {
          assert.equal((await c.post(server.url(), BODY, HEADERS)).statusCode, 200);
          await nextTurn();
        }
      });
      const ports = server.received.map((r) => r.remotePort);
      assert.equal(ports.length, 3);
      assert.equal(new Set(ports).size, 1);
      assert.equal(server.connections, 1);
    } finally {
      await server.close();
    }
  });

  it('drops the connection instead of reading a reply body over 64 KiB', async () => {
    const server = await startServer((_r, res) => res.writeHead(200).end('x'.repeat(200_000)));
    try {
      await withClient({ caFile }, async (c) => {
        for (let i = 0; i < 2; i++) {
          assert.equal((await c.post(server.url(), BODY, HEADERS)).statusCode, 200);
          await nextTurn();
        }
      });
      // The first socket was closed rather than read to the end, so the second delivery came
      // on a new one. (undici may also open a spare socket while replacing it: not counted.)
      const ports = server.received.map((r) => r.remotePort);
      assert.equal(ports.length, 2);
      assert.notEqual(ports[0], ports[1]);
    } finally {
      await server.close();
    }
  });

  it('(b) refuses an IP-literal private target before connecting', async () => {
    const server = await startServer((_r, res) => res.writeHead(200).end());
    try {
      const result = await withClient({ caFile, allowPrivateTargets: false }, (c) => c.post(server.url(), BODY, HEADERS));
      assert.equal(result.statusCode, undefined);
      assert.equal(result.error, 'refused: loopback address (127.0.0.1)');
      // A delivery that is let through connects after any socket the refused one opened: once the
      // server has it, it would have had that socket too.
      assert.equal((await withClient({ caFile }, (c) => c.post(server.url(), BODY, HEADERS))).statusCode, 200);
      assert.equal(server.connections, 1, 'only the delivery let through connected');
      assert.equal(server.received.length, 1);
    } finally {
      await server.close();
    }
  });

  it('(c) does not follow a redirect', async () => {
    const server = await startServer((r, res) =>
      r.url === '/hook' ? res.writeHead(302, { location: '/elsewhere' }).end() : res.writeHead(200).end(),
    );
    try {
      await withClient({ caFile }, async (c) => {
        const result = await c.post(server.url(), BODY, HEADERS);
        assert.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: 302, error: undefined });
        // The next delivery on the same connection comes after any request the redirect led to.
        await nextTurn();
        assert.equal((await c.post(server.url('/next'), BODY, HEADERS)).statusCode, 200);
      });
      assert.deepEqual(
        server.received.map((r) => r.url),
        ['/hook', '/next'],
      );
      assert.equal(server.connections, 1);
    } finally {
      await server.close();
    }
  });

  it('(d) gives up after timeoutMs when the receiver never answers', async (t) => {
    mockClock(t);
    const server = await silentServer();
    try {
      await withClient({ caFile, timeoutMs: 300 }, async (c) => {
        let over = false;
        const posting = c.post(server.url(), BODY, HEADERS).finally(() => {
          over = true;
        });
        await server.arrived;
        t.mock.timers.tick(299);
        await nextTurn();
        assert.equal(over, false, 'still waiting 299 ms on');
        t.mock.timers.tick(1);
        await nextTurn();
        assert.equal(over, true, 'over at 300 ms');
        assert.deepEqual(await posting, { error: 'timeout after 300 ms', durationMs: 300 });
      });
      assert.equal(server.received.length, 1);
    } finally {
      await server.close();
    }
  });

  it('stops an attempt at once when its signal aborts (shutdown), reporting aborted rather than a timeout', async (t) => {
    mockClock(t);
    const server = await silentServer();
    try {
      const stop = new AbortController();
      const result = await withClient({ caFile, timeoutMs: 5000 }, async (c) => {
        let over = false;
        const posting = c.post(server.url(), BODY, HEADERS, stop.signal).finally(() => {
          over = true;
        });
        await server.arrived;
        stop.abort();
        await nextTurn();
        assert.equal(over, true, 'over at once');
        return posting;
      });
      // the clock never moved: the attempt ended without waiting for any timer
      assert.deepEqual(result, { error: 'aborted', durationMs: 0 });
      assert.equal(server.received.length, 1);
      const again = await withClient({ caFile }, (c) => c.post(server.url(), BODY, HEADERS, stop.signal));
      assert.deepEqual([again.statusCode, again.error], [undefined, 'aborted']);
      assert.equal(server.received.length, 1, 'an already aborted signal sends nothing');
    } finally {
      await server.close();
    }
  });

  it('(e) without caFile a self-signed receiver fails with a TLS error', async () => {
    const server = await startServer((_r, res) => res.writeHead(200).end());
    try {
      const result = await withClient({}, (c) => c.post(server.url(), BODY, HEADERS));
      assert.equal(result.statusCode, undefined);
      assert.equal(result.error, 'self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)');
      assert.equal(server.received.length, 0);
    } finally {
      await server.close();
    }
  });

  it('(f) refuses a name that resolves to loopback, at connect time', async () => {
    const server = await startServer((_r, res) => res.writeHead(200).end());
    try {
      const url = `https://localhost:${server.port}/hook`;
      const result = await withClient({ caFile, allowPrivateTargets: false }, (c) => c.post(url, BODY, HEADERS));
      assert.equal(result.statusCode, undefined);
      // localhost may list ::1 before 127.0.0.1; either way the DNS path names the host.
      assert.match(result.error ?? '', /^refused: localhost resolves to a loopback address \((127\.0\.0\.1|::1)\)$/);
      // The same name goes through when private targets are allowed, so the refusal above was the guard.
      const allowed = await withClient({ caFile }, (c) => c.post(url, BODY, HEADERS));
      assert.equal(allowed.statusCode, 200, allowed.error);
      // It connected after any socket the refused delivery opened: the server would have had that one too.
      assert.equal(server.connections, 1, 'only the delivery let through connected');
    } finally {
      await server.close();
    }
  });

  it('(g) reports a refused connection without throwing', async () => {
    const port = await freePort();
    const result = await withClient({ caFile }, (c) => c.post(`https://127.0.0.1:${port}/hook`, BODY, HEADERS));
    assert.equal(result.statusCode, undefined);
    assert.equal(result.error, `connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('reports a URL that breaks the shape rules without sending', async () => {
    const result = await withClient({}, (c) => c.post('http://127.0.0.1:1/hook', BODY, HEADERS));
    assert.deepEqual({ statusCode: result.statusCode, error: result.error }, { statusCode: undefined, error: 'invalid url: must use https' });
  });
});
