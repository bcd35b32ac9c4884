// The MediaMTX usage poller against a real local HTTP server speaking the Control API's list shape:
// exact deltas, pagination, resets, missing lists, outages and the timer loop. The request timeout
// and the loop's interval run on node:test's mocked clock; a slow server or sink is one the test
// holds, and lets go of once it has moved the clock.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockClock } from '../helpers/mock-clock.js';
import { MediamtxPoller, type PollerOptions, type UsageDelta } from '../../src/analytics/mediamtx-poller.js';

const ALL = [
  '/v3/rtmpconns/list',
  '/v3/rtmpsconns/list',
  '/v3/rtspsessions/list',
  '/v3/rtspssessions/list',
  '/v3/srtconns/list',
  '/v3/webrtcsessions/list',
  '/v3/hlssessions/list',
];

type Item = Record<string, unknown>;

/** Holds each caller until the test lets it go: a server or a sink as slow as the test says. */
class Gate {
  private held: Array<() => void> = [];
  private unseen = 0;
  private watchers: Array<() => void> = [];

  pass(): Promise<void> {
    return new Promise((resolve) => {
      this.held.push(resolve);
      const watcher = this.watchers.shift();
      if (watcher) watcher();
      else this.unseen++;
    });
  }

  /** Resolves once the next caller is held here (each caller is reported once). */
  arrived(): Promise<void> {
    if (this.unseen > 0) {
      this.unseen--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.watchers.push(resolve));
  }

  /** Lets the caller held longest go on. */
  release(): void {
    this.held.shift()?.();
  }

  /** Lets every caller go on, now and from now on (a test that failed leaves nothing held). */
  open(): void {
    this.pass = () => Promise.resolve();
    for (const go of this.held.splice(0)) go();
  }
}

let gates: Gate[] = [];
const gate = (): Gate => {
  const g = new Gate();
  gates.push(g);
  return g;
};

/** Lets every callback already due run (setImmediate is not among the mocked timers). */
const settle = () => new Promise((r) => setImmediate(r));

/** A stand-in for MediaMTX's API: lists and their pagination follow internal/api/paginate.go. */
class FakeMediamtx {
  lists = new Map<string, Item[]>();
  /** Endpoints this "server version" does not have. */
  missing = new Set<string>();
  /** Endpoint -> raw body to answer instead of the list (for broken responses). */
  raw = new Map<string, string>();
  /** Endpoint -> status to answer with instead of the list. */
  status = new Map<string, number>();
  /** While set, requests for lists that exist wait here before they are answered (never, if the test never lets them go). */
  gate: Gate | undefined;
  requests: Array<{ path: string; page: number; itemsPerPage: number; authorization?: string }> = [];
  inFlight = 0;
  maxInFlight = 0;
  onRequest: ((path: string, page: number) => void) | undefined;
  port = 0;
  private server: http.Server | undefined;

  async listen(port = 0): Promise<void> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  count(path: string): number {
    return this.requests.filter((r) => r.path === path).length;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      const u = new URL(req.url ?? '/', 'http://x');
      const page = Number(u.searchParams.get('page') ?? '0');
      const itemsPerPage = Number(u.searchParams.get('itemsPerPage') ?? '100');
      this.requests.push({ path: u.pathname, page, itemsPerPage, authorization: req.headers.authorization });
      this.onRequest?.(u.pathname, page);
      if (this.missing.has(u.pathname) || !ALL.includes(u.pathname)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
        return;
      }
      // Only lists that exist are slow: the router answers a 404 at once.
      if (this.gate) await this.gate.pass();
      const status = this.status.get(u.pathname);
      if (status !== undefined) {
        res.writeHead(status, { 'content-type': 'application/json' }).end('{"status":"error","error":"boom"}');
        return;
      }
      const raw = this.raw.get(u.pathname);
      if (raw !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(raw);
        return;
      }
      const all = this.lists.get(u.pathname) ?? [];
      const pageCount = all.length === 0 ? 0 : Math.ceil(all.length / itemsPerPage);
      const start = Math.min(page * itemsPerPage, all.length);
      const items = all.slice(start, Math.min((page + 1) * itemsPerPage, all.length));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ pageCount, itemCount: all.length, items }));
    } finally {
      this.inFlight--;
    }
  }
}

