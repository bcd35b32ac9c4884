// The server's decision fast path (DecisionRoutes.dispatcher, before express) against the same app
// served by express alone: the same status, headers and body for each request, the same request
// context (X-Request-Id, connection: close while draining, request metrics by route, the request
// log line at info), the hook secret guard, the error handler, and everything the table does not
// answer left to express.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testApp, type TestApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import { sqliteFactory } from '../helpers/stores.js';

const SECRET = 'hook-secret-for-the-fast-path-test';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** What must be equal: the random parts (date, generated ids) replaced. */
function comparable(a: Answer) {
  const { date: _d, ...headers } = a.headers;
  if (typeof headers['x-request-id'] === 'string' && /^[0-9a-f-]{36}$/.test(headers['x-request-id'])) headers['x-request-id'] = '<uuid>';
  return { status: a.status, headers, body: a.body.replace(/"decisionId":"[0-9a-f-]{36}"/, '"decisionId":"<id>"') };
}

const JSON_TYPE = { 'content-type': 'application/json' };
const WITH_SECRET = { ...JSON_TYPE, 'x-streamgate-hook-secret': SECRET };

describe('decision fast path', () => {
  const f = sqliteFactory();
  let t: TestApp;
  let fast: Listening;
  let plain: Server;
  let fastPort = 0;
  let plainPort = 0;
  let token = '';

  before(async () => {
    await f.setup();
    t = await testApp(await f.make(), { hooks: { secret: SECRET } });
    // the production server takes the app's decision table (set by createApp) before express
    assert.equal(typeof t.app.locals.decisionDispatch, 'function');
    fast = await listen(t.app);
    fastPort = Number(new URL(fast.base).port);
    // express alone: node's server handing every request to the app
    plain = createServer(t.app);
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', () => r()));
    plainPort = (plain.address() as AddressInfo).port;
    const acct = await t.account('fast');
    const created = await send(fastPort, 'POST', '/api/subscribe_token', { ...JSON_TYPE, authorization: `Bearer ${acct.secret}` }, JSON.stringify({ label: 'f', streams: [{ streamName: 'cam1' }] }));
    assert.equal(created.status, 200, created.body);
    token = JSON.parse(created.body).data.token;
  });
  after(async () => {
    await fast.close();
    plain.closeAllConnections();
    await new Promise<void>((r) => plain.close(() => r()));
    await f.teardown();
  });

  const both = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const a = await send(fastPort, method, path, headers, body);
    const b = await send(plainPort, method, path, headers, body);
    assert.deepEqual(comparable(a), comparable(b), `${method} ${path}`);
    return a;
  };

  it('answers every request as express does', async () => {
    const allow = JSON.stringify({ action: 'subscribe', token, streamName: 'cam1' });
    const cases: Array<[string, string, Record<string, string>, string | undefined, number]> = [
      ['POST', '/hooks/authorize', WITH_SECRET, allow, 200],
      ['POST', '/HOOKS/Authorize/', WITH_SECRET, allow, 200],
      ['POST', `/hooks/authorize?secret=${SECRET}`, JSON_TYPE, allow, 200],
      ['POST', '/hooks/authorize', JSON_TYPE, allow, 401],
      ['POST', '/hooks/authorize', { ...JSON_TYPE, 'x-streamgate-hook-secret': 'wrong' }, allow, 401],
      ['POST', '/hooks/authorize', WITH_SECRET, JSON.stringify({ action: 'subscribe', token, streamName: 'other' }), 403],
      ['POST', '/hooks/authorize', WITH_SECRET, JSON.stringify({ action: 'subscribe', token: 'nope', streamName: 'cam1' }), 401],
      ['POST', '/hooks/authorize', WITH_SECRET, '{"action":', 400],
      ['POST', '/hooks/authorize', WITH_SECRET, JSON.stringify({ action: 'view', streamName: 'cam1' }), 400],
      ['POST', '/hooks/authorize', { ...WITH_SECRET, 'content-type': 'text/plain' }, allow, 415],
      ['GET', '/hooks/authorize', WITH_SECRET, undefined, 404],
      ['GET', '/hooks/authorize', {}, undefined, 401],
      ['POST', '/hooks/nothing-here', WITH_SECRET, allow, 404],
      ['POST', '/hooks/nothing-here', JSON_TYPE, allow, 401],
      ['GET', '/healthz', {}, undefined, 200],
      ['POST', '/hooks/authorize', { ...WITH_SECRET, 'x-request-id': 'caller-id-1' }, allow, 200],
      ['POST', '/hooks/authorize', { ...WITH_SECRET, 'x-request-id': 'not valid!' }, allow, 200],
    ];
    for (const [method, path, headers, body, status] of cases) {
      const a = await both(method, path, headers, body);
      assert.equal(a.status, status, `${method} ${path} ${a.body}`);
    }
    const echoed = await send(fastPort, 'POST', '/hooks/authorize', { ...WITH_SECRET, 'x-request-id': 'caller-id-1' }, allow);
    assert.equal(echoed.headers['x-request-id'], 'caller-id-1');
  });

  it('answers a burst of concurrent requests each with its own answer (answers of one turn are written together)', async () => {
    // 60 requests at once over their own connections, allows and refusals interleaved, each
    // carrying its own request id: every answer must be its request's
    const asks = Array.from({ length: 60 }, (_, i) => ({
      id: `burst-${i}`,
      stream: i % 3 === 0 ? `other${i}` : 'cam1',
    }));
    const answers = await Promise.all(
      asks.map((a) => send(fastPort, 'POST', '/hooks/authorize', { ...WITH_SECRET, 'x-request-id': a.id }, JSON.stringify({ action: 'subscribe', token, streamName: a.stream }))),
    );
    answers.forEach((r, i) => {
      const body = JSON.parse(r.body);
      assert.equal(r.headers['x-request-id'], asks[i].id);
      assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.body)));
      if (asks[i].stream === 'cam1') assert.deepEqual([r.status, body.allowed, body.streamName], [200, true, 'cam1'], asks[i].id);
      else assert.deepEqual([r.status, body.allowed, body.reason], [403, false, 'stream_not_allowed'], asks[i].id);
    });
  });

  it('closes the connection while draining', async () => {
    t.services.draining = true;
    try {
      const a = await both('POST', '/hooks/authorize', WITH_SECRET, JSON.stringify({ action: 'subscribe', token, streamName: 'cam1' }));
      assert.equal(a.headers.connection, 'close');
    } finally {
      t.services.draining = false;
    }
  });

  it('gives a handler error to the error handler', async () => {
    // the file unreadable: the store remembers no version (its poll clears them) and the read fails
    const store = t.services.store as unknown as { accountVersion: (id: string) => Promise<number>; accountVersionKnown: (id: string) => number | undefined };
    const original = { read: store.accountVersion, known: store.accountVersionKnown };
    store.accountVersion = () => Promise.reject(new Error('store down'));
    store.accountVersionKnown = () => undefined;
    try {
      const a = await both('POST', '/hooks/authorize', WITH_SECRET, JSON.stringify({ action: 'subscribe', token, streamName: 'cam1' }));
      assert.equal(a.status, 503, a.body);
    } finally {
      store.accountVersion = original.read;
      store.accountVersionKnown = original.known;
    }
  });

  it('counts the request by route, and logs it only at info', async () => {
    const count = async (status: number) => {
      const m = await send(plainPort, 'GET', '/metrics', {});
      const line = m.body.split('\n').find((l) => l.startsWith(`streamgate_http_requests_total{route="/hooks/authorize",method="POST",status="${status}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const body = JSON.stringify({ action: 'subscribe', token, streamName: 'cam1' });
    const before200 = await count(200);
    await send(fastPort, 'POST', '/hooks/authorize', WITH_SECRET, body);
    assert.equal(await count(200), before200 + 1);

    const logger = t.services.logger as unknown as { level: string; info: (...a: unknown[]) => void };
    const lines: unknown[][] = [];
    const spy = () => {
      // pino sets its level methods anew when the level changes: spy after setting it
      logger.info = (...a: unknown[]) => void lines.push(a);
    };
    spy();
    try {
      await send(fastPort, 'POST', '/hooks/authorize', WITH_SECRET, body);
      assert.equal(lines.filter((l) => l[1] === 'request').length, 0);
      logger.level = 'info';
      spy();
      await send(fastPort, 'POST', '/hooks/authorize?x=1', { ...WITH_SECRET, 'x-request-id': 'logged-1' }, body);
      const logged = lines.filter((l) => l[1] === 'request').map((l) => {
        const { ms: _ms, ...rest } = l[0] as Record<string, unknown>;
        return rest;
      });
      assert.deepEqual(logged, [{ reqId: 'logged-1', method: 'POST', path: '/hooks/authorize', route: '/hooks/authorize', status: 200 }]);
    } finally {
      logger.level = 'silent';
    }
  });
});
