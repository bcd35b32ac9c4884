// The Cutter around the drivers: which configured server a session goes to, retries with backoff,
// a bound on a server that never answers (without holding the event loop), and shutdown. Backoffs
// and timeouts run on node:test's mocked clock: a test moves it once the timer it expects is set.
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { after, before, beforeEach, describe, it, type TestContext } from 'node:test';
import { DRIVERS } from '../../src/sessions/drivers/cutter.js';
import { mediamtxStandIn, type MediamtxStandIn } from '../helpers/stand-ins/mediamtx.js';
import { srsStandIn, type SrsStandIn } from '../helpers/stand-ins/srs.js';
import type { StandIn } from '../helpers/stand-ins/base.js';
import { harness, target } from './harness.js';
import { mockClock as sharedMockClock } from '../helpers/mock-clock.js';

const ID = '6a0f4c2e-1b7d-4d3a-9e55-0c1f2a3b4c5d';
const rtmp = (more = {}) => target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtmp' }, more);

const nextTurn = () => new Promise((r) => setImmediate(r));

/** Resolves once `standIn` has received `n` calls in all (the requests travel over real sockets). */
async function received(standIn: StandIn, n: number): Promise<void> {
  while (standIn.calls.length < n) await nextTurn();
}

/**
 * node:test's mocked setTimeout and Date from 0 ms, with performance.now (the stand-ins' arrival
 * times) and AbortSignal.timeout (each exchange's bound) on the same clock. `set(ms)` tells whether
 * a timer of `ms` has been set since (each one is told once): a backoff or a bound now waiting.
 */
function mockClock(t: TestContext) {
  const clock = sharedMockClock(t);
  const unseen = new Map<number, number>();
  const mocked = globalThis.setTimeout;
  t.mock.method(globalThis, 'setTimeout', ((fn: () => void, ms: number, ...args: unknown[]) => {
    unseen.set(ms, (unseen.get(ms) ?? 0) + 1);
    return mocked(fn, ms, ...args);
  }) as typeof setTimeout);
  return {
    set(ms: number): boolean {
      const n = unseen.get(ms) ?? 0;
      if (n > 0) unseen.set(ms, n - 1);
      return n > 0;
    },
    tick: clock.tick,
  };
}

/**
 * Resolves once `n` HTTP exchanges are over, answered or failed, as undici reports them on its
 * diagnostics channels; what the cutter does next (a backoff) is set within the turn that follows.
 */
function exchanges(t: TestContext): (n: number) => Promise<void> {
  let over = 0;
  let waiting: Array<{ n: number; resolve: () => void }> = [];
  const count = () => {
    over++;
    for (const w of waiting) if (w.n <= over) w.resolve();
    waiting = waiting.filter((w) => w.n > over);
  };
  for (const name of ['undici:request:trailers', 'undici:request:error']) {
    diagnostics.subscribe(name, count);
    t.after(() => diagnostics.unsubscribe(name, count));
  }
  return async (n) => {
    if (over < n) await new Promise<void>((resolve) => waiting.push({ n, resolve }));
    await nextTurn();
  };
}

