// Bandwidth of the account, per tracking id and per stream: usage in from the callers and
// /hooks/usage, totals and series out of /api/analytics/{account,tracking,streams,tracking/streams}/
// {total,series}, per day, month and hour, on every store.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { trackingRow as row, streamSeries, streamTotal, streamTrackingRow as trow } from '../helpers/analytics.js';

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
      assert.deepEqual(jan31toFeb1.body, { status: 'success', data: { a: [row('cam1', 100, 1)], b: [] } });
      const feb = await total('trackingIds=a,b,nobody&startDate=2026-02-01&stopDate=2026-03-01');
      assert.deepEqual(feb.body.data, {
        a: [
          row('cam1', 4020, 0),
          row('cam2', 3, 0),
        ],
        b: [row('cam1', 7, 70)],
        nobody: [],
      });
      const all = await total('trackingIds=a&startDate=2026-01-01&stopDate=2026-12-31T00:00:00Z');
      assert.deepEqual(all.body.data.a, [
        row('cam1', 4120, 1),
        row('cam2', 3, 0),
      ]);
      const boundary = await total('trackingIds=a&startDate=2026-02-02&stopDate=2026-02-10');
      assert.deepEqual(boundary.body.data, { a: [] }, 'stopDate 2026-02-10 excludes that day');
      const empty = await total('trackingIds=a&startDate=2025-01-01&stopDate=2025-02-01');
      assert.deepEqual(empty.body.data, { a: [] });
      const theirs = await total('trackingIds=a&startDate=2026-02-01&stopDate=2026-02-02', other.secret);
      assert.deepEqual(theirs.body.data, { a: [row('cam1', 99999, 0)] });
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
      assert.deepEqual(now.body.data, { viewers: [row('cam7', 525, 5)] });
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
      assert.deepEqual(r.body.data, { 'srs-fans': [row('show', 123456, 321)] });
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
      assert.deepEqual(r.body.data, { burst: [row('cam1', (n * (n + 1)) / 2, 2 * n)] });
    });

    describe('series and streams', () => {
      const get = (path: string, q: string, secret = acct.secret) => request(t.app).get(`/api/analytics/${path}?${q}`).set('authorization', `Bearer ${secret}`);
      const day = (d: string) => `${d}T00:00:00Z`;
      before(async () => {
        const plain = (await request(t.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'untracked', streams: [{ streamName: '.*', isRegex: true }] })).body.data as { id: number };
        const reports: object[] = [
          { trackingId: 'north', accountId: acct.id, streamName: 'arena', bytesOut: 100, bytesIn: 1, at: '2026-01-30T10:00:00Z' },
          { trackingId: 'north', accountId: acct.id, streamName: 'arena', bytesOut: 200, bytesIn: 2, at: '2026-01-31T23:59:59.999Z' },
          { trackingId: 'north', accountId: acct.id, streamName: 'lobby', bytesOut: 30, at: '2026-01-31T00:00:00Z' },
          { trackingId: 'north', accountId: acct.id, streamName: 'arena', bytesOut: 4000, bytesIn: 40, at: '2026-02-01T00:00:00Z' },
          { trackingId: 'north', accountId: acct.id, streamName: 'arena', bytesOut: 50000, at: '2026-03-15T12:00:00Z' },
          { trackingId: 'south', accountId: acct.id, streamName: 'arena', bytesOut: 7, bytesIn: 70, at: '2026-01-31T08:00:00Z' },
          { tokenId: plain.id, streamName: 'arena', bytesOut: 600000, bytesIn: 6, at: '2026-01-31T09:00:00Z' }, // untracked
          { tokenId: plain.id, streamName: 'lobby', bytesOut: 8, at: '2026-02-02T00:00:00Z' }, // untracked
          { trackingId: 'north', accountId: other.id, streamName: 'arena', bytesOut: 99999999, at: '2026-01-31T05:00:00Z' }, // another account
        ];
        for (const r of reports) assert.deepEqual((await usage(r)).body, { counted: true }, JSON.stringify(r));
      });

      it('tracking/series by day: every day of the range in order, [] for a day or a tracking id without usage', async () => {
        const r = await get('tracking/series', 'resolution=Day&trackingIds=north&trackingIds=south,nobody&startDate=2026-01-30&stopDate=2026-02-02');
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, {
          status: 'success',
          data: {
            north: {
              [day('2026-01-30')]: [row('arena', 100, 1)],
              [day('2026-01-31')]: [row('arena', 200, 2), row('lobby', 30, 0)],
              [day('2026-02-01')]: [row('arena', 4000, 40)],
            },
            south: { [day('2026-01-30')]: [], [day('2026-01-31')]: [row('arena', 7, 70)], [day('2026-02-01')]: [] },
            nobody: { [day('2026-01-30')]: [], [day('2026-01-31')]: [], [day('2026-02-01')]: [] },
          },
        });
        assert.deepEqual(Object.keys(r.body.data), ['north', 'south', 'nobody'], 'tracking ids in the order asked');
        assert.deepEqual(Object.keys(r.body.data.north), [day('2026-01-30'), day('2026-01-31'), day('2026-02-01')], 'days oldest first');
        const theirs = await get('tracking/series', 'resolution=Day&trackingIds=north&startDate=2026-01-31&stopDate=2026-02-01', other.secret);
        assert.deepEqual(theirs.body.data, { north: { [day('2026-01-31')]: [row('arena', 99999999, 0)] } });
      });

      it('tracking/series by month: a key per month (its first day) summing only the days of the range in it', async () => {
        const r = await get('tracking/series', 'resolution=Month&trackingIds=north&startDate=2026-01-15&stopDate=2026-04-01');
        assert.deepEqual(r.body.data, {
          north: {
            [day('2026-01-01')]: [row('arena', 300, 3), row('lobby', 30, 0)],
            [day('2026-02-01')]: [row('arena', 4000, 40)],
            [day('2026-03-01')]: [row('arena', 50000, 0)],
          },
        });
        assert.deepEqual(Object.keys(r.body.data.north), [day('2026-01-01'), day('2026-02-01'), day('2026-03-01')]);
        const part = await get('tracking/series', 'resolution=Month&trackingIds=north&startDate=2026-01-31&stopDate=2026-02-01');
        assert.deepEqual(part.body.data, { north: { [day('2026-01-01')]: [row('arena', 200, 2), row('lobby', 30, 0)] } }, 'January 30 is outside the range');
        const leapYear = await get('tracking/series', 'resolution=Month&trackingIds=nobody&startDate=2024-01-01&stopDate=2025-01-01');
        assert.equal(leapYear.status, 200, 'a whole leap year is 366 days');
        assert.deepEqual(leapYear.body.data, { nobody: Object.fromEntries(Array.from({ length: 12 }, (_, m) => [day(`2024-${String(m + 1).padStart(2, '0')}-01`), []])) });
        assert.deepEqual(Object.keys(leapYear.body.data.nobody)[11], day('2024-12-01'));
      });

      it('tracking/total rows carry the hosted classes, restream and geoCascade at zero', async () => {
        const r = await get('tracking/total', 'trackingIds=north&startDate=2026-01-01&stopDate=2026-04-01');
        assert.deepEqual(r.body, { status: 'success', data: { north: [row('arena', 54300, 43), row('lobby', 30, 0)] } });
      });

      it('streams/total sums every tracking id and the untracked usage of each stream; zeros for a stream without usage', async () => {
        const r = await get('streams/total', 'streamNames=arena&streamNames=lobby,empty&startDate=2026-01-01&stopDate=2026-04-01');
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, {
          status: 'success',
          data: {
            arena: streamTotal(100 + 200 + 4000 + 50000 + 7 + 600000, 1 + 2 + 40 + 70 + 6),
            lobby: streamTotal(38, 0),
            empty: streamTotal(0, 0),
          },
        });
        assert.deepEqual(Object.keys(r.body.data), ['arena', 'lobby', 'empty']);
        const jan31 = await get('streams/total', 'streamNames=arena&startDate=2026-01-31&stopDate=2026-02-01');
        assert.deepEqual(jan31.body.data, { arena: streamTotal(200 + 7 + 600000, 2 + 70 + 6) });
        const theirs = await get('streams/total', 'streamNames=arena,lobby&startDate=2026-01-01&stopDate=2026-04-01', other.secret);
        assert.deepEqual(theirs.body.data, { arena: streamTotal(99999999, 0), lobby: streamTotal(0, 0) });
      });

      it('streams/series by day and by month: every period in order, zeros without usage', async () => {
        const d = await get('streams/series', 'resolution=Day&streamNames=arena,lobby&startDate=2026-01-30&stopDate=2026-02-03');
        assert.equal(d.status, 200);
        const arena = d.body.data.arena as Record<string, object>;
        assert.deepEqual(d.body, {
          status: 'success',
          data: {
            arena: streamSeries([
              [day('2026-01-30'), 100, 1],
              [day('2026-01-31'), 600207, 78],
              [day('2026-02-01'), 4000, 40],
              [day('2026-02-02'), 0, 0],
            ]),
            lobby: streamSeries([
              [day('2026-01-30'), 0, 0],
              [day('2026-01-31'), 30, 0],
              [day('2026-02-01'), 0, 0],
              [day('2026-02-02'), 8, 0],
            ]),
          },
        });
        for (const part of ['bandwidth', 'standardStream', 'restream', 'geoCascade']) {
          assert.deepEqual(Object.keys(arena[part]), ['2026-01-30', '2026-01-31', '2026-02-01', '2026-02-02'].map(day), part);
        }
        const m = await get('streams/series', 'resolution=Month&streamNames=arena&startDate=2026-01-01&stopDate=2026-04-01');
        assert.deepEqual(m.body.data, {
          arena: streamSeries([
            [day('2026-01-01'), 600307, 79],
            [day('2026-02-01'), 4000, 40],
            [day('2026-03-01'), 50000, 0],
          ]),
        });
        // date-times: the start's whole day, and a stop inside a day counts that day
        const dt = await get('streams/series', 'resolution=Day&streamNames=arena&startDate=2026-01-31T12:00:00Z&stopDate=2026-02-01T00:00:01Z');
        assert.deepEqual(dt.body.data, { arena: streamSeries([[day('2026-01-31'), 600207, 78], [day('2026-02-01'), 4000, 40]]) });
      });

      it('refuses a resolution other than Hour, Day or Month with 400 naming the field and the supported ones', async () => {
        for (const path of ['tracking/series', 'streams/series', 'account/series', 'tracking/streams/series']) {
          const names = path === 'tracking/series' ? 'trackingIds=north&' : path === 'account/series' ? '' : 'streamNames=arena&';
          for (const res of ['resolution=hour', 'resolution=day', 'resolution=Week', 'resolution=', '']) {
            const r = await get(path, `${res}&${names}startDate=2026-01-30&stopDate=2026-02-02`);
            assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors: { resolution: ['expected Hour, Day or Month'] } } }], `${path} ${res}`);
          }
        }
      });

      it('refuses bad stream queries with 400 naming the parameter', async () => {
        const cases: Array<[string, string, Record<string, string[]>]> = [
          ['streams/total', 'startDate=2026-01-01&stopDate=2026-01-02', { streamNames: ['give 1 to 10 stream names, repeated or comma-separated'] }],
          ['streams/total', 'streamNames=,&startDate=2026-01-01&stopDate=2026-01-02', { streamNames: ['give 1 to 10 stream names'] }],
          ['streams/total', `${Array.from({ length: 11 }, (_, i) => `streamNames=s${i}`).join('&')}&startDate=2026-01-01&stopDate=2026-01-02`, { streamNames: ['at most 10 stream names'] }],
          ['streams/total', `streamNames=${'x'.repeat(129)}&startDate=2026-01-01&stopDate=2026-01-02`, { 'streamNames[0]': ['Too big: expected string to have <=128 characters'] }],
          ['streams/total', 'streamNames=a&startDate=2026-01-02&stopDate=2026-01-02', { stopDate: ['must be after startDate'] }],
          ['streams/series', 'resolution=Month&streamNames=a&startDate=2026-01-01&stopDate=2027-01-03', { stopDate: ['the range may cover at most 366 days'] }],
          ['streams/series', 'resolution=Day&streamNames=a&startDate=2026-13-01&stopDate=2027-01-02', { startDate: ['expected YYYY-MM-DD or an ISO 8601 date-time (UTC)'] }],
          ['tracking/series', 'resolution=Day&trackingIds=a&startDate=2026-01-01', { stopDate: ['Invalid input: expected string, received undefined'] }],
        ];
        for (const [path, q, errors] of cases) {
          const r = await get(path, q);
          assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors } }], `${path}?${q}`);
        }
      });
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

    describe('account and tracking/streams: per day and month', () => {
      let app: TestApp;
      let mine: { id: string; secret: string };
      let theirs: { id: string; secret: string };
      const get = (path: string, q: string, secret = mine.secret) => request(app.app).get(`/api/analytics/${path}?${q}`).set('authorization', `Bearer ${secret}`);
      const day = (d: string) => `${d}T00:00:00Z`;
      before(async () => {
        app = await testApp(await factory.make());
        mine = await app.account('fixed');
        theirs = await app.account('fixed-other');
        const plain = (await request(app.app).post('/api/subscribe_token').set('authorization', `Bearer ${mine.secret}`).send({ label: 'untracked', streams: [{ streamName: '.*', isRegex: true }] })).body.data as { id: number };
        const reports: object[] = [
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 100, bytesIn: 1, at: '2026-01-30T10:00:00Z' },
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 200, bytesIn: 2, at: '2026-01-31T23:59:59.999Z' },
          { trackingId: 'north', accountId: mine.id, streamName: 'lobby', bytesOut: 30, at: '2026-01-31T00:00:00Z' },
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 4000, bytesIn: 40, at: '2026-02-01T00:00:00Z' },
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 50000, at: '2026-03-15T12:00:00Z' },
          { trackingId: 'south', accountId: mine.id, streamName: 'arena', bytesOut: 7, bytesIn: 70, at: '2026-01-31T08:00:00Z' },
          { tokenId: plain.id, streamName: 'arena', bytesOut: 600000, bytesIn: 6, at: '2026-01-31T09:00:00Z' }, // untracked
          { tokenId: plain.id, streamName: 'lobby', bytesOut: 8, at: '2026-02-02T00:00:00Z' }, // untracked
          { trackingId: 'north', accountId: theirs.id, streamName: 'arena', bytesOut: 99999999, at: '2026-01-31T05:00:00Z' }, // another account
        ];
        for (const r of reports) assert.deepEqual((await request(app.app).post('/hooks/usage').send(r)).body, { counted: true }, JSON.stringify(r));
      });

      it('account/total sums every stream, tracking id and the untracked usage of the account; zeros without usage', async () => {
        const all = await get('account/total', 'startDate=2026-01-01&stopDate=2026-04-01');
        assert.deepEqual([all.status, all.body], [200, { status: 'success', data: streamTotal(100 + 200 + 30 + 4000 + 50000 + 7 + 600000 + 8, 1 + 2 + 40 + 70 + 6) }]);
        const jan31 = await get('account/total', 'startDate=2026-01-31&stopDate=2026-02-01T00:00:00Z');
        assert.deepEqual(jan31.body.data, streamTotal(200 + 30 + 7 + 600000, 2 + 70 + 6));
        assert.deepEqual((await get('account/total', 'startDate=2025-01-01&stopDate=2025-02-01')).body.data, streamTotal(0, 0));
        assert.deepEqual((await get('account/total', 'startDate=2026-01-01&stopDate=2026-04-01', theirs.secret)).body.data, streamTotal(99999999, 0));
      });

      it('account/series by day and by month: every period in order, zeros without usage', async () => {
        const d = await get('account/series', 'resolution=Day&startDate=2026-01-30&stopDate=2026-02-03');
        assert.deepEqual([d.status, d.body], [
          200,
          {
            status: 'success',
            data: streamSeries([
              [day('2026-01-30'), 100, 1],
              [day('2026-01-31'), 600237, 78],
              [day('2026-02-01'), 4000, 40],
              [day('2026-02-02'), 8, 0],
            ]),
          },
        ]);
        for (const part of ['bandwidth', 'standardStream', 'restream', 'geoCascade']) {
          assert.deepEqual(Object.keys(d.body.data[part]), ['2026-01-30', '2026-01-31', '2026-02-01', '2026-02-02'].map(day), part);
        }
        const m = await get('account/series', 'resolution=Month&startDate=2026-01-15&stopDate=2026-05-01');
        assert.deepEqual(m.body.data, streamSeries([
          [day('2026-01-01'), 600337, 79],
          [day('2026-02-01'), 4008, 40],
          [day('2026-03-01'), 50000, 0],
          [day('2026-04-01'), 0, 0],
        ]));
        const other = await get('account/series', 'resolution=Day&startDate=2026-01-31&stopDate=2026-02-01', theirs.secret);
        assert.deepEqual(other.body.data, streamSeries([[day('2026-01-31'), 99999999, 0]]));
      });

      it('tracking/streams/total: per stream, the untracked usage first (trackingId null), then each tracking id; [] for a stream without usage', async () => {
        const r = await get('tracking/streams/total', 'streamNames=arena&streamNames=lobby,empty&startDate=2026-01-01&stopDate=2026-04-01');
        assert.deepEqual([r.status, r.body], [
          200,
          {
            status: 'success',
            data: {
              arena: [trow(null, 600000, 6), trow('north', 54300, 43), trow('south', 7, 70)],
              lobby: [trow(null, 8, 0), trow('north', 30, 0)],
              empty: [],
            },
          },
        ]);
        assert.deepEqual(Object.keys(r.body.data), ['arena', 'lobby', 'empty'], 'streams in the order asked');
        const feb = await get('tracking/streams/total', 'streamNames=arena,lobby&startDate=2026-02-01&stopDate=2026-03-01');
        assert.deepEqual(feb.body.data, { arena: [trow('north', 4000, 40)], lobby: [trow(null, 8, 0)] });
        const other = await get('tracking/streams/total', 'streamNames=arena,lobby&startDate=2026-01-01&stopDate=2026-04-01', theirs.secret);
        assert.deepEqual(other.body.data, { arena: [trow('north', 99999999, 0)], lobby: [] });
      });

      it('tracking/streams/series by day and by month: every period in order, [] without usage', async () => {
        const d = await get('tracking/streams/series', 'resolution=Day&streamNames=arena,lobby&startDate=2026-01-30&stopDate=2026-02-03');
        assert.deepEqual([d.status, d.body], [
          200,
          {
            status: 'success',
            data: {
              arena: {
                [day('2026-01-30')]: [trow('north', 100, 1)],
                [day('2026-01-31')]: [trow(null, 600000, 6), trow('north', 200, 2), trow('south', 7, 70)],
                [day('2026-02-01')]: [trow('north', 4000, 40)],
                [day('2026-02-02')]: [],
              },
              lobby: {
                [day('2026-01-30')]: [],
                [day('2026-01-31')]: [trow('north', 30, 0)],
                [day('2026-02-01')]: [],
                [day('2026-02-02')]: [trow(null, 8, 0)],
              },
            },
          },
        ]);
        assert.deepEqual(Object.keys(d.body.data.arena), ['2026-01-30', '2026-01-31', '2026-02-01', '2026-02-02'].map(day), 'days oldest first');
        const m = await get('tracking/streams/series', 'resolution=Month&streamNames=arena&startDate=2026-01-01&stopDate=2026-04-01');
        assert.deepEqual(m.body.data, {
          arena: {
            [day('2026-01-01')]: [trow(null, 600000, 6), trow('north', 300, 3), trow('south', 7, 70)],
            [day('2026-02-01')]: [trow('north', 4000, 40)],
            [day('2026-03-01')]: [trow('north', 50000, 0)],
          },
        });
      });

      it('the OpenAPI document lists the eight endpoints, every series with Hour, Day and Month', async () => {
        const doc = (await request(app.app).get('/api/openapi.json')).body;
        const analytics = Object.keys(doc.paths).filter((p) => p.startsWith('/api/analytics/')).sort();
        assert.deepEqual(
          analytics,
          ['account/series', 'account/total', 'streams/series', 'streams/total', 'tracking/series', 'tracking/streams/series', 'tracking/streams/total', 'tracking/total'].map((p) => `/api/analytics/${p}`),
        );
        for (const p of analytics.filter((x) => x.endsWith('/series'))) {
          const resolution = doc.paths[p].get.parameters.find((x: { name: string }) => x.name === 'resolution');
          assert.deepEqual(resolution?.schema?.enum, ['Hour', 'Day', 'Month'], p);
        }
      });

      it('refuses bad account and tracking/streams queries with 400 naming the parameter', async () => {
        const cases: Array<[string, string, Record<string, string[]>]> = [
          ['account/total', 'startDate=2026-01-01', { stopDate: ['Invalid input: expected string, received undefined'] }],
          ['account/total', 'startDate=2026-01-02&stopDate=2026-01-01', { stopDate: ['must be after startDate'] }],
          ['account/series', 'resolution=Day&startDate=2025-01-01&stopDate=2026-01-03', { stopDate: ['the range may cover at most 366 days'] }],
          ['account/series', 'resolution=Day&startDate=2026-02-30&stopDate=2026-03-03', { startDate: ['expected YYYY-MM-DD or an ISO 8601 date-time (UTC)'] }],
          ['tracking/streams/total', 'startDate=2026-01-01&stopDate=2026-01-02', { streamNames: ['give 1 to 10 stream names, repeated or comma-separated'] }],
          ['tracking/streams/total', `${Array.from({ length: 11 }, (_, i) => `streamNames=s${i}`).join('&')}&startDate=2026-01-01&stopDate=2026-01-02`, { streamNames: ['at most 10 stream names'] }],
          ['tracking/streams/series', `resolution=Day&streamNames=${'x'.repeat(129)}&startDate=2026-01-01&stopDate=2026-01-02`, { 'streamNames[0]': ['Too big: expected string to have <=128 characters'] }],
        ];
        for (const [path, q, errors] of cases) {
          const r = await get(path, q);
          assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors } }], `${path}?${q}`);
        }
      });
    });

    describe('hourly series', () => {
      // The app's and the store's clock, frozen at the suite's start; reports name their hours
      // relative to it (the Redis hourly keys expire by the server's own clock).
      const NOW = Date.now();
      const dayOf = (offset: number) => new Date(NOW + offset * 86400000).toISOString().slice(0, 10);
      const today = dayOf(0);
      const y = dayOf(-1);
      const oldest = dayOf(-31);
      let app: TestApp;
      let mine: { id: string; secret: string };
      let theirs: { id: string; secret: string };
      const get = (path: string, q: string, secret = mine.secret) => request(app.app).get(`/api/analytics/${path}?${q}`).set('authorization', `Bearer ${secret}`);
      const hour = (d: string, h: number) => `${d}T${String(h).padStart(2, '0')}:00:00Z`;
      before(async () => {
        app = await testApp(await factory.make({ now: () => NOW }), {}, { now: () => NOW });
        mine = await app.account('hourly');
        theirs = await app.account('hourly-other');
        const plain = (await request(app.app).post('/api/subscribe_token').set('authorization', `Bearer ${mine.secret}`).send({ label: 'untracked', streams: [{ streamName: '.*', isRegex: true }] })).body.data as { id: number };
        const reports: object[] = [
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 100, bytesIn: 1, at: `${y}T10:15:00Z` },
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 200, bytesIn: 2, at: `${y}T10:59:59.999Z` },
          { trackingId: 'south', accountId: mine.id, streamName: 'arena', bytesOut: 7, bytesIn: 70, at: `${y}T11:00:00Z` },
          { tokenId: plain.id, streamName: 'arena', bytesOut: 5000, bytesIn: 5, at: `${y}T11:30:00Z` }, // untracked
          { trackingId: 'north', accountId: mine.id, streamName: 'lobby', bytesOut: 30, at: `${y}T23:00:00Z` },
          { tokenId: plain.id, streamName: 'lobby', bytesOut: 9, at: `${today}T00:30:00Z` }, // untracked, today
          { trackingId: 'north', accountId: mine.id, streamName: 'arena', bytesOut: 1000000, at: `${dayOf(-40)}T12:00:00Z` }, // older than the hourly retention
          { trackingId: 'north', accountId: theirs.id, streamName: 'arena', bytesOut: 99999999, at: `${y}T10:00:00Z` }, // another account
        ];
        for (const r of reports) assert.deepEqual((await request(app.app).post('/hooks/usage').send(r)).body, { counted: true }, JSON.stringify(r));
      });

      it('every series answers resolution=Hour: a key per UTC hour of the range, oldest first, dense', async () => {
        const q = `startDate=${y}T10:00:00Z&stopDate=${y}T12:00:00Z`;
        const tracking = await get('tracking/series', `resolution=Hour&trackingIds=north,south,nobody&${q}`);
        assert.deepEqual([tracking.status, tracking.body], [
          200,
          {
            status: 'success',
            data: {
              north: { [hour(y, 10)]: [row('arena', 300, 3)], [hour(y, 11)]: [] },
              south: { [hour(y, 10)]: [], [hour(y, 11)]: [row('arena', 7, 70)] },
              nobody: { [hour(y, 10)]: [], [hour(y, 11)]: [] },
            },
          },
        ]);
        const streams = await get('streams/series', `resolution=Hour&streamNames=arena,lobby&${q}`);
        assert.deepEqual(streams.body, {
          status: 'success',
          data: {
            arena: streamSeries([
              [hour(y, 10), 300, 3],
              [hour(y, 11), 5007, 75],
            ]),
            lobby: streamSeries([
              [hour(y, 10), 0, 0],
              [hour(y, 11), 0, 0],
            ]),
          },
        });
        const account = await get('account/series', `resolution=Hour&${q}`);
        assert.deepEqual(account.body, { status: 'success', data: streamSeries([[hour(y, 10), 300, 3], [hour(y, 11), 5007, 75]]) });
        const perTracking = await get('tracking/streams/series', `resolution=Hour&streamNames=arena,lobby&${q}`);
        assert.deepEqual(perTracking.body, {
          status: 'success',
          data: {
            arena: { [hour(y, 10)]: [trow('north', 300, 3)], [hour(y, 11)]: [trow(null, 5000, 5), trow('south', 7, 70)] },
            lobby: { [hour(y, 10)]: [], [hour(y, 11)]: [] },
          },
        });
        const theirsToo = await get('account/series', `resolution=Hour&${q}`, theirs.secret);
        assert.deepEqual(theirsToo.body.data, streamSeries([[hour(y, 10), 99999999, 0], [hour(y, 11), 0, 0]]));
      });

      it('Hour ranges: a start inside an hour counts that hour, a stop inside one includes it; across midnight; a whole day has 24 keys', async () => {
        const inside = await get('account/series', `resolution=Hour&startDate=${y}T10:30:00Z&stopDate=${y}T11:00:00.001Z`);
        assert.deepEqual(inside.body.data, streamSeries([[hour(y, 10), 300, 3], [hour(y, 11), 5007, 75]]));
        const midnight = await get('tracking/streams/series', `resolution=Hour&streamNames=lobby&startDate=${y}T23:00:00Z&stopDate=${today}T01:00:00Z`);
        assert.deepEqual(midnight.body.data, { lobby: { [hour(y, 23)]: [trow('north', 30, 0)], [hour(today, 0)]: [trow(null, 9, 0)] } });
        const wholeDay = await get('tracking/series', `resolution=Hour&trackingIds=nobody&startDate=${y}&stopDate=${today}`);
        assert.deepEqual(Object.keys(wholeDay.body.data.nobody), Array.from({ length: 24 }, (_, h) => hour(y, h)));
        assert.ok(Object.values(wholeDay.body.data.nobody).every((rows) => Array.isArray(rows) && rows.length === 0));
      });

      it('reaches back to the oldest day of the hourly retention; before it is a 400 naming startDate and the retention', async () => {
        const first = await get('streams/series', `resolution=Hour&streamNames=arena&startDate=${oldest}&stopDate=${oldest}T01:00:00Z`);
        assert.deepEqual([first.status, first.body.data], [200, { arena: streamSeries([[hour(oldest, 0), 0, 0]]) }]);
        const message = `with resolution=Hour, must be on or after ${oldest}: hourly usage is kept for the current UTC day and the 31 days before it (use Day for older usage)`;
        for (const [path, names] of [['tracking/series', 'trackingIds=north&'], ['streams/series', 'streamNames=arena&'], ['account/series', ''], ['tracking/streams/series', 'streamNames=arena&']]) {
          const r = await get(path, `resolution=Hour&${names}startDate=${dayOf(-32)}T23:00:00Z&stopDate=${oldest}T01:00:00Z`);
          assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors: { startDate: [message] } } }], path);
        }
        // the report older than the retention counts per day
        const old = await get('account/series', `resolution=Day&startDate=${dayOf(-40)}&stopDate=${dayOf(-39)}`);
        assert.deepEqual(old.body.data, streamSeries([[`${dayOf(-40)}T00:00:00Z`, 1000000, 0]]));
      });

      it('answers 744 hourly points at most (31 days); more is a 400 naming stopDate', async () => {
        const full = await get('account/series', `resolution=Hour&startDate=${oldest}&stopDate=${today}`);
        assert.equal(full.status, 200);
        assert.equal(Object.keys(full.body.data.bandwidth).length, 744);
        assert.deepEqual(full.body.data.bandwidth[hour(y, 11)], { bytesOut: 5007, bytesIn: 75 });
        const over = await get('tracking/streams/series', `resolution=Hour&streamNames=arena&startDate=${oldest}&stopDate=${today}T00:00:01Z`);
        assert.deepEqual([over.status, over.body], [
          400,
          { status: 'fail', data: { message: 'Validation errors', errors: { stopDate: ['with resolution=Hour the range may cover at most 744 hours (31 days)'] } } },
        ]);
      });
    });
  });
}
