// The webhook surface as the hosted platform's clients use it, on every store: the WebhookModel in
// every answer (200 on create, the deleted webhook on delete), nulls as "not given", the list query
// as the Node and Python clients spell it, test sends of every WebhookType with no body, and
// webhooks.disableAfterFailures (disabled in the store, re-enabled by reEnable or a new url).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import type { Store } from '../../src/store/store.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';
import { until } from '../helpers/until.js';

/** The hosted platform's documented signature check, written from its docs. */
function hostedSignatureOk(r: Received, secret: string): boolean {
  return r.headers['x-millicast-signature'] === `sha1=${createHmac('sha1', Buffer.from(secret, 'base64')).update(r.body).digest('hex')}`;
}

type Model = Record<string, unknown> & { id: number; secret: string; url: string };

export function webhooksHostedSuite(factory: StoreFactory): void {
  describe(`webhooks, hosted API surface: ${factory.name}`, () => {
    let rx: Receiver;
    let t: TestApp;
    let store: Store;
    let acct: { id: string; secret: string };
    before(async () => {
      await factory.setup();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await factory.teardown();
    });

    const cfg = (webhooks: Record<string, unknown> = {}) => ({
      webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: 2000, retries: 0, testSendsPerMinute: 1000, ...webhooks },
    });
    const fresh = async (webhooks: Record<string, unknown> = {}) => {
      store = await factory.make();
      t = await testApp(store, cfg(webhooks));
      acct = await t.account();
      rx.received.length = 0;
      rx.respond = (_q, s) => {
        s.statusCode = 204;
        s.end();
      };
    };
    const auth = (secret = acct.secret) => ({ authorization: `Bearer ${secret}` });
    const api = (app = t.app, secret = acct.secret) => ({
      get: (p: string) => request(app).get(p).set(auth(secret)),
      post: (p: string, b?: object) => (b === undefined ? request(app).post(p).set(auth(secret)) : request(app).post(p).set(auth(secret)).send(b)),
      put: (p: string, b: object) => request(app).put(p).set(auth(secret)).send(b),
      del: (p: string) => request(app).delete(p).set(auth(secret)),
    });
    const create = async (body: Record<string, unknown>): Promise<Model> => {
      const r = await api().post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: false, ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as Model;
    };
    const settle = async (app: TestApp = t) => {
      await app.services.lifecycle.idle();
      await new Promise((r) => setImmediate(r));
      await app.services.dispatcher.idle();
    };
    const dropped = async (app: TestApp = t) =>
      (await app.services.metrics.webhookDeliveries.get()).values.find((v) => v.labels.result === 'dropped')?.value ?? 0;
    const model = (w: Model, over: Record<string, unknown> = {}) => ({
      id: w.id,
      url: `${rx.url}/hook`,
      secret: w.secret,
      isFeedHooks: false,
      isRecordingHooks: false,
      isThumbnailHooks: false,
      isTranscoderHooks: false,
      isMediaHooks: false,
      isViewerConnectionHooks: false,
      // filter and disabled are left out while unset (docs/compatibility.md#webhooks)
      ...over,
    });

    describe('records', () => {
      before(() => fresh());

      it('create answers 200 with every WebhookModel field; read answers the same', async () => {
        const r = await api().post('/api/webhooks', {
          url: `${rx.url}/hook`,
          isFeedHooks: true,
          isRecordingHooks: false,
          isThumbnailHooks: true,
          isTranscoderHooks: true,
          isMediaHooks: true,
          isViewerConnectionHooks: true,
          filter: 'cam[0-9]+',
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const w = r.body.data as Model;
        assert.match(w.secret, /^[A-Za-z0-9+/]{43}=$/);
        assert.equal(Buffer.from(w.secret, 'base64').length, 32);
        const expected = model(w, {
          isFeedHooks: true,
          isThumbnailHooks: true,
          isTranscoderHooks: true,
          isMediaHooks: true,
          isViewerConnectionHooks: true,
          filter: 'cam[0-9]+',
        });
        assert.deepEqual(r.body, { status: 'success', data: expected });
        const read = await api().get(`/api/webhooks/${w.id}`);
        assert.deepEqual([read.status, read.body], [200, { status: 'success', data: expected }]);
      });

      it('create: null in every optional field is "not given" (false flags, no filter)', async () => {
        const w = await create({
          isFeedHooks: true,
          isRecordingHooks: null,
          isThumbnailHooks: null,
          isTranscoderHooks: null,
          isMediaHooks: null,
          isViewerConnectionHooks: null,
          filter: null,
        });
        assert.deepEqual(w, model(w, { isFeedHooks: true }));
        const stored = await store.getWebhook(acct.id, w.id);
        assert.deepEqual(
          [stored?.isTranscoderHooks, stored?.isMediaHooks, stored?.isViewerConnectionHooks, stored?.filter, stored?.disabled],
          [false, false, false, undefined, undefined],
        );
      });

      it('a wrong type is a 400 naming the field, and nothing is stored', async () => {
        const before = (await api().get('/api/webhooks/list?itemCount=100')).body.data;
        const r = await api().post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: true, isMediaHooks: 'yes' });
        assert.deepEqual([r.status, r.body.status, r.body.data.message, Object.keys(r.body.data.errors)], [400, 'fail', 'Validation errors', ['isMediaHooks']]);
        const u = await api().put(`/api/webhooks/${before[0].id}`, { reEnable: 'true', isViewerConnectionHooks: 0 });
        assert.deepEqual([u.status, Object.keys(u.body.data.errors).sort()], [400, ['isViewerConnectionHooks', 'reEnable']]);
        const missing = await api().post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: null });
        assert.deepEqual([missing.status, Object.keys(missing.body.data.errors)], [400, ['isFeedHooks']], 'isFeedHooks is required');
        assert.deepEqual((await api().get('/api/webhooks/list?itemCount=100')).body.data, before);
      });

      it('update: every hosted field; null is "not given" except filter (null clears); all nulls is a 400', async () => {
        const w = await create({ isFeedHooks: true, filter: 'cam.*' });
        const u = await api().put(`/api/webhooks/${w.id}`, {
          url: null,
          refreshSecret: null,
          isFeedHooks: null,
          isRecordingHooks: true,
          isThumbnailHooks: null,
          isTranscoderHooks: true,
          isMediaHooks: true,
          isViewerConnectionHooks: null,
          reEnable: null,
        });
        assert.deepEqual([u.status, u.body.data], [200, model(w, { isFeedHooks: true, isRecordingHooks: true, isTranscoderHooks: true, isMediaHooks: true, filter: 'cam.*' })]);
        const cleared = await api().put(`/api/webhooks/${w.id}`, { filter: null, isViewerConnectionHooks: true, isMediaHooks: false });
        assert.deepEqual(cleared.body.data, model(w, { isFeedHooks: true, isRecordingHooks: true, isTranscoderHooks: true, isViewerConnectionHooks: true }));
        const nothing = await api().put(`/api/webhooks/${w.id}`, { url: null, isFeedHooks: null, refreshSecret: null });
        assert.deepEqual([nothing.status, nothing.body], [400, { status: 'fail', data: { message: 'No properties specified to update.' } }]);
        assert.deepEqual((await api().get(`/api/webhooks/${w.id}`)).body.data, cleared.body.data);
      });

      it('update with reEnable: true clears disabled and the failure count; the answer is the whole model', async () => {
        const w = await create({ isFeedHooks: true });
        await store.updateWebhook(acct.id, w.id, (cur) => ({ ...cur, failures: 4, disabled: { until: null, reason: '4 consecutive failed deliveries' } }));
        const shown = (await api().get(`/api/webhooks/${w.id}`)).body.data;
        assert.deepEqual(shown, model(w, { isFeedHooks: true, disabled: { reason: '4 consecutive failed deliveries' } }), 'disabled until re-enabled: no until');
        const noop = await api().put(`/api/webhooks/${w.id}`, { reEnable: false });
        assert.deepEqual([noop.status, noop.body.data.disabled], [200, { reason: '4 consecutive failed deliveries' }], 'reEnable: false changes nothing');
        const r = await api().put(`/api/webhooks/${w.id}`, { reEnable: true });
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: model(w, { isFeedHooks: true }) }]);
        const stored = await store.getWebhook(acct.id, w.id);
        assert.deepEqual([stored?.disabled, stored?.failures], [undefined, undefined]);
      });

      it('delete answers the deleted webhook; it is gone after', async () => {
        const w = await create({ isMediaHooks: true, filter: 'x' });
        const shown = (await api().get(`/api/webhooks/${w.id}`)).body.data;
        const d = await api().del(`/api/webhooks/${w.id}`);
        assert.deepEqual([d.status, d.body], [200, { status: 'success', data: shown }]);
        assert.deepEqual(shown, model(w, { isMediaHooks: true, filter: 'x' }));
        const again = await api().del(`/api/webhooks/${w.id}`);
        assert.deepEqual([again.status, again.body], [404, { status: 'fail', data: { message: `No webhook with id: ${w.id}`, webhookId: `No webhook with id: ${w.id}` } }]);
        assert.equal((await api().get(`/api/webhooks/${w.id}`)).status, 404);
        assert.equal(await store.getWebhook(acct.id, w.id), null);
      });
    });

    describe('list', () => {
      let ids: number[];
      before(async () => {
        await fresh();
        ids = [];
        for (let i = 0; i < 4; i++) ids.push((await create({ isFeedHooks: true })).id);
      });
      const listed = async (q: string) => {
        const r = await api().get(`/api/webhooks/list${q}`);
        assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.body)}`);
        return (r.body.data as Model[]).map((w) => w.id);
      };

      it('takes item_count (the Python client) and itemCount, and isDescending as True/False/1/0', async () => {
        assert.deepEqual(await listed('?startingId=&item_count=2&isDescending=False'), ids.slice(0, 2));
        assert.deepEqual(await listed('?item_count=3&isDescending=True'), [ids[3], ids[2], ids[1]]);
        assert.deepEqual(await listed('?itemCount=1&isDescending=1'), [ids[3]]);
        assert.deepEqual(await listed(`?startingId=${ids[1]}&itemCount=2&isDescending=0`), [ids[1], ids[2]]);
        assert.deepEqual(await listed(`?startingId=${ids[2]}&item_count=10&isDescending=true`), [ids[2], ids[1], ids[0]]);
        assert.deepEqual(await listed('?startingId=None&item_count=10&isDescending=False'), ids, "Python's str(None) is no startingId");
        assert.deepEqual(await listed('?itemCount=2&item_count=2'), ids.slice(0, 2), 'both, agreeing');
        // the hosted startingId is an integer with no minimum: 0 or a negative id starts before every webhook
        assert.deepEqual(await listed('?startingId=0&itemCount=2'), ids.slice(0, 2));
        assert.deepEqual(await listed('?startingId=-5&isDescending=False'), ids);
        assert.deepEqual(await listed('?startingId=0&isDescending=true'), [], 'descending from 0: no webhook has an id that low');
        assert.deepEqual(await listed(`?startingId=${ids[3] + 1000}&isDescending=true&itemCount=1`), [ids[3]]);
        assert.deepEqual(await listed(''), ids);
      });

      it('answers every record as the full model', async () => {
        const r = await api().get('/api/webhooks/list?item_count=1');
        assert.deepEqual(r.body.data, [model(r.body.data[0], { isFeedHooks: true })]);
      });

      it('refuses what it cannot read with a 400 naming the parameter', async () => {
        for (const [q, field] of [
          ['?isDescending=yes', 'isDescending'],
          ['?item_count=0', 'item_count'],
          ['?itemCount=101', 'itemCount'],
          ['?itemCount=2&item_count=3', 'item_count'],
          ['?startingId=x', 'startingId'],
          ['?startingId=1.5', 'startingId'],
          ['?startingId=99999999999999999999', 'startingId'],
        ] as const) {
          const r = await api().get(`/api/webhooks/list${q}`);
          assert.deepEqual([r.status, Object.keys(r.body.data.errors ?? {})], [400, [field]], q);
        }
      });
    });

    describe('test sends', () => {
      const flags = ['isFeedHooks', 'isRecordingHooks', 'isThumbnailHooks', 'isTranscoderHooks', 'isMediaHooks', 'isViewerConnectionHooks'] as const;
      const types = { Feeds: 'isFeedHooks', Recordings: 'isRecordingHooks', Thumbnail: 'isThumbnailHooks', Transcoder: 'isTranscoderHooks', Media: 'isMediaHooks', ViewerConnection: 'isViewerConnectionHooks' } as const;
      const hooks: Record<string, Model> = {};
      before(async () => {
        await fresh();
        // One webhook per flag, each at its own path, so the receiver tells who got what.
        for (const f of flags) {
          const r = await api().post('/api/webhooks', { url: `${rx.url}/${f}`, isFeedHooks: f === 'isFeedHooks', [f]: true });
          assert.equal(r.status, 200);
          hooks[f] = r.body.data as Model;
        }
      });
      const sent = async (type: string, body?: object) => {
        rx.received.length = 0;
        const r = await api().post(`/api/webhooks/test/${type}`, body);
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: true }], `${type}: ${JSON.stringify(r.body)}`);
        await settle();
        return rx.received.map((x) => ({ ...x, json: x.headers['content-type'] === 'application/json' ? JSON.parse(x.body.toString()) : undefined }));
      };

      for (const [type, flag] of Object.entries(types)) {
        it(`${type} with no body reaches exactly the webhook with ${flag}, signed`, async () => {
          const got = await sent(type);
          assert.deepEqual(got.map((g) => g.path), [`/${flag}`]);
          assert.ok(hostedSignatureOk(got[0], hooks[flag].secret), 'x-millicast-signature');
        });
      }

      it('samples in the hosted shapes, with the documented sample names when none are given', async () => {
        const a = acct.id;
        const feeds = (await sent('Feeds'))[0].json;
        assert.deepEqual({ ...feeds, timestamp: 0, data: { ...feeds.data, feedId: 0, started: 0 } }, {
          type: 'feeds',
          event: 'started',
          timestamp: 0,
          data: { feedId: 0, accountId: a, name: 'sample_stream', streamId: `${a}/sample_stream`, started: 0, active: true },
        });
        assert.match(feeds.data.feedId, /^[0-9a-f-]{36}$/);

        const rec = (await sent('Recordings'))[0].json;
        assert.deepEqual({ ...rec, timestamp: 0, data: { ...rec.data, recordedOn: 0 } }, {
          type: 'recording',
          event: 'completed',
          timestamp: 0,
          data: { recordingId: 0, streamName: 'sample_stream', streamId: `${a}/sample_stream`, recordedOn: 0, path: '/sample/sample_stream.mp4' },
        });

        const thumb = (await sent('Thumbnail'))[0];
        assert.deepEqual([thumb.headers['content-type'], thumb.headers['x-millicast-stream-id'], thumb.body.subarray(0, 3).toString('hex')], ['image/jpeg', `${a}/sample_stream`, 'ffd8ff']);

        const media = (await sent('Media'))[0].json;
        assert.equal(typeof media.timestamp, 'number');
        assert.ok(media.timestamp > 1.7e12, 'epoch milliseconds');
        assert.match(media.data.mediaAssetId, /^[0-9a-f]{32}$/);
        assert.deepEqual({ ...media, timestamp: 0, data: { ...media.data, mediaAssetId: 0 } }, {
          type: 'media',
          event: 'completed',
          timestamp: 0,
          // no publish token of the account matches sample_stream: no tokenId (the hosted hook has one only then)
          data: {
            mediaAssetId: 0,
            type: 'recording',
            streamName: 'sample_stream',
            streamId: `${a}/sample_stream`,
            startTime: media.timestamp,
            expiration: media.timestamp + 100 * 24 * 3600 * 1000,
            metadata: {},
          },
        });

        const viewer = (await sent('ViewerConnection'))[0].json;
        assert.deepEqual({ ...viewer, timestamp: 0 }, {
          type: 'viewerConnection',
          event: 'ViewerAttempt',
          timestamp: 0,
          data: { name: 'sample_stream', accountId: a, streamId: `${a}/sample_stream` },
        });

        const tr = (await sent('Transcoder'))[0].json;
        assert.match(tr.data.transcoderId, /^[0-9a-f-]{36}$/);
        assert.deepEqual({ ...tr, timestamp: 0, data: { ...tr.data, transcoderId: 0 } }, {
          type: 'transcoder',
          event: 'ACTIVE',
          timestamp: 0,
          data: { transcoderId: 0, transcoderName: 'sample_transcoder', cluster: 'sample', createdOn: new Date(tr.timestamp).toISOString(), status: 'Active' },
        });
      });

      it("Media and Recordings samples name the publish token of their stream: the one publishing it, else the oldest active one whose streams match", async () => {
        const token = async (label: string, streams: object[]) => {
          const r = await api().post('/api/publish_token', { label, streams });
          assert.equal(r.status, 200, JSON.stringify(r.body));
          return r.body.data.id as number;
        };
        const off = await token('off', [{ streamName: 'studio-.*', isRegex: true }]);
        assert.equal((await api().put(`/api/publish_token/${off}`, { isActive: false })).status, 200);
        const byPattern = await token('pattern', [{ streamName: 'studio-.*', isRegex: true }]);
        const exact = await token('exact', [{ streamName: 'studio-1' }]);
        const media = async (streamName: string) => (await sent('Media', { streamName }))[0].json.data;
        const m = await media('studio-1');
        assert.deepEqual([m.tokenId, m.streamName, m.expiration - m.startTime], [byPattern, 'studio-1', 100 * 24 * 3600 * 1000], `not ${off} (inactive) nor ${exact} (newer)`);
        assert.equal((await sent('Recordings', { streamName: 'studio-1' }))[0].json.data.tokenId, byPattern);
        assert.equal('tokenId' in (await media('cam1')), false, 'no token matches cam1');
        const live = await request(t.app).post('/hooks/events').send({ type: 'feeds', event: 'started', streamId: `${acct.id}/studio-1`, tokenId: exact });
        assert.equal(live.status, 202);
        await settle();
        assert.equal((await media('studio-1')).tokenId, exact, 'the token publishing the stream');
        await request(t.app).post('/hooks/events').send({ type: 'feeds', event: 'ended', streamId: `${acct.id}/studio-1` });
        await settle();
      });

      it('takes {streamName, transcoderName} (nulls = not given), and {} as the Node client sends it', async () => {
        assert.equal((await sent('ViewerConnection', { streamName: 'cam7' }))[0].json.data.name, 'cam7');
        assert.equal((await sent('Media', { streamName: null, transcoderName: null }))[0].json.data.streamName, 'sample_stream');
        assert.equal((await sent('Transcoder', { transcoderName: 'tx1', streamName: 'cam7' }))[0].json.data.transcoderName, 'tx1');
        assert.equal((await sent('Feeds', {}))[0].json.data.name, 'sample_stream');
        const bad = await api().post('/api/webhooks/test/Feeds', { streamName: 7 });
        assert.deepEqual([bad.status, Object.keys(bad.body.data.errors)], [400, ['streamName']]);
        const unknownType = await api().post('/api/webhooks/test/Clips');
        assert.deepEqual([unknownType.status, Object.keys(unknownType.body.data.errors)], [400, ['kind']]);
      });

      it("filters apply: the stream name, or the transcoder name for Transcoder", async () => {
        await api().put(`/api/webhooks/${hooks.isTranscoderHooks.id}`, { filter: 'tx-[0-9]+' });
        await api().put(`/api/webhooks/${hooks.isMediaHooks.id}`, { filter: 'studio' });
        assert.deepEqual((await sent('Transcoder', { transcoderName: 'tx-1', streamName: 'nomatch' })).map((g) => g.path), ['/isTranscoderHooks']);
        assert.deepEqual(await sent('Transcoder', { transcoderName: 'other', streamName: 'tx-1' }), []);
        assert.deepEqual(await sent('Media', { streamName: 'cam1' }), []);
        assert.deepEqual((await sent('Media', { streamName: 'studio' })).map((g) => g.path), ['/isMediaHooks']);
      });

      it('still counts against webhooks.testSendsPerMinute', async () => {
        t = await testApp(await factory.make(), cfg({ testSendsPerMinute: 2 }));
        acct = await t.account();
        assert.equal((await api().post('/api/webhooks/test/Media')).status, 200);
        assert.equal((await api().post('/api/webhooks/test/ViewerConnection')).status, 200);
        const r = await api().post('/api/webhooks/test/Transcoder');
        assert.deepEqual([r.status, r.body.data.limit, typeof r.headers['retry-after']], [429, 2, 'string']);
      });
    });

    describe('test sends: x-streamgate-test-deliveries', () => {
      before(() => fresh());
      /** A Feeds test send: its answer, the header, and how many deliveries the receiver got. */
      const send = async (body?: object) => {
        rx.received.length = 0;
        const r = await api().post('/api/webhooks/test/Feeds', body);
        await settle();
        return { status: r.status, body: r.body, deliveries: r.headers['x-streamgate-test-deliveries'], received: rx.received.length };
      };
      const answer = (deliveries: string) => ({ status: 200, body: { status: 'success', data: true }, deliveries, received: Number(deliveries) });

      it("counts the webhooks the sample was queued for: 0 when no webhook's filter matches, 1, then 2; the body stays true", async () => {
        assert.deepEqual(await send(), answer('0'), 'no webhook at all');
        const filtered = await create({ isFeedHooks: true, filter: 'cam[0-9]+' });
        assert.deepEqual(await send(), answer('0'), 'sample_stream does not match cam[0-9]+');
        assert.deepEqual(await send({ streamName: 'cam1' }), answer('1'));
        await create({ isFeedHooks: true });
        assert.deepEqual(await send({ streamName: 'cam1' }), answer('2'));
        assert.deepEqual(await send(), answer('1'), 'only the webhook without a filter takes sample_stream');
        // neither a webhook without the type's flag nor a disabled one is sent to
        await create({ isRecordingHooks: true });
        await t.services.store.updateWebhook(acct.id, filtered.id, (cur) => ({ ...cur, disabled: { until: null, reason: 'test' } }));
        assert.deepEqual(await send({ streamName: 'cam1' }), answer('1'));
      });

      it('is documented in the OpenAPI document', async () => {
        const doc = (await request(t.app).get('/api/openapi.json')).body;
        assert.deepEqual(doc.paths['/api/webhooks/test/{kind}'].post.responses['200'].headers, {
          'x-streamgate-test-deliveries': {
            description: 'how many webhooks the sample event was queued for: enabled, with the type flag, and a filter that matches (0: none; docs/api.md#test-sends)',
            schema: { type: 'integer' },
          },
        });
      });
    });

    describe('webhooks.recordingShape', () => {
      const md = { format: 'MPEG-4', sizes: { concat: 92791, dash: 97934, thumbnails: 0 }, duration: 1 };
      /** A recording started, completed (with metadata) and deleted: the bodies delivered, and the deliveries log's event names. */
      const recordingLife = async (shape?: string) => {
        await fresh(shape === undefined ? {} : { recordingShape: shape });
        const w = await create({ isRecordingHooks: true });
        const pub = (await api().post('/api/publish_token', { label: 'rec', streams: [{ streamName: 'cam1' }] })).body.data.id as number;
        const send = async (event: string, data: object) => {
          const r = await request(t.app).post('/hooks/events').send({ type: 'recording', event, streamId: `${acct.id}/cam1`, tokenId: pub, data });
          assert.equal(r.status, 202);
          await settle();
        };
        await send('started', { path: '/rec/1.mp4' });
        await send('completed', { path: '/rec/1.mp4', metadata: md });
        const [rec] = (await api().get('/api/recordings?streamName=cam1')).body.data;
        assert.equal((await api().del(`/api/recordings/${rec.id}`)).status, 200);
        await settle();
        const bodies = rx.received.map((r) => JSON.parse(r.body.toString()));
        const logged = ((await api().get(`/api/webhooks/${w.id}/deliveries`)).body.data as Array<{ event: string }>).map((d) => d.event).sort();
        return { pub, id: rec.id as number, bodies, logged, at: bodies.map((b) => b.timestamp as number) };
      };

      it('streamgate (the default): type "recording", recordingId, streamId and path', async () => {
        const { pub, id, bodies, logged, at } = await recordingLife();
        const data = { recordingId: id, tokenId: pub, streamName: 'cam1', streamId: `${acct.id}/cam1`, recordedOn: at[0], path: '/rec/1.mp4' };
        assert.deepEqual(bodies, [
          { type: 'recording', event: 'started', timestamp: at[0], data },
          { type: 'recording', event: 'completed', timestamp: at[1], data: { ...data, metadata: md } },
          { type: 'recording', event: 'deleted', timestamp: at[2], data: { ...data, removedOn: at[2], metadata: md } },
        ]);
        assert.deepEqual(logged, ['recording.completed', 'recording.deleted', 'recording.started']);
      });

      it('hosted-legacy: the hosted recording hooks\' type "recordings", recordFileId, and their fields alone', async () => {
        const { pub, id, bodies, logged, at } = await recordingLife('hosted-legacy');
        const data = { recordFileId: id, tokenId: pub, streamName: 'cam1', recordedOn: at[0] };
        assert.deepEqual(bodies, [
          { type: 'recordings', event: 'started', timestamp: at[0], data },
          { type: 'recordings', event: 'completed', timestamp: at[1], data: { ...data, metadata: md } },
          { type: 'recordings', event: 'deleted', timestamp: at[2], data: { ...data, removedOn: at[2], metadata: md } },
        ]);
        assert.deepEqual(logged, ['recordings.completed', 'recordings.deleted', 'recordings.started']);
        rx.received.length = 0;
        assert.deepEqual((await api().post('/api/webhooks/test/Recordings')).body, { status: 'success', data: true });
        await settle();
        const sample = JSON.parse(rx.received[0].body.toString());
        assert.deepEqual(sample, { type: 'recordings', event: 'completed', timestamp: sample.timestamp, data: { recordFileId: 0, streamName: 'sample_stream', recordedOn: sample.timestamp } });
      });

      it('refuses another value at load, naming the setting', async () => {
        await assert.rejects(testApp(store, cfg({ recordingShape: 'hosted' })), /webhooks\.recordingShape/);
      });
    });

    describe('webhooks.disableAfterFailures', () => {
      const failWith = (code: number) => {
        rx.respond = (_q, s) => {
          s.statusCode = code;
          s.end();
        };
      };
      const send = async (app: TestApp = t) => {
        assert.equal((await api(app.app).post('/api/webhooks/test/Feeds')).status, 200);
        await settle(app);
      };
      const disabledBy = (n: number) => ({ reason: `${n} consecutive failed deliveries` });

      it('0 (the default) never disables and writes no count', async () => {
        await fresh();
        assert.equal(t.services.config.webhooks.disableAfterFailures, 0);
        const w = await create({ isFeedHooks: true });
        failWith(500);
        for (let i = 0; i < 5; i++) await send();
        assert.equal(rx.received.length, 5);
        const stored = await store.getWebhook(acct.id, w.id);
        assert.deepEqual([stored?.disabled, stored?.failures, stored?.rev], [undefined, undefined, 1]);
      });

      it('disables after N consecutive non-2xx answers; events are then dropped (counted), not sent; reEnable sends again', async () => {
        await fresh({ disableAfterFailures: 3 });
        const w = await create({ isFeedHooks: true });
        failWith(500);
        await send();
        await send();
        assert.deepEqual([(await api().get(`/api/webhooks/${w.id}`)).body.data.disabled, (await store.getWebhook(acct.id, w.id))?.failures], [undefined, 2]);
        await send();
        const disabled = (await api().get(`/api/webhooks/${w.id}`)).body.data;
        assert.deepEqual(disabled, model(w, { isFeedHooks: true, disabled: disabledBy(3) }));
        assert.equal(rx.received.length, 3);

        const droppedBefore = await dropped();
        await send();
        await send();
        assert.equal(rx.received.length, 3, 'nothing more reaches the receiver');
        assert.equal((await dropped()) - droppedBefore, 2, 'each skipped delivery is counted as dropped');
        const log = (await api().get(`/api/webhooks/${w.id}/deliveries`)).body.data;
        assert.deepEqual(log.map((d: { statusCode: number }) => d.statusCode), [500, 500, 500], 'the log keeps the failures that disabled it');

        failWith(204);
        const r = await api().put(`/api/webhooks/${w.id}`, { reEnable: true });
        assert.deepEqual(r.body.data, model(w, { isFeedHooks: true }));
        await send();
        assert.equal(rx.received.length, 4, 'delivered again');
      });

      it('a success resets the count; a healthy webhook costs no store write per delivery', async () => {
        await fresh({ disableAfterFailures: 3 });
        const w = await create({ isFeedHooks: true });
        const rev = async () => (await store.getWebhook(acct.id, w.id))!.rev;
        const r0 = await rev();
        for (let i = 0; i < 3; i++) await send();
        assert.equal(await rev(), r0, 'successes with no failures counted write nothing');
        failWith(503);
        await send();
        await send();
        failWith(204);
        await send();
        assert.equal((await store.getWebhook(acct.id, w.id))?.failures, undefined, 'reset');
        failWith(503);
        await send();
        await send();
        assert.deepEqual([(await store.getWebhook(acct.id, w.id))?.failures, (await api().get(`/api/webhooks/${w.id}`)).body.data.disabled], [2, undefined]);
        await send();
        assert.deepEqual((await api().get(`/api/webhooks/${w.id}`)).body.data.disabled, disabledBy(3));
      });

      it('connection errors and timeouts count; a new url re-enables, the same url does not', async (ctx) => {
        await fresh({ disableAfterFailures: 2, timeoutMs: 1000 });
        const down = await api().post('/api/webhooks', { url: 'https://127.0.0.1:1/h', isFeedHooks: true });
        const hangs = await create({ isFeedHooks: true });
        // The attempts' deadlines are timers of the mocked clock: an attempt that hangs times out when the test moves it on.
        ctx.mock.timers.enable({ apis: ['setTimeout'] });
        let arrived = 0;
        let arrival: (() => void) | undefined;
        rx.respond = () => {
          arrived++; // never answered
          arrival?.();
        };
        for (let n = 1; n <= 2; n++) {
          assert.equal((await api().post('/api/webhooks/test/Feeds')).status, 200);
          while (arrived < n) await new Promise<void>((r) => (arrival = r));
          ctx.mock.timers.tick(1000);
          await settle();
        }
        ctx.mock.timers.reset();
        for (const w of [down.body.data as Model, hangs]) {
          assert.deepEqual((await api().get(`/api/webhooks/${w.id}`)).body.data.disabled, disabledBy(2), `webhook ${w.url}`);
        }
        const same = await api().put(`/api/webhooks/${hangs.id}`, { url: hangs.url });
        assert.deepEqual(same.body.data.disabled, disabledBy(2), 'the same url is no change');
        const moved = await api().put(`/api/webhooks/${hangs.id}`, { url: `${rx.url}/moved` });
        assert.deepEqual(moved.body.data, model(hangs, { url: `${rx.url}/moved`, isFeedHooks: true }));
        rx.received.length = 0;
        rx.respond = (_q, s) => s.writeHead(204).end();
        await send();
        const log = (await api().get(`/api/webhooks/${hangs.id}/deliveries`)).body.data;
        assert.deepEqual(rx.received.map((x) => x.path), ['/moved'], JSON.stringify(log));
      });

      it('deliveries already queued when the webhook is disabled are dropped, not attempted', async () => {
        await fresh({ disableAfterFailures: 1, concurrency: 1, accountConcurrency: 1 });
        await create({ isFeedHooks: true });
        // The first attempt is answered (500) only once the other three wait in the queue behind it.
        let queued!: () => void;
        const allQueued = new Promise<void>((r) => (queued = r));
        rx.respond = (_q, s) => void allQueued.then(() => s.writeHead(500).end());
        for (let i = 0; i < 4; i++) assert.equal((await api().post('/api/webhooks/test/Feeds')).status, 200);
        const waiting = async () => (await t.services.metrics.webhookQueue.get()).values[0]?.value;
        await until(async () => rx.received.length === 1 && (await waiting()) === 3, 10_000, 'one attempt in flight and three queued');
        queued();
        await settle();
        assert.equal(rx.received.length, 1);
        assert.equal(await dropped(), 3);
      });

      it('the count is kept in the store: two instances count together, and both stop sending', async () => {
        store = await factory.make();
        const a = await testApp(store, cfg({ disableAfterFailures: 3 }));
        const b = await testApp(store, cfg({ disableAfterFailures: 3 }));
        t = a;
        acct = await a.account();
        const w = await create({ isFeedHooks: true });
        rx.received.length = 0;
        failWith(500);
        await send(a);
        await send(b);
        assert.equal((await store.getWebhook(acct.id, w.id))?.failures, 2);
        await send(a);
        assert.deepEqual((await api(b.app).get(`/api/webhooks/${w.id}`)).body.data.disabled, disabledBy(3));
        await send(b);
        await send(a);
        assert.equal(rx.received.length, 3);
        assert.deepEqual([await dropped(a), await dropped(b)], [1, 1]);
      });
    });
  });
}
