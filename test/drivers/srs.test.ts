// The SRS driver against a stand-in of its HTTP API: DELETE of the client, a publisher found
// through its stream, and SRS's habit of answering errors as HTTP 200 with a JSON code.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { srsStandIn, type SrsStandIn } from '../helpers/stand-ins/srs.js';
import { basic, calls, harness, target } from './harness.js';

describe('SRS driver', () => {
  let srs: SrsStandIn;
  before(async () => {
    srs = await srsStandIn({ user: 'admin', pass: 'api-pass' });
  });
  after(() => srs.close());
  beforeEach(() => {
    srs.calls.length = 0;
    srs.sessions.clear();
    srs.connectionless.clear();
    srs.streams.clear();
  });
  const server = () => ({ caller: 'srs' as const, url: `${srs.base}/`, from: [], username: 'admin', password: 'api-pass' });
  const native = (more: Record<string, string> = {}) => ({ server_id: 'vid-1', client_id: '3k9x1a', app: 'live', stream: 'cam1', stream_id: 'st-7', ...more });

  it('deletes the client by its client_id with Basic credentials', async () => {
    srs.sessions.add('3k9x1a');
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('srs', native())), 'cut');
    assert.deepEqual(calls(srs), [{ method: 'DELETE', path: '/api/v1/clients/3k9x1a', authorization: basic('admin:api-pass') }]);
    assert.equal(srs.sessions.size, 0);
  });

  it('answers gone on code 2049 (HTTP 200: client not found)', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('srs', native())), 'gone');
    assert.equal(srs.calls.length, 1);
    assert.deepEqual(h.outcomes, [['srs', 'gone']]);
  });

  it('finds a publisher without client_id through streams/{stream_id} → publish.cid', async () => {
    srs.sessions.add('pub-42');
    srs.streams.set('st-7', { app: 'live', name: 'cam1', publisher: 'pub-42' });
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('srs', native({ client_id: '' }))), 'cut');
    assert.deepEqual(calls(srs).map((c) => `${c.method} ${c.path}`), ['GET /api/v1/streams/st-7', 'DELETE /api/v1/clients/pub-42']);
  });

  it('answers gone when the stream is unknown (code 2048) or has no publisher', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('srs', native({ client_id: '' }))), 'gone');
    srs.streams.set('st-7', { app: 'live', name: 'cam1' });
    assert.equal(await h.cutter.cut(target('srs', native({ client_id: '' }))), 'gone');
    assert.deepEqual(calls(srs).map((c) => `${c.method} ${c.path}`), ['GET /api/v1/streams/st-7', 'GET /api/v1/streams/st-7']);
  });

  it('answers unsupported for a client without a connection (code 400: an HLS viewer)', async () => {
    srs.connectionless.add('hls-1');
    const h = harness([server()], { retries: 2 });
    assert.equal(await h.cutter.cut(target('srs', native({ client_id: 'hls-1' }), { direction: 'subscribe' })), 'unsupported');
    assert.equal(srs.calls.length, 1);
  });

  it('sends the bearer when one is configured', async () => {
    const bearerSrs = await srsStandIn({ bearer: 'srs-token-9' });
    try {
      bearerSrs.sessions.add('3k9x1a');
      const h = harness([{ caller: 'srs', url: bearerSrs.base, from: [], bearer: 'srs-token-9' }]);
      assert.equal(await h.cutter.cut(target('srs', native())), 'cut');
      assert.deepEqual(calls(bearerSrs), [{ method: 'DELETE', path: '/api/v1/clients/3k9x1a', authorization: 'Bearer srs-token-9' }]);
    } finally {
      await bearerSrs.close();
    }
  });

  it('fails at once on 401 without retrying', async () => {
    srs.sessions.add('3k9x1a');
    const h = harness([{ ...server(), password: 'nope' }], { retries: 4 });
    assert.equal(await h.cutter.cut(target('srs', native())), 'failed');
    assert.equal(srs.calls.length, 1);
    assert.ok(srs.sessions.has('3k9x1a'));
    const warn = h.lines.find((l) => l.level === 40);
    assert.equal(warn?.status, 401);
    assert.equal(warn?.server, new URL(srs.base).host);
  });
});
