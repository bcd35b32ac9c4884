// Every management endpoint that has a hosted response schema answers 200 with an envelope that
// validates against that schema (test/compat/hosted-schemas.ts): no field the hosted schema lacks
// except Streamgate's documented extensions, every field of a record present, types as the
// hosted API sends them. On SQLite and on a Redis this test starts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { sqliteFactory, redisFactory, type StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { describeErrors, responseValidator } from './hosted-schemas.js';

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
      t = await testApp(await factory.make(), { webhooks: { allowPrivateTargets: true, caFile: rx.caFile } });
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

    it('usage for the tracked token is counted (the analytics below have a row to show)', async () => {
      const r = await request(t.app).post('/hooks/usage').send({ tokenId: ids.subscribe, streamName: 'cam1', bytesOut: 1000, bytesIn: 10 });
      assert.deepEqual([r.status, r.body], [200, { counted: true }]);
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

    it('GET /api/geo/account', async () => {
      await conforms('get', '/api/geo/account', '/api/geo/account');
    });

    it('POST /api/geo/account', async () => {
      assert.deepEqual(await conforms('post', '/api/geo/account', '/api/geo/account', { updateAllowedCountries: ['US'], updateDeniedCountries: [] }), {
        allowedCountries: ['US'],
        deniedCountries: [],
      });
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
    disabled: null,
  };
  const errors = (method: string, path: string, body: unknown) => {
    const v = responseValidator(method, path);
    return v(body) ? [] : describeErrors(v.errors);
  };

  it('a complete webhook record passes, with the filter extension or without', () => {
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: webhook }), []);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, filter: 'cam.*', disabled: { until: '2026-01-01T00:00:00Z', reason: null } } }), []);
  });

  it('a field in neither the hosted schema nor the extensions fails, naming it', () => {
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, isClipHooks: false } }), [
      "/data must NOT have additional properties 'isClipHooks'",
    ]);
    assert.deepEqual(errors('delete', '/api/publish_token/{tokenId}', { status: 'success', data: true, extra: 1 }), ["/ must NOT have additional properties 'extra'"]);
  });

  it('a record field left out fails; null passes only where the hosted schema is nullable', () => {
    const { disabled: _left, ...withoutDisabled } = webhook;
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: withoutDisabled }), ["/data must have required property 'disabled'"]);
    assert.deepEqual(errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, url: null } }), ['/data/url must be string']);
  });

  it('formats are checked: date-time and int32', () => {
    const bad = errors('get', '/api/webhooks/{webhookId}', { status: 'success', data: { ...webhook, disabled: { until: 'tomorrow', reason: null } } });
    assert.ok(bad.includes('/data/disabled/until must match format "date-time"'), bad.join('\n'));
    assert.deepEqual(errors('patch', '/api/publish_token/disable', { status: 'success', data: { successfulTokens: [1.5], failedTokens: [] } }), [
      '/data/successfulTokens/0 must be integer',
    ]);
  });

  it('the webhook test answer is read as the envelope the clients unwrap', () => {
    assert.deepEqual(errors('post', '/api/webhooks/test/{webhookType}', { status: 'success', data: true }), []);
    assert.deepEqual(errors('post', '/api/webhooks/test/{webhookType}', true), ['/ must be object']);
  });
});

hostedSchemaSuite(sqliteFactory());
hostedSchemaSuite(redisFactory());
