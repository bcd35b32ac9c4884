// The Cutter around the drivers: which configured server a session goes to, retries with backoff,
// a bound on a server that never answers (without holding the event loop), and shutdown.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { DRIVERS } from '../../src/sessions/drivers/cutter.js';
import { mediamtxStandIn, type MediamtxStandIn } from '../helpers/stand-ins/mediamtx.js';
import { srsStandIn, type SrsStandIn } from '../helpers/stand-ins/srs.js';
import { harness, target } from './harness.js';

const ID = '6a0f4c2e-1b7d-4d3a-9e55-0c1f2a3b4c5d';
const rtmp = (more = {}) => target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtmp' }, more);

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

  it('retries a 503 with exponential backoff, then cuts', async () => {
    a.failNext(2, 503);
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { retries: 3, backoffMs: 40 });
    assert.equal(await h.cutter.cut(rtmp()), 'cut');
    assert.equal(a.calls.length, 3);
    const gaps = [a.calls[1].at - a.calls[0].at, a.calls[2].at - a.calls[1].at];
    assert.ok(gaps[0] >= 35, `first backoff ${gaps[0]}`);
    assert.ok(gaps[1] >= 75, `second backoff doubles: ${gaps[1]}`);
    assert.deepEqual(h.outcomes, [['mediamtx', 'cut']]);
    assert.equal(h.lines.filter((l) => l.level === 40).length, 0);
  });

  it('gives up after retries+1 attempts of 503 and logs once', async () => {
    a.failNext(10, 503);
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { retries: 2, backoffMs: 5 });
    assert.equal(await h.cutter.cut(rtmp()), 'failed');
    assert.equal(a.calls.length, 3);
    const warns = h.lines.filter((l) => l.level === 40);
    assert.equal(warns.length, 1);
    assert.equal(warns[0].status, 503);
    assert.equal(warns[0].attempts, 3);
    assert.deepEqual(h.outcomes, [['mediamtx', 'failed']]);
  });

  it('bounds a server that never answers, leaving the event loop free', async () => {
    a.hang = true;
    const timeoutMs = 100;
    const retries = 1;
    const backoffMs = 20;
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { timeoutMs, retries, backoffMs });
    const started = performance.now();
    const cutting = h.cutter.cut(rtmp());
    const first = await Promise.race([cutting, new Promise((resolve) => setImmediate(() => resolve('immediate')))]);
    assert.equal(first, 'immediate');
    assert.equal(await cutting, 'failed');
    const took = performance.now() - started;
    assert.ok(took >= timeoutMs * (retries + 1), `took ${took}`);
    assert.ok(took < timeoutMs * (retries + 1) + backoffMs + 300, `took ${took}`);
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

  it('treats a refused connection as worth retrying', async () => {
    const gone = await mediamtxStandIn();
    const url = gone.base;
    await gone.close();
    const h = harness([{ caller: 'mediamtx', url, from: [] }], { retries: 2, backoffMs: 5 });
    assert.equal(await h.cutter.cut(rtmp()), 'failed');
    assert.equal(h.lines.find((l) => l.level === 40)?.attempts, 3);
  });

  it('close() ends pending retries at once', async () => {
    a.failNext(100, 503);
    const h = harness([{ caller: 'mediamtx', url: a.base, from: [] }], { retries: 10, backoffMs: 5000 });
    const cutting = h.cutter.cut(rtmp());
    while (a.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    const started = performance.now();
    await h.cutter.close();
    assert.equal(await cutting, 'failed');
    assert.ok(performance.now() - started < 500);
    assert.equal(a.calls.length, 1);
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
