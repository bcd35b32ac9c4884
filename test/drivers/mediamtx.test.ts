// The MediaMTX driver against a stand-in of its control API: which kick it sends for each
// protocol, the TLS list tried after a 404, a publisher found through its path, and credentials.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { mediamtxStandIn, type MediamtxStandIn } from '../helpers/stand-ins/mediamtx.js';
import { basic, calls, harness, target } from './harness.js';

const ID = '6a0f4c2e-1b7d-4d3a-9e55-0c1f2a3b4c5d';
const OTHER = '0d9e8f7a-6b5c-4d3e-8f1a-2b3c4d5e6f70';

describe('MediaMTX driver', () => {
  let mtx: MediamtxStandIn;
  before(async () => {
    mtx = await mediamtxStandIn({ user: 'streamgate', pass: 's3cret-pass' });
  });
  after(() => mtx.close());
  beforeEach(() => {
    mtx.calls.length = 0;
    mtx.sessions.clear();
    mtx.paths.clear();
    mtx.hang = false;
    mtx.failNext(0, 500);
  });
  const server = () => ({ caller: 'mediamtx' as const, url: mtx.base, from: [], username: 'streamgate', password: 's3cret-pass' });

  it('kicks an RTMP publisher with one POST on rtmpconns, Basic credentials', async () => {
    mtx.sessions.add(`rtmpconns/${ID}`);
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtmp' })), 'cut');
    assert.deepEqual(calls(mtx), [{ method: 'POST', path: `/v3/rtmpconns/kick/${ID}`, authorization: basic('streamgate:s3cret-pass') }]);
    assert.equal(mtx.sessions.size, 0);
    assert.deepEqual(h.outcomes, [['mediamtx', 'cut']]);
  });

  it('maps each protocol to its list', async () => {
    const cases: Array<[string, string]> = [
      ['rtsp', 'rtspsessions'],
      ['hls', 'hlssessions'],
      ['webrtc', 'webrtcsessions'],
      ['srt', 'srtconns'],
      ['moq', 'moqsessions'],
    ];
    const h = harness([server()]);
    for (const [protocol, list] of cases) {
      mtx.calls.length = 0;
      mtx.sessions.add(`${list}/${ID}`);
      assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol }, { direction: 'subscribe' })), 'cut', protocol);
      assert.deepEqual(calls(mtx).map((c) => c.path), [`/v3/${list}/kick/${ID}`], protocol);
    }
  });

  it('tries the TLS list after a 404 on the plain one (RTMPS reader)', async () => {
    mtx.sessions.add(`rtmpsconns/${ID}`);
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtmp' }, { direction: 'subscribe' })), 'cut');
    assert.deepEqual(calls(mtx).map((c) => `${c.method} ${c.path}`), [`POST /v3/rtmpconns/kick/${ID}`, `POST /v3/rtmpsconns/kick/${ID}`]);
  });

  it('answers gone when both lists answer 404 (a reader)', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtsp' }, { direction: 'subscribe' })), 'gone');
    assert.deepEqual(calls(mtx).map((c) => `${c.method} ${c.path}`), [`POST /v3/rtspsessions/kick/${ID}`, `POST /v3/rtspssessions/kick/${ID}`]);
    assert.deepEqual(h.outcomes, [['mediamtx', 'gone']]);
  });

  it('finds a publisher of unknown protocol through paths/get and kicks its source type', async () => {
    mtx.sessions.add(`webrtcsessions/${ID}`);
    mtx.paths.set('live/cam1', { type: 'webRTCSession', id: ID });
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'unknown' })), 'cut');
    assert.deepEqual(calls(mtx).map((c) => `${c.method} ${c.path}`), ['GET /v3/paths/get/live/cam1', `POST /v3/webrtcsessions/kick/${ID}`]);
    assert.equal(mtx.paths.get('live/cam1'), null);
  });

  it('does not kick the path source when it is another publisher (reconnected): gone', async () => {
    mtx.sessions.add(`rtspsessions/${OTHER}`);
    mtx.paths.set('live/cam1', { type: 'rtspSession', id: OTHER });
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtsp' })), 'gone');
    assert.deepEqual(calls(mtx).map((c) => `${c.method} ${c.path}`), [`POST /v3/rtspsessions/kick/${ID}`, `POST /v3/rtspssessions/kick/${ID}`, 'GET /v3/paths/get/live/cam1']);
    assert.ok(mtx.sessions.has(`rtspsessions/${OTHER}`));
  });

  it('answers gone for a publisher whose path no longer exists', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: '' })), 'gone');
    assert.deepEqual(calls(mtx).map((c) => `${c.method} ${c.path}`), ['GET /v3/paths/get/live/cam1']);
  });

  it('sends the bearer when one is configured', async () => {
    const bearerMtx = await mediamtxStandIn({ bearer: 'jwt-value-123' });
    try {
      bearerMtx.sessions.add(`srtconns/${ID}`);
      const h = harness([{ caller: 'mediamtx', url: bearerMtx.base, from: [], bearer: 'jwt-value-123' }]);
      assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'srt' })), 'cut');
      assert.deepEqual(calls(bearerMtx), [{ method: 'POST', path: `/v3/srtconns/kick/${ID}`, authorization: 'Bearer jwt-value-123' }]);
    } finally {
      await bearerMtx.close();
    }
  });

  it('fails at once on 401 (no retries) and logs once without the credentials', async () => {
    mtx.sessions.add(`rtmpconns/${ID}`);
    const h = harness([{ ...server(), name: 'edge-1', password: 'wrong-pass' }], { retries: 3 });
    assert.equal(await h.cutter.cut(target('mediamtx', { id: ID, path: 'live/cam1', protocol: 'rtmp' })), 'failed');
    assert.equal(mtx.calls.length, 1);
    assert.deepEqual(h.outcomes, [['mediamtx', 'failed']]);
    const warns = h.lines.filter((l) => l.level === 40);
    assert.equal(warns.length, 1);
    assert.equal(warns[0].caller, 'mediamtx');
    assert.equal(warns[0].server, 'edge-1');
    assert.equal(warns[0].status, 401);
    assert.equal(warns[0].attempts, 1);
    const all = h.raw.join('');
    for (const secret of ['wrong-pass', Buffer.from('streamgate:wrong-pass').toString('base64')]) assert.ok(!all.includes(secret), secret);
    assert.ok(mtx.sessions.has(`rtmpconns/${ID}`));
  });

  it('stand-in: a GET on a kick path is a 404, as on MediaMTX', async () => {
    mtx.sessions.add(`rtmpconns/${ID}`);
    const r = await fetch(`${mtx.base}/v3/rtmpconns/kick/${ID}`, { headers: { authorization: basic('streamgate:s3cret-pass') } });
    assert.equal(r.status, 404);
    assert.equal(await r.text(), '404 page not found');
    assert.ok(mtx.sessions.has(`rtmpconns/${ID}`));
  });
});
