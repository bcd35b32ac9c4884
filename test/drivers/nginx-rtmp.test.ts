// The nginx-rtmp driver against a stand-in of the control module: a drop by app, name and client
// id whose text answer is the count dropped.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { nginxRtmpControlStandIn, type NginxRtmpControlStandIn } from '../helpers/stand-ins/nginx-rtmp-control.js';
import { harness, target } from './harness.js';

describe('nginx-rtmp driver', () => {
  let ctl: NginxRtmpControlStandIn;
  before(async () => {
    ctl = await nginxRtmpControlStandIn('/control');
  });
  after(() => ctl.close());
  beforeEach(() => {
    ctl.calls.length = 0;
    ctl.sessions.length = 0;
  });
  const server = () => ({ caller: 'nginx-rtmp' as const, url: ctl.base, from: [] });

  it('drops the publisher by app, name and clientid: GET /control/drop/publisher', async () => {
    ctl.sessions.push({ app: 'live', name: 'cam1', clientid: '7', publishing: true }, { app: 'live', name: 'cam1', clientid: '9', publishing: false });
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('nginx-rtmp', { server: 'edge', clientid: '7', app: 'live', name: 'cam1' })), 'cut');
    assert.deepEqual(
      ctl.calls.map((c) => ({ method: c.method, path: c.path, query: c.query, authorization: c.headers.authorization })),
      [{ method: 'GET', path: '/control/drop/publisher', query: { app: 'live', name: 'cam1', clientid: '7' }, authorization: undefined }],
    );
    assert.deepEqual(ctl.sessions, [{ app: 'live', name: 'cam1', clientid: '9', publishing: false }]);
  });

  it('drops a subscriber through /drop/subscriber', async () => {
    ctl.sessions.push({ app: 'live', name: 'cam1', clientid: '9', publishing: false });
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('nginx-rtmp', { server: 'edge', clientid: '9', app: 'live', name: 'cam1' }, { direction: 'subscribe' })), 'cut');
    assert.deepEqual(ctl.calls.map((c) => c.path), ['/control/drop/subscriber']);
    assert.equal(ctl.sessions.length, 0);
  });

  it('answers gone when the count is 0', async () => {
    const h = harness([server()]);
    assert.equal(await h.cutter.cut(target('nginx-rtmp', { server: 'edge', clientid: '7', app: 'live', name: 'cam1' })), 'gone');
    assert.equal(ctl.calls.length, 1);
    assert.deepEqual(h.outcomes, [['nginx-rtmp', 'gone']]);
  });
});