/** An RTMP conn the way MediaMTX >= 1.17 renders it (new and deprecated names side by side). */
function rtmpConn(id: string, outBytes: number, inBytes: number): Item {
  return {
    id,
    created: '2026-01-01T00:00:00Z',
    remoteAddr: '203.0.113.7:50000',
    state: 'read',
    path: 'live/cam1',
    query: 'token=SECRET-TOKEN-VALUE',
    outboundBytes: outBytes,
    inboundBytes: inBytes,
    bytesSent: outBytes,
    bytesReceived: inBytes,
  };
}

/** The same object from MediaMTX < 1.17: only the old names. */
function oldConn(id: string, sent: number, received: number): Item {
  return {
    id,
    created: '2026-01-01T00:00:00Z',
    state: 'publish',
    query: 'token=SECRET-TOKEN-VALUE',
    bytesSent: sent,
    bytesReceived: received,
  };
}

interface LogLine {
  level: 'warn' | 'info';
  obj: object;
  msg: string;
}

function harness(fake: FakeMediamtx, extra: Partial<PollerOptions> = {}) {
  const logs: LogLine[] = [];
  const batches: UsageDelta[][] = [];
  let clock = 1_000;
  const poller = new MediamtxPoller(
    {
      apiUrl: fake.url,
      intervalMs: 60_000,
      now: () => clock,
      logger: {
        warn: (obj, msg) => logs.push({ level: 'warn', obj, msg }),
        info: (obj, msg) => logs.push({ level: 'info', obj, msg }),
      },
      ...extra,
    },
    async (deltas) => {
      batches.push(deltas);
    },
  );
  return {
    poller,
    logs,
    batches,
    tick(ms: number) {
      clock += ms;
    },
    /** Deltas of the last batch, by session id, in a stable order. */
    last(): Array<[string, number, number]> {
      const b = batches.at(-1) ?? [];
      return b
        .map((d): [string, number, number] => [d.sessionId, d.bytesOut, d.bytesIn])
        .sort((x, y) => x[0].localeCompare(y[0]));
    },
  };
}

/** Everything a log line carries, errors included (JSON.stringify drops Error fields). */
function logText(logs: LogLine[]): string {
  return JSON.stringify(logs, (_k, v: unknown) =>
    v instanceof Error ? { message: v.message, stack: v.stack } : v,
  );
}

let fakes: FakeMediamtx[] = [];
let pollers: MediamtxPoller[] = [];

async function fake(): Promise<FakeMediamtx> {
  const f = new FakeMediamtx();
  await f.listen();
  fakes.push(f);
  return f;
}

afterEach(async () => {
  for (const g of gates) g.open();
  gates = [];
  for (const p of pollers) await p.stop();
  for (const f of fakes) await f.close();
  pollers = [];
  fakes = [];
});

