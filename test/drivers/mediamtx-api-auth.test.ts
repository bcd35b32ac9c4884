// Cutting a MediaMTX session end to end, with the stand-in authenticating Streamgate's Control API
// call through Streamgate's own /hooks/mediamtx/auth (action "api"), as MediaMTX does with
// `authMethod: http`: the kick passes only when hooks.mediamtx.allowApiFrom lists Streamgate.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import request from 'supertest';
import { mediamtxStandIn, type MediamtxStandIn } from '../helpers/stand-ins/mediamtx.js';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import { until } from '../helpers/until.js';

const ID = '3c2b1a09-8f7e-4d6c-9b5a-0a1b2c3d4e5f';

describe('MediaMTX: a cut through the Control API, authenticated by Streamgate itself', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c();
  });

  async function deployment(allowApiFrom: string[], driverTimeoutMs = 1000) {
    let sg: Listening | undefined;
    const mtx: MediamtxStandIn = await mediamtxStandIn({ authHTTPAddress: () => `${sg!.base}/hooks/mediamtx/auth` });
    closing.push(() => mtx.close());
    const f = sqliteFactory();
    await f.setup();
    closing.push(() => f.teardown());
    const t = await testApp(await f.make(), {
      hooks: { mediamtx: { allowApiFrom, pathPrefix: 'live/' } },
      sessions: { servers: [{ caller: 'mediamtx', url: mtx.base }], driverTimeoutMs, driverRetries: 0 },
    });
    sg = await listen(t.app);
    closing.push(() => sg!.close());
    const acct = await t.account();
    const api = (r: request.Test) => r.set('authorization', `Bearer ${acct.secret}`);
    const sub = (await api(request(t.app).post('/api/subscribe_token')).send({ label: 'viewer', streams: [{ streamName: 'cam1' }] })).body.data;
    const admitted = await request(t.app)
      .post('/hooks/mediamtx/auth')
      .send({ ip: '203.0.113.9', user: '', password: '', token: sub.token, action: 'read', path: 'live/cam1', protocol: 'rtmp', id: ID, query: '' });
    assert.equal(admitted.status, 200);
    mtx.sessions.add(`rtmpconns/${ID}`);
    await t.services.lifecycle.idle();
    const listed = (await api(request(t.app).get('/api/sessions')).query({ tokenId: sub.id })).body.data;
    assert.equal(listed.pagination.totalItems, 1);
    return { t, mtx, api, session: listed.data[0] };
  }

  it('with Streamgate in allowApiFrom, DELETE /api/sessions/{id} kicks the reader on MediaMTX', async () => {
    const { t, mtx, api, session } = await deployment(['127.0.0.1']);
    const cut = await api(request(t.app).delete(`/api/sessions/${session.id}`));
    assert.deepEqual([cut.status, cut.body.data.endedReason, cut.body.data.callerSessionId], [200, 'stopped', ID]);
    await until(() => !mtx.sessions.has(`rtmpconns/${ID}`), 5000, 'the kick');
    assert.deepEqual(
      mtx.calls.map((c) => `${c.method} ${c.path}`),
      [`POST /v3/rtmpconns/kick/${ID}`],
    );
    const metrics = (await request(t.app).get('/metrics')).text;
    assert.match(metrics, /streamgate_session_cuts_total\{caller="mediamtx",outcome="cut"\} 1/);
  });

  it('a MediaMTX that hangs delays no decision: admissions are answered while the cut is still waiting on it', async () => {
    // the call waits up to 30 s: far longer than the admissions below take
    const { t, mtx, api, session } = await deployment(['127.0.0.1'], 30_000);
    mtx.hang = true;
    const cut = await api(request(t.app).delete(`/api/sessions/${session.id}`));
    assert.equal(cut.status, 200, 'the registry ends the session without waiting for the server');
    await until(() => mtx.calls.length > 0, 5000, 'the kick to reach the hanging server');
    const sub = (await api(request(t.app).post('/api/subscribe_token')).send({ label: 'more', streams: [{ streamName: 'cam2' }] })).body.data;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(t.app)
          .post('/hooks/mediamtx/auth')
          .send({ ip: '203.0.113.10', user: '', password: '', token: sub.token, action: 'read', path: 'live/cam2', protocol: 'hls', id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, query: '' }),
      ),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    const metrics = (await request(t.app).get('/metrics')).text;
    assert.doesNotMatch(metrics, /streamgate_session_cuts_total\{caller="mediamtx"/, 'the cut is still pending: no outcome yet');
  });

  it('without it, MediaMTX refuses the API call (401): the cut is counted failed, the session still ended in the registry', async () => {
    const { t, mtx, api, session } = await deployment([]);
    const cut = await api(request(t.app).delete(`/api/sessions/${session.id}`));
    assert.equal(cut.status, 200);
    await until(
      async () => /streamgate_session_cuts_total\{caller="mediamtx",outcome="failed"\} 1/.test((await request(t.app).get('/metrics')).text),
      5000,
      'the failed cut',
    );
    assert.equal(mtx.sessions.has(`rtmpconns/${ID}`), true, 'MediaMTX kept the reader');
    assert.equal((await api(request(t.app).get(`/api/sessions/${session.id}`))).body.data.endedReason, 'stopped');
  });
});
