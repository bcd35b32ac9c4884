// The OvenMediaEngine driver against a stand-in of its REST API: a publisher's stream deleted with
// the access token as Basic credentials; a viewer is not callable.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { omeStandIn, type OmeStandIn } from '../helpers/stand-ins/ome.js';
import { calls, harness, target } from './harness.js';

describe('OME driver', () => {
  let ome: OmeStandIn;
  before(async () => {
    ome = await omeStandIn('ome-access-token');
  });
  after(() => ome.close());
  beforeEach(() => {
    ome.calls.length = 0;
    ome.sessions.clear();
  });
  const server = () => ({ caller: 'ome' as const, url: ome.base, from: [], accessToken: 'ome-access-token', vhost: 'default' });
  const native = { address: '192.0.2.10', port: '51000', url: 'rtmp://ome/app/cam1', app: 'app', stream: 'cam1' };

  it('deletes the publisher stream with Authorization: Basic base64(accessToken)', async () => {
    ome.sessions.add('default/app/cam1');
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('ome', native)), 'cut');
    assert.deepEqual(calls(ome), [
      { method: 'DELETE', path: '/v1/vhosts/default/apps/app/streams/cam1', authorization: `Basic ${Buffer.from('ome-access-token').toString('base64')}` },
    ]);
    assert.equal(ome.sessions.size, 0);
  });

  it('uses the configured vhost', async () => {
    ome.sessions.add('tenant-a/app/cam1');
    const h = harness([{ ...server(), vhost: 'tenant-a' }]);
    assert.equal(await h.cutter.cut(target('ome', native)), 'cut');
    assert.deepEqual(calls(ome).map((c) => c.path), ['/v1/vhosts/tenant-a/apps/app/streams/cam1']);
  });

  it('answers gone on 404', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('ome', native)), 'gone');
    assert.equal(ome.calls.length, 1);
  });

  it('answers unsupported for a viewer without calling OME', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('ome', native, { direction: 'subscribe' })), 'unsupported');
    assert.equal(ome.calls.length, 0);
    assert.deepEqual(h.outcomes, [['ome', 'unsupported']]);
  });

  it('fails at once on a wrong token (401), never logging the token', async () => {
    ome.sessions.add('default/app/cam1');
    const h = harness([{ ...server(), accessToken: 'stale-token' }], { retries: 3 });
    assert.equal(await h.cutter.cut(target('ome', native)), 'failed');
    assert.equal(ome.calls.length, 1);
    const all = h.raw.join('');
    assert.ok(!all.includes('stale-token'));
    assert.ok(!all.includes(Buffer.from('stale-token').toString('base64')));
  });
});