describe('MediamtxPoller', () => {
  it('reads the new and the old counter names and reports exact deltas between polls', async () => {
    const f = await fake();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1000, 10)]);
    f.lists.set('/v3/rtspsessions/list', [oldConn('b', 2000, 20)]);
    // Both names present but different: the new one wins.
    f.lists.set('/v3/webrtcsessions/list', [{ ...rtmpConn('c', 500, 5), bytesSent: 999, bytesReceived: 99 }]);
    const h = harness(f);

    await h.poller.pollOnce();
    assert.equal(h.batches.length, 1);
    assert.deepEqual(h.last(), [
      ['a', 1000, 10],
      ['b', 2000, 20],
      ['c', 500, 5],
    ]);
    assert.ok(h.batches[0].every((d) => d.at === 1_000));

    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1750, 15)]);
    f.lists.set('/v3/rtspsessions/list', [oldConn('b', 2001, 20)]);
    h.tick(5_000);
    await h.poller.pollOnce();
    assert.equal(h.batches.length, 2);
    // c did not move: no zero delta is reported for it.
    assert.deepEqual(h.last(), [
      ['a', 750, 5],
      ['b', 1, 0],
    ]);
    assert.ok(h.batches[1].every((d) => d.at === 6_000));

    // Nothing moved: the sink is not called at all.
    await h.poller.pollOnce();
    assert.equal(h.batches.length, 2);
    assert.deepEqual(h.logs, []);
    // Every list was asked on every poll.
    for (const p of ALL) assert.equal(f.count(p), 3, p);
  });

  it('reads every page of a paginated list', async () => {
    const f = await fake();
    f.lists.set(
      '/v3/srtconns/list',
      ['s1', 's2', 's3', 's4', 's5', 's6'].map((id, i) => rtmpConn(id, (i + 1) * 100, i + 1)),
    );
    const h = harness(f, { itemsPerPage: 2 });

    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [
      ['s1', 100, 1],
      ['s2', 200, 2],
      ['s3', 300, 3],
      ['s4', 400, 4],
      ['s5', 500, 5],
      ['s6', 600, 6],
    ]);
    const srt = f.requests.filter((r) => r.path === '/v3/srtconns/list');
    assert.deepEqual(
      srt.map((r) => [r.page, r.itemsPerPage]),
      [
        [0, 2],
        [1, 2],
        [2, 2],
      ],
    );
    // Empty lists (pageCount 0) cost one request each.
    assert.equal(f.count('/v3/rtmpconns/list'), 1);
  });

  it('treats a counter that went down as a reset: the delta is the new value, never negative', async () => {
    const f = await fake();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1000, 400)]);
    const h = harness(f);
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [['a', 1000, 400]]);

    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 300, 500)]);
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [['a', 300, 100]]);

    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 350, 500)]);
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [['a', 50, 0]]);
  });

  it('skips a list the server does not have (404), asking for it only once', async () => {
    const f = await fake();
    f.missing.add('/v3/hlssessions/list');
    f.missing.add('/v3/rtmpsconns/list');
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 100, 0)]);
    const h = harness(f);

    await h.poller.pollOnce();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 150, 0)]);
    await h.poller.pollOnce();
    await h.poller.pollOnce();

    assert.equal(f.count('/v3/hlssessions/list'), 1);
    assert.equal(f.count('/v3/rtmpsconns/list'), 1);
    assert.equal(f.count('/v3/rtmpconns/list'), 3);
    assert.deepEqual(
      h.batches.map((b) => b.map((d) => [d.sessionId, d.bytesOut])),
      [[['a', 100]], [['a', 50]]],
    );
    assert.deepEqual(h.logs, [], 'a missing list is not a failure');
  });

  it('survives an outage with one warning, then counts the bytes of the outage once it is back', async () => {
    const f = await fake();
    const port = f.port;
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1000, 0)]);
    f.lists.set('/v3/srtconns/list', [oldConn('b', 0, 5000)]);
    const h = harness(f);
    await h.poller.pollOnce();
    assert.equal(h.batches.length, 1);

    await f.close();
    for (let i = 0; i < 3; i++) await h.poller.pollOnce(); // resolves, does not throw
    assert.equal(h.batches.length, 1);
    assert.equal(h.logs.length, 1);
    const [warn] = h.logs;
    assert.equal(warn.level, 'warn');
    assert.equal(warn.msg, 'mediamtx API unreachable; usage polling paused');
    assert.equal((warn.obj as { apiUrl: string }).apiUrl, `http://127.0.0.1:${port}`);
    assert.ok((warn.obj as { err: unknown }).err instanceof Error);

    // Back on the same port; the connections kept going meanwhile.
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 4000, 0)]);
    f.lists.set('/v3/srtconns/list', [oldConn('b', 0, 5600)]);
    await f.listen(port);
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [
      ['a', 3000, 0],
      ['b', 0, 600],
    ]);
    assert.equal(h.logs.length, 2);
    assert.equal(h.logs[1].level, 'info');
    assert.match(h.logs[1].msg, /back/);

    // Down again: a new outage gets its own single warning.
    await f.close();
    await h.poller.pollOnce();
    await h.poller.pollOnce();
    assert.deepEqual(
      h.logs.map((l) => l.level),
      ['warn', 'info', 'warn'],
    );
  });

  it('treats non-2xx answers, broken JSON, a wrong shape and timeouts as the API being down', async (t) => {
    const timeouts = mockClock(t).signalTimeouts;
    const f = await fake();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 100, 0)]);
    const h = harness(f, { requestTimeoutMs: 100 });
    await h.poller.pollOnce();
    let bytes = 100;
    const warnings: string[] = [];
    const hung = gate(); // never let go: an API that accepts requests and never answers
    /** A poll of the hung API: over once its request's timeout has passed, and not before. */
    const pollHung = async () => {
      const asked = f.requests.length;
      let over = false;
      const polled = h.poller.pollOnce().then(() => {
        over = true;
      });
      await hung.arrived();
      t.mock.timers.tick(99);
      await settle();
      assert.equal(over, false, 'still waiting 99 ms on');
      t.mock.timers.tick(1);
      await settle();
      assert.equal(over, true, 'over when the request timeout passes');
      await polled;
      assert.equal(f.requests.length, asked + 1, 'one request timeout per poll');
    };

    /** Breaks the API, polls twice (one warning), repairs it and checks the bytes come through. */
    async function outage(breakIt: () => void, repair: () => void, poll = () => h.poller.pollOnce()): Promise<void> {
      breakIt();
      bytes += 50;
      f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', bytes, 0)]);
      const before = h.logs.length;
      await poll();
      await poll();
      assert.deepEqual(
        h.logs.slice(before).map((l) => l.level),
        ['warn'],
      );
      warnings.push((h.logs[before].obj as { err: Error }).err.message);
      repair();
      await h.poller.pollOnce();
      assert.deepEqual(h.last(), [['a', 50, 0]]);
      assert.deepEqual(
        h.logs.slice(before).map((l) => l.level),
        ['warn', 'info'],
      );
    }

    await outage(
      () => f.status.set('/v3/srtconns/list', 500),
      () => f.status.delete('/v3/srtconns/list'),
    );
    await outage(
      () => f.status.set('/v3/rtmpconns/list', 401),
      () => f.status.delete('/v3/rtmpconns/list'),
    );
    // Not JSON, and its first bytes are a token: V8's parse error would quote them; the warning must not.
    await outage(
      () => f.raw.set('/v3/rtmpconns/list', 'SECRET-TOKEN-VALUE'),
      () => f.raw.delete('/v3/rtmpconns/list'),
    );
    await outage(
      () => f.raw.set('/v3/webrtcsessions/list', JSON.stringify({ status: 'error', error: 'not a list' })),
      () => f.raw.delete('/v3/webrtcsessions/list'),
    );
    await outage(
      () => {
        f.gate = hung;
      },
      () => {
        f.gate = undefined;
      },
      pollHung,
    );
    assert.ok(timeouts.length > 0 && timeouts.every((ms) => ms === 100), `every request is bounded by requestTimeoutMs: ${timeouts}`);

    assert.equal(warnings.length, 5);
    assert.match(warnings[0], /srtconns.*HTTP 500/);
    assert.match(warnings[1], /rtmpconns.*HTTP 401/);
    assert.match(warnings[2], /rtmpconns.*not JSON/);
    assert.match(warnings[3], /webrtcsessions.*not a MediaMTX list/);
    assert.match(warnings[4], /rtmpconns.*(timeout|abort)/i);
    assert.doesNotMatch(logText(h.logs), /SECRET/);
    assert.equal(h.batches.length, 6);
  });

  it('does not forget an id missed because its list changed between pages', async () => {
    const f = await fake();
    const conns = (n: number) => ['x1', 'x2', 'x3', 'x4'].map((id) => rtmpConn(id, n, 0));
    f.lists.set('/v3/srtconns/list', conns(100));
    const h = harness(f, { itemsPerPage: 2 });
    await h.poller.pollOnce();

    // x1 closes after page 0 was read: x3 slides onto page 0 and this poll never sees it.
    f.lists.set('/v3/srtconns/list', conns(200));
    f.onRequest = (path, page) => {
      if (path === '/v3/srtconns/list' && page === 1) f.lists.set('/v3/srtconns/list', conns(200).slice(1));
    };
    await h.poller.pollOnce();
    f.onRequest = undefined;
    assert.deepEqual(h.last(), [
      ['x1', 100, 0],
      ['x2', 100, 0],
      ['x4', 100, 0],
    ]);

    // Seen again: only what it sent since the last reading, not its whole count a second time.
    f.lists.set('/v3/srtconns/list', conns(300).slice(1));
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [
      ['x2', 100, 0],
      ['x3', 200, 0],
      ['x4', 100, 0],
    ]);
  });

  it('forgets ids that disappeared: a reappearing id counts from zero', async () => {
    const f = await fake();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1000, 0), rtmpConn('b', 70, 0)]);
    const h = harness(f);
    await h.poller.pollOnce();

    f.lists.set('/v3/rtmpconns/list', [rtmpConn('b', 80, 0)]);
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [['b', 10, 0]]);

    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1500, 0), rtmpConn('b', 80, 0)]);
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [['a', 1500, 0]]);
  });

  it('keeps polling when the sink fails, without offering the same bytes again (at-most-once)', async () => {
    const f = await fake();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1000, 0)]);
    const logs: LogLine[] = [];
    const got: UsageDelta[][] = [];
    let fail = true;
    const poller = new MediamtxPoller(
      {
        apiUrl: f.url,
        intervalMs: 60_000,
        logger: {
          warn: (obj, msg) => logs.push({ level: 'warn', obj, msg }),
          info: (obj, msg) => logs.push({ level: 'info', obj, msg }),
        },
      },
      async (deltas) => {
        got.push(deltas);
        if (fail) throw new Error('store down');
      },
    );
    await poller.pollOnce();
    fail = false;
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1200, 0)]);
    await poller.pollOnce();
    assert.deepEqual(
      got.map((b) => b.map((d) => d.bytesOut)),
      [[1000], [200]],
    );
    assert.equal(logs.length, 1);
    assert.equal(logs[0].level, 'warn');
    assert.equal(logs[0].msg, 'usage sink failed; mediamtx usage deltas dropped');
  });

  it('sends credentials from the URL as Basic auth and never logs them or item fields', async () => {
    const f = await fake();
    f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', 1, 0)]);
    const h = harness(f, { apiUrl: `http://streamgate:p%40ss-SECRET@127.0.0.1:${f.port}/` });
    await h.poller.pollOnce();
    assert.deepEqual(h.last(), [['a', 1, 0]]);
    const expected = `Basic ${Buffer.from('streamgate:p@ss-SECRET').toString('base64')}`;
    assert.ok(f.requests.every((r) => r.authorization === expected));

    await f.close();
    await h.poller.pollOnce();
    assert.equal(h.logs.length, 1);
    assert.equal((h.logs[0].obj as { apiUrl: string }).apiUrl, `http://127.0.0.1:${f.port}`);
    assert.doesNotMatch(logText(h.logs), /SECRET|streamgate:/);
  });

  it('start() polls at once and then every intervalMs without overlap; stop() waits and ends it', { timeout: 30_000 }, async (t) => {
    mockClock(t);
    // When each poll starts (on the mocked clock): the moment it asks for the list.
    const starts: number[] = [];
    const realFetch = globalThis.fetch;
    t.mock.method(globalThis, 'fetch', (input: string, init?: RequestInit) => {
      if (input.includes('/v3/rtmpconns/list')) starts.push(Date.now());
      return realFetch(input, init);
    });
    const f = await fake();
    for (const p of ALL) if (p !== '/v3/rtmpconns/list') f.missing.add(p);
    // Each read of the list finds 1000 more bytes sent.
    let out = 0;
    let inSink = false;
    let requestsDuringSink = 0;
    f.onRequest = (path) => {
      if (inSink) requestsDuringSink++;
      if (path !== '/v3/rtmpconns/list') return;
      out += 1000;
      f.lists.set('/v3/rtmpconns/list', [rtmpConn('a', out, 0)]);
    };
    const sink = gate();
    const batches: UsageDelta[][] = [];
    const poller = new MediamtxPoller(
      { apiUrl: f.url, intervalMs: 50, logger: { warn: () => {}, info: () => {} } },
      async (deltas) => {
        inSink = true;
        await sink.pass();
        batches.push(deltas);
        inSink = false;
      },
    );
    pollers.push(poller);

    // The first poll does not wait for the interval: with an hour-long one, it still comes.
    const lazy = new MediamtxPoller(
      { apiUrl: f.url, intervalMs: 3_600_000, logger: { warn: () => {}, info: () => {} } },
      async () => {},
    );
    pollers.push(lazy);
    lazy.start();
    await lazy.stop();
    assert.equal(f.count('/v3/rtmpconns/list'), 1, 'the first poll starts immediately');
    f.requests = [];
    f.lists.delete('/v3/rtmpconns/list');
    out = 0;
    starts.length = 0;

    // Every poll from here: the server answers 30 ms after the request, the sink takes 10 ms more.
    f.gate = gate();
    /** Answers the poll whose request is on its way: 30 ms at the server, then 10 ms in the sink. */
    const answer = async () => {
      await f.gate!.arrived();
      assert.equal(f.inFlight, 1);
      t.mock.timers.tick(30);
      f.gate!.release();
      await sink.arrived();
      t.mock.timers.tick(10);
      sink.release();
      await settle(); // the poll is over; the loop has set its timer
    };
    /** Moves the clock to `at` ms and lets what is then due run. */
    const clockTo = async (at: number) => {
      t.mock.timers.tick(at - Date.now());
      await settle();
    };

    poller.start();
    poller.start(); // a second start() is a no-op, not a second loop
    await settle();
    assert.deepEqual(starts, [0]);
    for (let k = 1; k <= 3; k++) {
      await answer();
      await clockTo(k * 50 - 1);
      assert.equal(starts.length, k, `poll ${k} does not start before ${k * 50} ms`);
      await clockTo(k * 50);
      assert.deepEqual(starts.slice(k), [k * 50], `poll ${k} starts at ${k * 50} ms: the cadence is kept`);
    }
    assert.equal(batches.length, 3);
    assert.equal(f.maxInFlight, 1, 'requests (and so polls) never overlap');
    assert.equal(requestsDuringSink, 0, 'the next poll waits for the sink');

    // Polls asked for by hand while the loop runs queue behind it instead of running alongside;
    // the loop's next poll, due at 200 ms, waits for them in turn.
    const manual = Promise.all([poller.pollOnce(), poller.pollOnce()]);
    await answer();
    await answer();
    await answer();
    await manual;
    assert.deepEqual(starts, [0, 50, 100, 150, 190, 230, 270]);
    assert.equal(f.maxInFlight, 1, 'a manual pollOnce() does not overlap the loop');
    assert.equal(requestsDuringSink, 0);

    // Stop while a request is in flight: stop() resolves once that poll has been delivered.
    await f.gate.arrived(); // the loop's poll that was due at 200 ms, started at 270
    assert.equal(f.inFlight, 1);
    const delivered = batches.length;
    let stopped = false;
    const stopping = poller.stop().then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(stopped, false, 'stop() waits for the running request');
    t.mock.timers.tick(30);
    f.gate.release();
    await sink.arrived();
    await settle();
    assert.equal(stopped, false, 'and for the sink');
    t.mock.timers.tick(10);
    sink.release();
    await stopping;
    assert.equal(f.inFlight, 0, 'stop() waited for the running poll');
    assert.equal(batches.length, delivered + 1, 'the running poll was finished, sink included');
    t.mock.timers.tick(10_000);
    await settle();
    assert.equal(starts.length, 7, 'no poll after stop()');
    // Every poll that finished delivered exactly the 1000 bytes its request added.
    assert.equal(batches.length, 7);
    assert.ok(batches.every((b) => b.length === 1 && b[0].bytesOut === 1000));
  });
});