describe('Cutter', () => {
  let a: MediamtxStandIn;
  let b: MediamtxStandIn;
  before(async () => {
    a = await mediamtxStandIn();
    b = await mediamtxStandIn();
  });
  after(async () => {
    await a.close();
    await b.close();
  });
  beforeEach(() => {
    for (const s of [a, b]) {
      s.calls.length = 0;
      s.sessions.clear();
      s.hang = false;
      s.failNext(0, 500);
      s.sessions.add(`rtmpconns/${ID}`);
    }
  });

  it('has one driver per caller with an API', () => {
    assert.deepEqual(Object.keys(DRIVERS).sort(), ['mediamtx', 'nginx-rtmp', 'ome', 'srs']);
  });

  it('retries a 503 with exponential backoff, then cuts', { timeout: 30_000 }, async (t) => {
    const clock = mockClock(t);
    const over = exchanges(t);
    a.failNext(2, 503);
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { retries: 3, backoffMs: 40 });
    const cutting = h.cutter.cut(rtmp());
    await over(1);
    assert.ok(clock.set(40), 'a 40 ms backoff after the first 503');
    clock.tick(40);
    await over(2);
    assert.ok(clock.set(80), 'the second backoff doubles');
    clock.tick(80);
    assert.equal(await cutting, 'cut');
    assert.equal(a.calls.length, 3);
    // the clock moved only through the backoffs: each attempt came exactly when its backoff ended
    assert.deepEqual([a.calls[1].at - a.calls[0].at, a.calls[2].at - a.calls[1].at], [40, 80]);
    assert.deepEqual(h.outcomes, [['mediamtx', 'cut']]);
    assert.equal(h.lines.filter((l) => l.level === 40).length, 0);
  });

  it('gives up after retries+1 attempts of 503 and logs once', { timeout: 30_000 }, async (t) => {
    const clock = mockClock(t);
    const over = exchanges(t);
    a.failNext(10, 503);
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { retries: 2, backoffMs: 5 });
    const cutting = h.cutter.cut(rtmp());
    await over(1);
    assert.ok(clock.set(5), 'the first backoff');
    clock.tick(5);
    await over(2);
    assert.ok(clock.set(10), 'the second backoff');
    clock.tick(10);
    assert.equal(await cutting, 'failed');
    assert.equal(a.calls.length, 3);
    const warns = h.lines.filter((l) => l.level === 40);
    assert.equal(warns.length, 1);
    assert.equal(warns[0].status, 503);
    assert.equal(warns[0].attempts, 3);
    assert.deepEqual(h.outcomes, [['mediamtx', 'failed']]);
  });

  it('bounds a server that never answers, leaving the event loop free', { timeout: 30_000 }, async (t) => {
    const clock = mockClock(t);
    a.hang = true;
    const timeoutMs = 100;
    const retries = 1;
    const backoffMs = 20;
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { timeoutMs, retries, backoffMs });
    let over = false;
    const cutting = h.cutter.cut(rtmp()).finally(() => {
      over = true;
    });
    const first = await Promise.race([cutting, new Promise((resolve) => setImmediate(() => resolve('immediate')))]);
    assert.equal(first, 'immediate');
    // each attempt reaches the server, which holds it until the exchange's bound passes
    await received(a, 1);
    clock.tick(timeoutMs);
    await nextTurn();
    assert.ok(clock.set(backoffMs), 'the first attempt was cut at its bound; the retry waits its backoff');
    clock.tick(backoffMs);
    await received(a, 2);
    clock.tick(timeoutMs - 1);
    await nextTurn();
    assert.equal(over, false, 'the second attempt still waits, a millisecond before its bound');
    clock.tick(1);
    await nextTurn();
    assert.equal(over, true, 'and is cut at it');
    assert.equal(await cutting, 'failed');
    assert.equal(Date.now(), timeoutMs * (retries + 1) + backoffMs, 'two bounded attempts and one backoff, nothing more');
    assert.equal(a.calls.length, 2);
    const warn = h.lines.find((l) => l.level === 40);
    assert.match(String(warn?.err), /no answer within 100 ms/);
  });

  it('resolves even when the outcome hook throws', async () => {
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], {}, () => {
      throw new Error('metrics down');
    });
    assert.equal(await h.cutter.cut(rtmp()), 'cut');
    assert.equal(h.lines.find((l) => l.level === 50)?.msg, 'cut outcome hook failed');
  });

  it('treats a refused connection as worth retrying', { timeout: 30_000 }, async (t) => {
    const clock = mockClock(t);
    const over = exchanges(t);
    const gone = await mediamtxStandIn();
    const url = gone.base;
    await gone.close();
    const h = harness([{ caller: 'mediamtx', url, from: [] }], { retries: 2, backoffMs: 5 });
    const cutting = h.cutter.cut(rtmp());
    await over(1);
    assert.ok(clock.set(5), 'a refused connection is retried after its backoff');
    clock.tick(5);
    await over(2);
    assert.ok(clock.set(10), 'and again');
    clock.tick(10);
    assert.equal(await cutting, 'failed');
    assert.equal(h.lines.find((l) => l.level === 40)?.attempts, 3);
  });

  it('close() ends pending retries at once', { timeout: 30_000 }, async (t) => {
    const clock = mockClock(t);
    const over = exchanges(t);
    a.failNext(100, 503);
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { retries: 10, backoffMs: 5000 });
    let result: string | undefined;
    const cutting = h.cutter.cut(rtmp()).then((r) => (result = r));
    await over(1);
    assert.ok(clock.set(5000), 'the first attempt failed; the retry waits its backoff');
    await h.cutter.close();
    await nextTurn();
    assert.equal(result, 'failed', 'the waiting cut ended with close(), the clock never moving');
    await cutting;
    clock.tick(5000);
    await nextTurn();
    assert.equal(a.calls.length, 1, 'the retry never ran');
    assert.equal(await h.cutter.cut(rtmp()), 'failed');
    assert.equal(a.calls.length, 1);
  });

  it('picks the server whose `from` holds the hook address; the one without `from` takes the rest', async () => {
    const h = harness([
      { caller: 'srs', url: 'http://127.0.0.1:9/', from: [] },
      { caller: 'mediamtx', name: 'a', url: a.base, from: ['10.1.0.0/16', '2001:db8::/32'] },
      { caller: 'mediamtx', name: 'b', url: b.base, from: [] },
    ]);
    assert.equal(await h.cutter.cut(rtmp({ serverAddress: '10.1.2.3' })), 'cut');
    assert.equal(await h.cutter.cut(rtmp({ serverAddress: '::ffff:10.1.9.9' })), 'gone');
    assert.deepEqual([a.calls.length, b.calls.length], [4, 0]); // a cut (1 call), then gone (2 kicks + paths/get)
    assert.equal(await h.cutter.cut(rtmp({ serverAddress: '192.0.2.1' })), 'cut');
    assert.equal(await h.cutter.cut(rtmp()), 'gone');
    assert.deepEqual([a.calls.length, b.calls.length], [4, 4]);
  });

  it('answers no_server when no server claims the session and none or several take the rest', async () => {
    const h = harness([
      { caller: 'mediamtx', url: a.base, from: ['10.1.0.0/16'] },
      { caller: 'mediamtx', url: b.base, from: ['10.2.0.0/16'] },
    ]);
    assert.equal(await h.cutter.cut(rtmp({ serverAddress: '10.3.0.1' })), 'no_server');
    assert.equal(await h.cutter.cut(rtmp({ serverAddress: 'not-an-address' })), 'no_server');
    assert.equal(await h.cutter.cut(target('ome', { app: 'app', stream: 'cam1' })), 'no_server');
    const two = harness([
      { caller: 'mediamtx', url: a.base, from: [] },
      { caller: 'mediamtx', url: b.base, from: [] },
    ]);
    assert.equal(await two.cutter.cut(rtmp({ serverAddress: '10.1.0.1' })), 'no_server');
    assert.deepEqual([a.calls.length, b.calls.length], [0, 0]);
    assert.deepEqual([...h.outcomes, ...two.outcomes], [
      ['mediamtx', 'no_server'],
      ['mediamtx', 'no_server'],
      ['ome', 'no_server'],
      ['mediamtx', 'no_server'],
    ]);
  });
});

describe('Cutter: SRS servers told apart by serverId', () => {
  let one: SrsStandIn;
  let two: SrsStandIn;
  before(async () => {
    one = await srsStandIn();
    two = await srsStandIn();
  });
  after(async () => {
    await one.close();
    await two.close();
  });

  it('sends the cut to the server whose serverId is the hook server_id', async () => {
    one.sessions.add('c1');
    two.sessions.add('c1');
    const h = harness([
      { caller: 'srs', url: one.base, from: ['127.0.0.1'], serverId: 'vid-one' },
      { caller: 'srs', url: two.base, from: ['127.0.0.1'], serverId: 'vid-two' },
    ]);
    const srs = (serverId: string) => target('srs', { server_id: serverId, client_id: 'c1', app: 'live', stream: 'cam1', stream_id: '' }, { serverAddress: '127.0.0.1' });
    assert.equal(await h.cutter.cut(srs('vid-two')), 'cut');
    assert.deepEqual([one.calls.length, two.calls.length, one.sessions.size, two.sessions.size], [0, 1, 1, 0]);
    assert.equal(await h.cutter.cut(srs('vid-three')), 'no_server');
    assert.equal(one.calls.length + two.calls.length, 1);
  });
});
