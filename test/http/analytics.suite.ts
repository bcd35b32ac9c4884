// Bandwidth per tracking id: usage in from the callers and /hooks/usage, totals out of
// /api/analytics/tracking/total, on every store.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';

export function analyticsSuite(factory: StoreFactory): void {
  describe(`analytics: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    let other: { id: string; secret: string };
    before(async () => {
      await factory.setup();
      t = await testApp(await factory.make());
      acct = await t.account();
      other = await t.account('other');
    });
    after(() => factory.teardown());
    const usage = (body: object) => request(t.app).post('/hooks/usage').send(body);
    const total = (q: string, secret = acct.secret) => request(t.app).get(`/api/analytics/tracking/total?${q}`).set('authorization', `Bearer ${secret}`);
    const sub = async (trackingId: string, secret = acct.secret) =>
      (await request(t.app).post('/api/subscribe_token').set('authorization', `Bearer ${secret}`).send({ label: 's', streams: [{ streamName: '.*', isRegex: true }], tracking: { trackingId } })).body.data as { id: number; token: string };

    it('sums a known pattern of reports exactly, per stream, over UTC days with stopDate exclusive', async () => {
      const reports: object[] = [
        { trackingId: 'a', accountId: acct.id, streamName: 'cam1', bytesOut: 100, bytesIn: 1, at: '2026-01-31T23:59:59.999Z', reportId: 'r1' },
        { trackingId: 'a', accountId: acct.id, streamName: 'cam1', bytesOut: 100, bytesIn: 1, at: '2026-01-31T23:59:59.999Z', reportId: 'r1' }, // duplicate
        { trackingId: 'a', accountId: acct.id, streamName: 'cam1', bytesOut: 20, at: '2026-02-01T00:00:00.000Z' },
        { trackingId: 'a', accountId: acct.id, streamName: 'cam2', bytesOut: 3, at: '2026-02-01T12:00:00Z' },
        { trackingId: 'a', accountId: acct.id, streamName: 'cam1', bytesOut: 4000, at: '2026-02-10T08:00:00Z' },
        { trackingId: 'b', accountId: acct.id, streamName: 'cam1', bytesOut: 7, bytesIn: 70, at: Date.parse('2026-02-01T05:00:00Z') },
        { trackingId: 'a', accountId: other.id, streamName: 'cam1', bytesOut: 99999, at: '2026-02-01T05:00:00Z' }, // another account
      ];
      const answers = [];
      for (const r of reports) answers.push((await usage(r)).body);
      assert.deepEqual(answers[1], { counted: false, duplicate: true });
      assert.deepEqual(answers[0], { counted: true });

      const jan31toFeb1 = await total('trackingIds=a&trackingIds=b&startDate=2026-01-31&stopDate=2026-02-01');
      assert.deepEqual(jan31toFeb1.body, { status: 'success', data: { a: [{ streamName: 'cam1', bytesOut: 100, bytesIn: 1 }], b: [] } });
      const feb = await total('trackingIds=a,b,nobody&startDate=2026-02-01&stopDate=2026-03-01');
      assert.deepEqual(feb.body.data, {
        a: [
          { streamName: 'cam1', bytesOut: 4020, bytesIn: 0 },
          { streamName: 'cam2', bytesOut: 3, bytesIn: 0 },
        ],
        b: [{ streamName: 'cam1', bytesOut: 7, bytesIn: 70 }],
        nobody: [],
      });
      const all = await total('trackingIds=a&startDate=2026-01-01&stopDate=2026-12-31T00:00:00Z');
      assert.deepEqual(all.body.data.a, [
        { streamName: 'cam1', bytesOut: 4120, bytesIn: 1 },
        { streamName: 'cam2', bytesOut: 3, bytesIn: 0 },
      ]);
      const boundary = await total('trackingIds=a&startDate=2026-02-02&stopDate=2026-02-10');
      assert.deepEqual(boundary.body.data, { a: [] }, 'stopDate 2026-02-10 excludes that day');
      const empty = await total('trackingIds=a&startDate=2025-01-01&stopDate=2025-02-01');
      assert.deepEqual(empty.body.data, { a: [] });
      const theirs = await total('trackingIds=a&startDate=2026-02-01&stopDate=2026-02-02', other.secret);
      assert.deepEqual(theirs.body.data, { a: [{ streamName: 'cam1', bytesOut: 99999, bytesIn: 0 }] });
    });

    it('attributes reports by session (MediaMTX admission) and by token id to the token\'s tracking id', async () => {
      const s = await sub('viewers');
      const admitted = await request(t.app).post('/hooks/mediamtx/auth').send({ ip: '203.0.113.7', user: '', password: '', token: s.token, action: 'read', path: 'cam7', protocol: 'rtsp', id: 'sess-1', query: '' });
      assert.equal(admitted.status, 200);
      await t.services.lifecycle.idle();
      assert.deepEqual((await usage({ sessionId: 'sess-1', caller: 'mediamtx', bytesOut: 500 })).body, { counted: true });
      assert.deepEqual((await usage({ tokenId: s.id, streamName: 'cam7', bytesOut: 25, bytesIn: 5 })).body, { counted: true });
      const r = await total('trackingIds=viewers&startDate=2020-01-01&stopDate=2020-12-31');
      assert.deepEqual(r.body.data, { viewers: [] });
      const today = new Date().toISOString().slice(0, 10);
      const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
      const now = await total(`trackingIds=viewers&startDate=${today}&stopDate=${tomorrow}`);
      assert.deepEqual(now.body.data, { viewers: [{ streamName: 'cam7', bytesOut: 525, bytesIn: 5 }] });
      const unknown = await usage({ sessionId: 'nope', bytesOut: 1 });
      assert.deepEqual([unknown.status, unknown.body.counted], [404, false]);
    });

    it('counts SRS on_close byte totals after on_stop ended the session', async () => {
      const s = await sub('srs-fans');
      const base = { server_id: 'srv1', client_id: 'c9', ip: '203.0.113.9', vhost: '__defaultVhost__', app: 'live', stream: 'show', tcUrl: 'rtmp://h/live' };
      assert.equal((await request(t.app).post('/hooks/srs').send({ ...base, action: 'on_play', param: `?token=${s.token}` })).text, '{"code":0}');
      await request(t.app).post('/hooks/srs').send({ ...base, action: 'on_stop', param: `?token=${s.token}` });
      await request(t.app).post('/hooks/srs').send({ ...base, action: 'on_close', send_bytes: 123456, recv_bytes: 321 });
      await t.services.lifecycle.idle();
      const today = new Date().toISOString().slice(0, 10);
      const r = await total(`trackingIds=srs-fans&startDate=${today}&stopDate=${new Date(Date.now() + 86400000).toISOString().slice(0, 10)}`);
      assert.deepEqual(r.body.data, { 'srs-fans': [{ streamName: 'show', bytesOut: 123456, bytesIn: 321 }] });
    });

    it('sums 1,000 concurrent usage reports for one tracking id exactly', async () => {
      const n = 1000;
      for (let i = 0; i < n; i += 100) {
        const batch = await Promise.all(
          Array.from({ length: 100 }, (_, j) => usage({ trackingId: 'burst', accountId: acct.id, streamName: 'cam1', bytesOut: i + j + 1, bytesIn: 2, at: '2026-05-05T10:00:00Z' })),
        );
        assert.ok(batch.every((r) => r.status === 200));
      }
      const r = await total('trackingIds=burst&startDate=2026-05-05&stopDate=2026-05-06');
      assert.deepEqual(r.body.data, { burst: [{ streamName: 'cam1', bytesOut: (n * (n + 1)) / 2, bytesIn: 2 * n }] });
    });

    it('refuses bad queries and bad reports with 400 naming the parameter', async () => {
      const cases: Array<[string, string]> = [
        ['trackingIds=a&startDate=2026-02-30&stopDate=2026-03-01', 'startDate'],
        ['trackingIds=a&startDate=yesterday&stopDate=2026-03-01', 'startDate'],
        ['trackingIds=a&startDate=2026-03-01&stopDate=2026-03-01', 'stopDate'],
        ['trackingIds=a&startDate=2026-03-02&stopDate=2026-03-01', 'stopDate'],
        ['trackingIds=a&startDate=2025-01-01&stopDate=2026-01-03', 'stopDate'],
        [`${Array.from({ length: 11 }, (_, i) => `trackingIds=t${i}`).join('&')}&startDate=2026-01-01&stopDate=2026-01-02`, 'trackingIds'],
        ['startDate=2026-01-01&stopDate=2026-01-02', 'trackingIds'],
      ];
      for (const [q, param] of cases) {
        const r = await total(q);
        assert.equal(r.status, 400, q);
        assert.deepEqual(Object.keys(r.body.data.errors), [param], q);
      }
      const bad: Array<[object, string[]]> = [
        [{ trackingId: 'a', accountId: acct.id, streamName: 'x', bytesOut: -1 }, ['bytesOut']],
        [{ trackingId: 'a', streamName: 'x', bytesOut: 1 }, ['accountId']],
        [{ streamName: 'x', bytesOut: 1 }, ['sessionId']],
        [{ trackingId: 'a', accountId: acct.id, streamName: 'x', bytesOut: 1.5, bytesIn: -2 }, ['bytesIn', 'bytesOut']],
        [{ trackingId: 'a', accountId: acct.id, streamName: 'x', bytesOut: 1, at: 9000000000000000 }, ['at']],
        [{ trackingId: 'a', accountId: acct.id, streamName: 'x', bytesOut: 1, at: '+275760-09-13T00:00:00.001Z' }, ['at']],
      ];
      for (const [body, fields] of bad) {
        const r = await usage(body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.deepEqual(Object.keys(r.body.errors).sort(), fields);
      }
      const late = await usage({ trackingId: 'a', accountId: acct.id, streamName: 'x', bytesOut: 1, at: 9000000000000000 });
      assert.deepEqual(late.body.errors, { at: ['at most 8640000000000000 (the last instant a date can name)'] });
      const last = await usage({ trackingId: 'a', accountId: acct.id, streamName: 'x', bytesOut: 1, at: 8640000000000000 });
      assert.deepEqual([last.status, last.body], [200, { counted: true }], 'the last instant a date can name is a day');
    });
  });
}
