// Every management endpoint that has a hosted response schema answers 200 with an envelope that
// validates against that schema (test/compat/hosted-schemas.ts): no field the hosted schema lacks
// except Streamgate's documented extensions, every set field of a record present, no null in a
// record, types as the hosted API sends them. On SQLite and on a Redis this test starts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { sqliteFactory, redisFactory, type StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { Ajv, type ValidateFunction } from 'ajv';
import { describeErrors, responseValidator } from './hosted-schemas.js';

/**
 * The stream stop and monitoring answers, checked twice: against the hosted schemas
 * (hosted-api-schemas.json: SuccessStopStreamResponse, SuccessListStreams, SuccessStreamDetails),
 * and against these closed ones, which require every field docs/compatibility.md#monitoring lists
 * as served (the hosted schemas require none of them).
 */
const streamAjv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
streamAjv.addFormat('date-time', { type: 'string', validate: (v: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v)) });
const closed = (properties: Record<string, object>) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
const success = (data: object) => closed({ status: { const: 'success' }, data });
const time = { type: 'string', format: 'date-time' };
const feed = closed({
  streamId: { type: 'string' },
  feedId: { type: 'string' },
  serverId: { type: 'string' },
  active: { type: 'boolean' },
  startTime: time,
  endTime: { anyOf: [time, { type: 'null' }] },
  isRecordingAllowed: { type: 'boolean' },
  type: { type: 'string' },
  tokenId: { type: 'integer' },
});
const streamDetails = closed({
  streamId: { type: 'string' },
  streamName: { type: 'string' },
  clusters: { type: 'array', items: { type: 'string' } },
  secureStream: { type: 'boolean' },
  isRecordingAllowed: { type: 'boolean' },
  multisource: { type: 'boolean' },
  live: { type: 'boolean' },
  startTime: time,
  endTime: { anyOf: [time, { type: 'null' }] },
  viewerCount: { type: 'integer', minimum: 0 },
  hasRedundant: { type: 'boolean' },
  restreaming: { type: 'boolean' },
  feeds: { type: 'array', items: feed },
});
const pagination = closed({ totalItems: { type: 'integer' }, totalPages: { type: 'integer' }, itemsOnPage: { type: 'integer' } });
const STREAM_SCHEMAS: Record<string, ValidateFunction> = {
  stop: streamAjv.compile(success(closed({ stoppingLevel: { type: 'string', enum: ['Account', 'Stream', 'Feed', 'Server', 'Token', 'None'] } }))),
  streams: streamAjv.compile(success(closed({ pagination, data: { type: 'array', items: streamDetails } }))),
  stream: streamAjv.compile(success(streamDetails)),
};

const day = (offset: number) => new Date(Date.now() + offset * 86400000).toISOString().slice(0, 10);

function hostedSchemaSuite(factory: StoreFactory): void {
  describe(`hosted response schemas: ${factory.name}`, () => {
    let t: TestApp;
    let rx: Receiver;
    let acct: { id: string; secret: string };
    const ids: Record<string, number> = {};

    before(async () => {
      await factory.setup();
      rx = await startReceiver();
      t = await testApp(await factory.make(), {
        webhooks: { allowPrivateTargets: true, caFile: rx.caFile },
        director: {
          clusters: [
            { id: 'eu-1', name: 'Frankfurt', publishUrls: ['wss://eu/{streamName}'], subscribeUrls: ['wss://eu/{streamName}'], location: { city: 'Frankfurt', country: 'Germany' } },
            { id: 'us-1', publishUrls: ['wss://us/{streamName}'], subscribeUrls: ['wss://us/{streamName}'], rtmpPublishUrls: ['rtmp://ingest.us/live/{streamName}'] },
          ],
        },
      });
      acct = await t.account('schemas');
    });
    after(async () => {
      await t.services.lifecycle.idle();
      await rx.close();
      await factory.teardown();
    });

    const auth = () => ({ authorization: `Bearer ${acct.secret}` });
    const send = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', url: string, body?: object) => {
      const r = request(t.app)[method](url).set(auth());
      return body === undefined ? r : r.send(body);
    };

    /**
     * Calls `method url` and checks the answer against the hosted schema of `hostedPath`: status 200,
     * `status: "success"`, and the whole envelope valid. Returns data. `keep` sees data first, so an
     * id is remembered even when the answer fails, and the endpoints after it still run.
     */
    async function conforms(method: 'get' | 'post' | 'put' | 'patch' | 'delete', hostedPath: string, url: string, body?: object, keep?: (data: any) => void) {
      const r = await send(method, url, body);
      keep?.(r.body?.data);
      assert.deepEqual([r.status, r.body?.status], [200, 'success'], `${method.toUpperCase()} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
      const validate = responseValidator(method, hostedPath);
      const valid = validate(r.body);
      assert.deepEqual(valid ? [] : describeErrors(validate.errors), [], `${method.toUpperCase()} ${url} against the hosted schema; data: ${JSON.stringify(r.body.data)}`);
      return r.body.data;
    }
    it('POST /api/publish_token (expiring, bound on usage)', async () => {
      const body = { label: 'studio', streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }], expires: 3600, bindIpsOnUsage: 2 };
      await conforms('post', '/api/publish_token', '/api/publish_token', body, (d) => (ids.publish = d?.id));
    });

    it('POST /api/publish_token (defaults only)', async () => {
      const body = { label: 'minimal', streams: [{ streamName: 'cam2' }] };
      await conforms('post', '/api/publish_token', '/api/publish_token', body, (d) => (ids.minimal = d?.id));
    });

    it('GET /api/publish_token/{tokenId}', async () => {
      await conforms('get', '/api/publish_token/{tokenId}', `/api/publish_token/${ids.publish}`);
    });

    it('PUT /api/publish_token/{tokenId}', async () => {
      await conforms('put', '/api/publish_token/{tokenId}', `/api/publish_token/${ids.publish}`, {
        label: 'studio-2',
        addTokenStreams: [{ streamName: 'backup' }],
        updateAllowedOrigins: ['*.example.com'],
        subscribeRequiresAuth: true,
      });
    });

    it('PUT /api/v2/publish_token/{tokenId}', async () => {
      await conforms('put', '/api/v2/publish_token/{tokenId}', `/api/v2/publish_token/${ids.publish}`, { label: 'studio-3', allowedCountries: ['US'] });
    });

    it('GET /api/publish_token/list', async () => {
      const d = await conforms('get', '/api/publish_token/list', '/api/publish_token/list?sortBy=Name&page=1&itemsOnPage=25&isDescending=false');
      assert.equal(d.length, 2);
    });

    it('GET /api/publish_token/list_by_name', async () => {
      const d = await conforms('get', '/api/publish_token/list_by_name', '/api/publish_token/list_by_name?name=studio&filterBy=TokenOrStreamName&sortBy=Name&page=1&itemsOnPage=25');
      assert.deepEqual(
        d.map((x: { id: number }) => x.id),
        [ids.publish],
      );
    });

    it('GET /api/publish_token/list_by_cluster', async () => {
      await conforms('get', '/api/publish_token/list_by_cluster', '/api/publish_token/list_by_cluster?cluster=auto&page=1&itemsOnPage=25');
    });

    it('GET /api/publish_token/active', async () => {
      assert.deepEqual(await conforms('get', '/api/publish_token/active', `/api/publish_token/active?streamId=${acct.id}/cam1`), { tokenIds: [] });
    });

    it('GET /api/publish_token/active/all', async () => {
      assert.deepEqual(await conforms('get', '/api/publish_token/active/all', '/api/publish_token/active/all'), { tokenIds: [] });
    });

    it('PATCH /api/publish_token/disable (one disabled, one unknown)', async () => {
      const d = await conforms('patch', '/api/publish_token/disable', '/api/publish_token/disable', { tokenIds: [ids.minimal, 999999] });
      assert.deepEqual(d.successfulTokens, [ids.minimal]);
    });

    it('POST /api/subscribe_token (tracked)', async () => {
      const body = { label: 'viewers', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'grp' } };
      await conforms('post', '/api/subscribe_token', '/api/subscribe_token', body, (d) => (ids.subscribe = d?.id));
    });

    it('GET /api/subscribe_token/{tokenId}', async () => {
      await conforms('get', '/api/subscribe_token/{tokenId}', `/api/subscribe_token/${ids.subscribe}`);
    });

    it('PUT /api/subscribe_token/{tokenId}', async () => {
      await conforms('put', '/api/subscribe_token/{tokenId}', `/api/subscribe_token/${ids.subscribe}`, { label: 'viewers-2', updateAllowedIpAddresses: ['203.0.113.0/24'] });
    });

    it('PUT /api/v2/subscribe_token/{tokenId}', async () => {
      await conforms('put', '/api/v2/subscribe_token/{tokenId}', `/api/v2/subscribe_token/${ids.subscribe}`, { allowedIpAddresses: [], bindIpsOnUsage: 1 });
    });

    it('GET /api/subscribe_token/list', async () => {
      const d = await conforms('get', '/api/subscribe_token/list', '/api/subscribe_token/list?sortBy=AddedOn&page=1&itemsOnPage=10&isDescending=true');
      assert.equal(d.length, 1);
    });

    it('GET /api/subscribe_token/list_by_name', async () => {
      const d = await conforms('get', '/api/subscribe_token/list_by_name', '/api/subscribe_token/list_by_name?name=cam1&filterBy=StreamName&page=1&itemsOnPage=25');
      assert.deepEqual(
        d.map((x: { id: number }) => x.id),
        [ids.subscribe],
      );
    });

    it('POST /api/webhooks (with a filter)', async () => {
      const body = { url: `${rx.url}/hook`, isFeedHooks: true, isRecordingHooks: false, filter: 'cam.*' };
      await conforms('post', '/api/webhooks', '/api/webhooks', body, (d) => (ids.webhook = d?.id));
    });

    it('GET /api/webhooks/{webhookId}', async () => {
      await conforms('get', '/api/webhooks/{webhookId}', `/api/webhooks/${ids.webhook}`);
    });

    it('PUT /api/webhooks/{webhookId}', async () => {
      await conforms('put', '/api/webhooks/{webhookId}', `/api/webhooks/${ids.webhook}`, { isThumbnailHooks: true, refreshSecret: true });
    });

    it('GET /api/webhooks/list', async () => {
      const d = await conforms('get', '/api/webhooks/list', '/api/webhooks/list?itemCount=10&isDescending=false');
      assert.equal(d.length, 1);
    });

    it('POST /api/webhooks/test/{webhookType} (no body)', async () => {
      assert.equal(await conforms('post', '/api/webhooks/test/{webhookType}', '/api/webhooks/test/Feeds'), true);
    });

    it('usage for the tracked token and untracked usage are counted (the analytics below have rows to show)', async () => {
      const r = await request(t.app).post('/hooks/usage').send({ tokenId: ids.subscribe, streamName: 'cam1', bytesOut: 1000, bytesIn: 10 });
      assert.deepEqual([r.status, r.body], [200, { counted: true }]);
      const untracked = await request(t.app).post('/hooks/usage').send({ tokenId: ids.publish, streamName: 'cam1', bytesOut: 500 });
      assert.deepEqual([untracked.status, untracked.body], [200, { counted: true }]);
    });

    it('GET /api/analytics/tracking/total', async () => {
      const d = await conforms('get', '/api/analytics/tracking/total', `/api/analytics/tracking/total?trackingIds=grp&startDate=${day(0)}&stopDate=${day(1)}`);
      assert.deepEqual(Object.keys(d), ['grp']);
      assert.equal(d.grp.length, 1);
    });

    it('GET /api/analytics/tracking/series', async () => {
      await conforms('get', '/api/analytics/tracking/series', `/api/analytics/tracking/series?trackingIds=grp&startDate=${day(0)}&stopDate=${day(1)}&resolution=Day`);
    });

    it('GET /api/analytics/streams/total', async () => {
      const d = await conforms('get', '/api/analytics/streams/total', `/api/analytics/streams/total?streamNames=cam1&startDate=${day(0)}&stopDate=${day(1)}`);
      assert.deepEqual(Object.keys(d), ['cam1']);
    });

    it('GET /api/analytics/streams/series', async () => {
      await conforms('get', '/api/analytics/streams/series', `/api/analytics/streams/series?streamNames=cam1&startDate=${day(0)}&stopDate=${day(1)}&resolution=Day`);
    });

    it('GET /api/analytics/tracking/series and /streams/series with resolution=Hour', async () => {
      const tracking = await conforms('get', '/api/analytics/tracking/series', `/api/analytics/tracking/series?trackingIds=grp&startDate=${day(0)}&stopDate=${day(1)}&resolution=Hour`);
      assert.equal(Object.keys(tracking.grp).length, 24);
      const streams = await conforms('get', '/api/analytics/streams/series', `/api/analytics/streams/series?streamNames=cam1&startDate=${day(0)}&stopDate=${day(1)}&resolution=Hour`);
      assert.equal(Object.keys(streams.cam1.bandwidth).length, 24);
    });

    it('GET /api/analytics/account/total', async () => {
      const d = await conforms('get', '/api/analytics/account/total', `/api/analytics/account/total?startDate=${day(0)}&stopDate=${day(1)}`);
      assert.deepEqual([d.bytesOut, d.bytesIn], [1500, 10]);
    });

    it('GET /api/analytics/account/series (Hour, Day and Month)', async () => {
      for (const resolution of ['Hour', 'Day', 'Month']) {
        const d = await conforms('get', '/api/analytics/account/series', `/api/analytics/account/series?startDate=${day(0)}&stopDate=${day(1)}&resolution=${resolution}`);
        assert.equal(Object.keys(d.bandwidth).length, resolution === 'Hour' ? 24 : 1, resolution);
      }
    });

    it('GET /api/analytics/tracking/streams/total (the untracked row has trackingId null)', async () => {
      const d = await conforms('get', '/api/analytics/tracking/streams/total', `/api/analytics/tracking/streams/total?streamNames=cam1&streamNames=none&startDate=${day(0)}&stopDate=${day(1)}`);
      assert.deepEqual(
        d.cam1.map((r: { trackingId: string | null }) => r.trackingId),
        [null, 'grp'],
      );
      assert.deepEqual(d.none, []);
    });

    it('GET /api/analytics/tracking/streams/series (Hour and Day)', async () => {
      for (const resolution of ['Hour', 'Day']) {
        const d = await conforms('get', '/api/analytics/tracking/streams/series', `/api/analytics/tracking/streams/series?streamNames=cam1&startDate=${day(0)}&stopDate=${day(1)}&resolution=${resolution}`);
        assert.equal(Object.keys(d.cam1).length, resolution === 'Hour' ? 24 : 1, resolution);
      }
    });

    it('GET /api/geo/account', async () => {
      await conforms('get', '/api/geo/account', '/api/geo/account');
    });

    it('POST /api/geo/account', async () => {
      assert.deepEqual(await conforms('post', '/api/geo/account', '/api/geo/account', { updateAllowedCountries: ['US'], updateDeniedCountries: [] }), {
        allowedCountries: ['US'],
        deniedCountries: [],
      });
    });

    it('GET /api/cluster', async () => {
      const d = await conforms('get', '/api/cluster', '/api/cluster');
      assert.deepEqual([d.defaultCluster, d.availableClusters.map((c: { id: string }) => c.id)], ['eu-1', ['eu-1', 'us-1']]);
    });

    it('PUT /api/cluster', async () => {
      assert.equal((await conforms('put', '/api/cluster', '/api/cluster', { defaultCluster: 'us-1' })).defaultCluster, 'us-1');
    });

    // SuccessAccountGeoCascade is not in the hosted document the other schemas were copied from: it
    // comes from the hosted Account API's own OpenAPI file (hosted-api-schemas.json says where).
    it('GET /api/account/geo_cascade', async () => {
      assert.deepEqual(await conforms('get', '/api/account/geo_cascade', '/api/account/geo_cascade'), { isEnabled: false, clusters: [] });
    });

    it('PUT /api/account/geo_cascade', async () => {
      assert.deepEqual(await conforms('put', '/api/account/geo_cascade', '/api/account/geo_cascade', { isEnabled: true, clusters: ['us-1', 'eu-1'] }), {
        isEnabled: true,
        clusters: ['us-1', 'eu-1'],
      });
    });

    it('GET /api/publish_token/{tokenId} after the account settings: effectiveSettings follow them, still in the hosted shape', async () => {
      const d = await conforms('get', '/api/publish_token/{tokenId}', `/api/publish_token/${ids.minimal}`);
      assert.deepEqual([d.effectiveSettings.originCluster, d.effectiveSettings.geoCascade], ['us-1', { isEnabled: true, clusters: ['us-1', 'eu-1'] }]);
    });

    /** `method url` answers 200 with an envelope `validate` accepts; returns data. */
    async function conformsTo(validate: ValidateFunction, method: 'get' | 'post', hostedPath: string, url: string, body?: unknown) {
      const r = body === undefined ? await send(method, url) : await request(t.app)[method](url).set({ ...auth(), 'content-type': 'application/json' }).send(body as string);
      assert.deepEqual([r.status, r.body?.status], [200, 'success'], `${method.toUpperCase()} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
      const valid = validate(r.body);
      assert.deepEqual(valid ? [] : describeErrors(validate.errors), [], `${method.toUpperCase()} ${url}; data: ${JSON.stringify(r.body.data)}`);
      const hostedSchema = responseValidator(method, hostedPath);
      assert.deepEqual(hostedSchema(r.body) ? [] : describeErrors(hostedSchema.errors), [], `${method.toUpperCase()} ${url} against the hosted schema`);
      return r.body.data;
    }
    const srsPublish = async (client: string, token: string, ip: string) => {
      const r = await request(t.app)
        .post('/hooks/srs')
        .send({ action: 'on_publish', server_id: 'srs1', client_id: client, ip, app: 'live', tcUrl: 'rtmp://host/live', stream: 'live1', param: `?token=${token}` });
      assert.equal(r.text, '{"code":0}');
      await t.services.lifecycle.idle();
    };

    it('GET /api/monitoring/streams, GET /api/monitoring/streams/{streamName}, POST /api/stream/stop and /stop/all', async () => {
      const live = (await send('post', '/api/publish_token', { label: 'live', streams: [{ streamName: 'live1' }] })).body.data as { token: string };
      assert.deepEqual(await conformsTo(STREAM_SCHEMAS.streams, 'get', '/api/monitoring/streams', '/api/monitoring/streams'), { pagination: { totalItems: 0, totalPages: 0, itemsOnPage: 10 }, data: [] });
      await srsPublish('p1', live.token, '203.0.113.7');
      const list = await conformsTo(STREAM_SCHEMAS.streams, 'get', '/api/monitoring/streams', '/api/monitoring/streams');
      assert.deepEqual(
        list.data.map((d: { streamName: string; viewerCount: number }) => [d.streamName, d.viewerCount]),
        [['live1', 0]],
      );
      assert.deepEqual(await conformsTo(STREAM_SCHEMAS.stream, 'get', '/api/monitoring/streams/{streamName}', '/api/monitoring/streams/live1'), list.data[0]);
      assert.deepEqual(await conformsTo(STREAM_SCHEMAS.stop, 'post', '/api/stream/stop', '/api/stream/stop', { streamId: `${acct.id}/live1` }), { stoppingLevel: 'Stream' });
      assert.deepEqual(await conformsTo(STREAM_SCHEMAS.stop, 'post', '/api/stream/stop', '/api/stream/stop', { streamId: 'live1' }), { stoppingLevel: 'None' });
      assert.deepEqual(await conformsTo(STREAM_SCHEMAS.stop, 'post', '/api/stream/stop/all', '/api/stream/stop/all', 'null'), { stoppingLevel: 'None' });
      await srsPublish('p2', live.token, '203.0.113.8'); // the stopped publisher's address is held
      assert.deepEqual(await conformsTo(STREAM_SCHEMAS.stop, 'post', '/api/stream/stop/all', '/api/stream/stop/all'), { stoppingLevel: 'Account' });
    });

    it('DELETE /api/webhooks/{webhookId}', async () => {
      await conforms('delete', '/api/webhooks/{webhookId}', `/api/webhooks/${ids.webhook}`);
    });

    it('DELETE /api/subscribe_token/{tokenId}', async () => {
      assert.equal(await conforms('delete', '/api/subscribe_token/{tokenId}', `/api/subscribe_token/${ids.subscribe}`), true);
    });

    it('DELETE /api/publish_token/{tokenId}', async () => {
      assert.equal(await conforms('delete', '/api/publish_token/{tokenId}', `/api/publish_token/${ids.publish}`), true);
    });
  });
}

describe('the hosted schema validators refuse what they must', () => {
  const webhook = {
    id: 1,
    url: 'https://example.com/h',
    secret: 'c2VjcmV0',
    isFeedHooks: true,
    isRecordingHooks: false,
    isThumbnailHooks: false,
    isTranscoderHooks: false,
    isMediaHooks: false,
    isViewerConnectionHooks: false,
  };
  const errors = (method: string, path: string, body: unknown) => {
    const v = responseValidator(method, path);
    return v(body) ? [] : describeErrors(v.errors);
  };

  it('a webhook record passes with its unset fields left out, and with the filter extension and disabled set', () => {
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: webhook }), []);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, filter: 'cam.*', disabled: { until: '2026-01-01T00:00:00Z', reason: 'r' } } }), []);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, disabled: { reason: 'r' } } }), []);
  });

  it('a field in neither the hosted schema nor the extensions fails, naming it', () => {
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, isClipHooks: false } }), [
      "/data must NOT have additional properties 'isClipHooks'",
    ]);
    assert.deepEqual(errors('delete', '/api/publish_token/{tokenId}', { status: 'success', data: true, extra: 1 }), ["/ must NOT have additional properties 'extra'"]);
  });

  it('a field that is always set fails when left out; null fails in a record, even where the hosted schema is nullable', () => {
    const { isFeedHooks: _left, ...withoutFeeds } = webhook;
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: withoutFeeds }), ["/data must have required property 'isFeedHooks'"]);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, url: null } }), ['/data/url must be string', '/data/url must NOT be valid']);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, disabled: null } }), ['/data/disabled must NOT be valid']);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, filter: null } }), ['/data/filter must be string']);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, disabled: { until: null, reason: 'r' } } })[0], '/data/disabled/until must NOT be valid');
  });

  it('formats are checked: date-time and int32', () => {
    const bad = errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, disabled: { until: 'tomorrow', reason: 'r' } } });
    assert.ok(bad.includes('/data/disabled/until must match format "date-time"'), bad.join('\n'));
    assert.deepEqual(errors('patch', '/api/publish_token/disable', { status: 'success', data: { successfulTokens: [1.5], failedTokens: [] } }), [
      '/data/successfulTokens/0 must be integer',
    ]);
  });

  it('the stream stop and monitoring schemas refuse a wrong type, an unknown field and a missing one', () => {
    const check = (v: ValidateFunction, body: unknown) => (v(body) ? [] : describeErrors(v.errors));
    assert.deepEqual(check(STREAM_SCHEMAS.stop, { status: 'success', data: { stoppingLevel: 'Stream' } }), []);
    assert.deepEqual(check(STREAM_SCHEMAS.stop, { status: 'success', data: { stoppingLevel: 'Everything' } }), ['/data/stoppingLevel must be equal to one of the allowed values']);
    assert.deepEqual(check(STREAM_SCHEMAS.stop, { status: 'success', data: { stoppingLevel: 'None', stopped: 0 } }), ["/data must NOT have additional properties 'stopped'"]);
    assert.deepEqual(check(STREAM_SCHEMAS.stream, { status: 'success', data: { streamId: 'a/b' } }).length > 5, true);
  });

  it('the cluster and geo cascade answers: a field outside ClusterModel, LocationModel or GeoCascadeModel2 fails, naming it', () => {
    const cluster = { id: 'eu-1', name: 'Frankfurt', rtmp: '', srt: '', location: { city: 'Frankfurt', region: null, country: null }, features: { transcoding: false } };
    assert.deepEqual(errors('get', '/api/cluster', { status: 'success', data: { defaultCluster: 'eu-1', availableClusters: [cluster] } }), []);
    assert.deepEqual(errors('get', '/api/cluster', { status: 'success', data: { defaultCluster: 'eu-1', availableClusters: [{ ...cluster, publishUrls: [] }] } }), [
      "/data/availableClusters/0 must NOT have additional properties 'publishUrls'",
    ]);
    assert.ok(
      errors('get', '/api/cluster', { status: 'success', data: { defaultCluster: 'eu-1', availableClusters: [{ ...cluster, location: { city: 'x', zip: '1' } }] } }).includes(
        "/data/availableClusters/0/location must NOT have additional properties 'zip'",
      ),
    );
    assert.deepEqual(errors('put', '/api/account/geo_cascade', { status: 'success', data: { isEnabled: true, clusters: ['all'] } }), []);
    assert.deepEqual(errors('get', '/api/account/geo_cascade', { status: 'success', data: { isEnabled: true, clusters: [], ipRulesOnRtmp: true } }), [
      "/data must NOT have additional properties 'ipRulesOnRtmp'",
    ]);
  });

  it('the tracking/streams rows admit a null trackingId and no streamName', () => {
    const row = { trackingId: null, standardStream: { bytesOut: 1, bytesIn: 0 }, restream: { bytesOut: 0, bytesIn: 0, duration: 0 }, geoCascade: { bytesOut: 0, bytesIn: 0 } };
    assert.deepEqual(errors('get', '/api/analytics/tracking/streams/total', { status: 'success', data: { cam1: [row] } }), []);
    assert.deepEqual(errors('get', '/api/analytics/tracking/streams/total', { status: 'success', data: { cam1: [{ ...row, streamName: 'cam1' }] } }), [
      "/data/cam1/0 must NOT have additional properties 'streamName'",
    ]);
  });

  it('the webhook test answer is read as the envelope the clients unwrap', () => {
    assert.deepEqual(errors('post', '/api/webhooks/test/{webhookType}', { status: 'success', data: true }), []);
    assert.deepEqual(errors('post', '/api/webhooks/test/{webhookType}', true), ['/ must be object']);
  });
});

hostedSchemaSuite(sqliteFactory());
hostedSchemaSuite(redisFactory());
