// Every token and webhook record Streamgate answers, decoded with the official Python client's
// models (test/compat/python-models.ts, ported from dolbyio_rest_apis 5.0.0) the way the client
// decodes them: no record may make it warn (a null in a field its model does not declare Optional)
// or fail (a field it requires left out). Publish and subscribe tokens with every optional field
// unset and with every field set, as create, read, list, list_by_name, list_by_cluster, v1 and v2
// update answer them; webhooks enabled, filtered and disabled.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import {
  ActivePublishToken,
  DecodeError,
  DisablePublishTokenResponse,
  PublishToken,
  SubscribeToken,
  Webhook,
  fromDict,
  type PyModel,
} from './python-models.js';

/** The paths of every null in `v` (a record answers none). */
function nullsIn(v: unknown, at = ''): string[] {
  if (v === null) return [at || '/'];
  if (Array.isArray(v)) return v.flatMap((x, i) => nullsIn(x, `${at}/${i}`));
  if (typeof v === 'object') return Object.entries(v as object).flatMap(([k, x]) => nullsIn(x, `${at}/${k}`));
  return [];
}

/** Decodes `data` as the client does; asserts no warning and no null; returns the decoded value. */
function decodes(m: PyModel, data: unknown, what: string): Record<string, unknown> {
  let out: ReturnType<typeof fromDict>;
  try {
    out = fromDict(m, data);
  } catch (e) {
    assert.fail(`${what}: ${m.name}.from_dict fails: ${(e as Error).message}; data: ${JSON.stringify(data)}`);
  }
  assert.deepEqual(out.warnings, [], `${what}: ${m.name}.from_dict warns; data: ${JSON.stringify(data)}`);
  assert.deepEqual(nullsIn(data), [], `${what}: nulls in the record`);
  return out.value;
}

describe('the ported Python models decode as dataclasses_json does', () => {
  const unsetAsNull = {
    id: 1,
    label: 'l',
    token: 't',
    addedOn: '2026-01-01T00:00:00.000Z',
    expiresOn: null,
    isActive: true,
    streams: [{ streamName: 'cam1', isRegex: false }],
    bindIpsOnUsage: null,
    srtPassphrase: null,
    geoCascade: null,
    restream: null,
    adminSettings: null,
    priority: null,
  };

  it("a null in a field the model does not declare Optional warns as the client does (srtPassphrase, restream); Optional ones and unknown keys don't", () => {
    assert.deepEqual(fromDict(PublishToken, unsetAsNull).warnings, [
      "'NoneType' object value of non-optional type srt_passphrase detected when decoding PublishToken.",
      "'NoneType' object value of non-optional type restream detected when decoding PublishToken.",
    ]);
  });

  it('a field left out takes its default: restream [], srt_passphrase False, the Optional ones None', () => {
    const { value, warnings } = fromDict(PublishToken, { id: 1, streams: [{ streamName: 'cam1' }] });
    assert.deepEqual(warnings, []);
    assert.deepEqual([value.restream, value.srt_passphrase, value.expires_on, value.geo_cascade, value.streams], [[], false, null, null, [{ stream_name: 'cam1', is_regex: false }]]);
  });

  it('nested models decode too: a null in a nested non-Optional field warns, a required nested field left out fails', () => {
    assert.deepEqual(fromDict(PublishToken, { geoCascade: { isEnabled: null, clusters: [] } }).warnings, [
      "'NoneType' object value of non-optional type is_enabled detected when decoding TokenGeoCascade.",
    ]);
    assert.deepEqual(fromDict(SubscribeToken, { tracking: { trackingId: null } }).warnings, [
      "'NoneType' object value of non-optional type tracking_id detected when decoding SubscribeTokenTracking.",
    ]);
    assert.throws(() => fromDict(PublishToken, { restream: [{ key: 'key-12345' }] }), (e: Error) => e instanceof DecodeError && e.message === "KeyError: 'url' (missing from PublishTokenRestream)");
    assert.throws(() => fromDict(PublishToken, { streams: [{ isRegex: true }] }), /KeyError: 'stream_name'/);
    assert.throws(() => fromDict(ActivePublishToken, {}), /KeyError: 'token_ids'/);
  });
});

describe('every token and webhook record Streamgate answers decodes with the Python client models, without a warning', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  let secret: string;
  let accountId: string;
  const api = () => {
    const auth = { authorization: `Bearer ${secret}` };
    const ok = async (what: string, r: request.Test) => {
      const res = await r;
      assert.deepEqual([res.status, res.body?.status], [200, 'success'], `${what}: ${JSON.stringify(res.body)}`);
      return res.body.data;
    };
    return {
      get: (p: string) => ok(`GET ${p}`, request(t.app).get(p).set(auth)),
      post: (p: string, body: object) => ok(`POST ${p}`, request(t.app).post(p).set(auth).send(body)),
      put: (p: string, body: object) => ok(`PUT ${p}`, request(t.app).put(p).set(auth).send(body)),
      patch: (p: string, body: object) => ok(`PATCH ${p}`, request(t.app).patch(p).set(auth).send(body)),
      del: (p: string) => ok(`DELETE ${p}`, request(t.app).delete(p).set(auth)),
    };
  };

  before(async () => {
    await factory.setup();
    t = await testApp(await factory.make(), { webhooks: { allowPrivateTargets: true } });
    ({ id: accountId, secret } = await t.account('python-models'));
  });
  after(() => factory.teardown());

  /** Every publish-token field set; bindIpsOnUsage and allowedIpAddresses exclude each other, so does a second token (`bound`). */
  const fullPublish = {
    label: 'full',
    streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }],
    expiresOn: '2999-12-31T23:59:59Z',
    allowedOrigins: ['*.example.com'],
    allowedIpAddresses: ['203.0.113.0/24'],
    allowedCountries: ['US'],
    originCluster: 'fra-1',
    subscribeRequiresAuth: true,
    record: true,
    clip: true,
    multisource: false,
    lowLatencyRtmp: false,
    enableThumbnails: true,
    displaySrtPassphrase: true,
    drm: true,
    priority: 7,
    geoCascade: { isEnabled: true, clusters: ['fra-1', 'iad-1'] },
    restream: [
      { url: 'rtmp://a.example/live', key: 'key-12345', label: 'a' },
      { url: 'rtmp://b.example/live', key: 'key-67890' },
    ],
    maxConcurrentSessions: 2,
    maxUses: 10,
  };
  const bound = { label: 'bound', streams: [{ streamName: 'cam2' }], expires: 3600, bindIpsOnUsage: 2, deniedCountries: ['FR'] };

  it('publish tokens: create, read, list, list_by_name, list_by_cluster, updates (v1 and v2, setting and unsetting), active, disable', async () => {
    const minimal = await api().post('/api/publish_token', { label: 'minimal', streams: [{ streamName: 'cam0' }] });
    const m = decodes(PublishToken, minimal, 'create (every optional field unset)');
    assert.deepEqual([m.expires_on, m.bind_ips_on_usage, m.geo_cascade, m.restream, m.srt_passphrase], [null, null, null, [], false], 'the unset fields take the model defaults');
    decodes(PublishToken, await api().get(`/api/publish_token/${minimal.id}`), 'read (unset)');

    const full = await api().post('/api/publish_token', fullPublish);
    const f = decodes(PublishToken, full, 'create (every field set)');
    assert.deepEqual(
      [f.expires_on, f.priority, f.geo_cascade, f.restream, f.origin_cluster, f.subscribe_requires_auth, f.multisource],
      [
        '2999-12-31T23:59:59.000Z',
        undefined, // PublishToken has no priority field: the key is ignored
        { is_enabled: true, clusters: ['fra-1', 'iad-1'] },
        [
          { url: 'rtmp://a.example/live', key: 'key-12345' },
          { url: 'rtmp://b.example/live', key: 'key-67890' },
        ],
        'fra-1',
        true,
        false,
      ],
    );
    decodes(PublishToken, await api().get(`/api/publish_token/${full.id}`), 'read (set)');
    const b = await api().post('/api/publish_token', bound);
    assert.equal(decodes(PublishToken, b, 'create (bound on usage)').bind_ips_on_usage, 2);

    const lists = [
      '/api/publish_token/list?page=1&itemsOnPage=25',
      '/api/publish_token/list_by_name?name=cam&filterBy=StreamName&page=1&itemsOnPage=25',
      '/api/publish_token/list_by_cluster?cluster=auto&page=1&itemsOnPage=25',
      '/api/publish_token/list_by_cluster?cluster=fra-1&page=1&itemsOnPage=25',
    ];
    let listed = 0;
    for (const path of lists) {
      for (const rec of await api().get(path)) {
        decodes(PublishToken, rec, path);
        listed++;
      }
    }
    assert.equal(listed, 3 + 3 + 2 + 1);

    const v1 = await api().put(`/api/publish_token/${minimal.id}`, {
      updateGeoCascade: { isEnabled: false, clusters: [] },
      updateRestream: [{ url: 'rtmp://c.example/live', key: 'key-abcde' }],
      updateBindIpsOnUsage: 1,
      priority: 3,
      expires: 60,
    });
    assert.deepEqual(decodes(PublishToken, v1, 'update v1 (setting)').restream, [{ url: 'rtmp://c.example/live', key: 'key-abcde' }]);
    const keyOnly = await api().put(`/api/v2/publish_token/${full.id}`, { restream: [{ key: 'key-67890', label: 'b' }] });
    assert.deepEqual(decodes(PublishToken, keyOnly, 'update v2 (a target given by its key only)').restream, [{ url: 'rtmp://b.example/live', key: 'key-67890' }]);
    const v2 = await api().put(`/api/v2/publish_token/${full.id}`, { restream: [], expires: null, allowedIpAddresses: [], bindIpsOnUsage: 3 });
    const u = decodes(PublishToken, v2, 'update v2 (unsetting)');
    assert.deepEqual([u.restream, u.expires_on, u.bind_ips_on_usage], [[], null, 3]);
    const unbound = await api().put(`/api/v2/publish_token/${full.id}`, { bindIpsOnUsage: 0, originCluster: '' });
    assert.equal(decodes(PublishToken, unbound, 'update v2 (binding off)').bind_ips_on_usage, null);

    decodes(ActivePublishToken, await api().get('/api/publish_token/active/all'), 'active/all');
    decodes(ActivePublishToken, await api().get('/api/publish_token/active?streamId=x/cam1'), 'active');
    decodes(DisablePublishTokenResponse, await api().patch('/api/publish_token/disable', { tokenIds: [minimal.id, 999999] }), 'disable');
    decodes(PublishToken, await api().get(`/api/publish_token/${minimal.id}`), 'read (disabled)');
  });

  it('subscribe tokens: create, read, list, list_by_name, updates (v1 and v2, setting and unsetting)', async () => {
    const minimal = await api().post('/api/subscribe_token', { label: 'minimal', streams: [{ streamName: 'cam0' }] });
    assert.equal(decodes(SubscribeToken, minimal, 'create (every optional field unset)').tracking, null);
    decodes(SubscribeToken, await api().get(`/api/subscribe_token/${minimal.id}`), 'read (unset)');
    const full = await api().post('/api/subscribe_token', {
      label: 'full',
      streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }],
      expiresOn: '2999-12-31T23:59:59Z',
      allowedOrigins: ['*.example.com'],
      bindIpsOnUsage: 2,
      deniedCountries: ['FR'],
      originCluster: 'fra-1',
      tracking: { trackingId: 'group-1' },
      maxConcurrentSessions: 1,
      maxUses: 5,
    });
    const f = decodes(SubscribeToken, full, 'create (every field set)');
    assert.deepEqual([f.bind_ips_on_usage, f.tracking, f.denied_countries], [2, { tracking_id: 'group-1' }, ['FR']]);
    decodes(SubscribeToken, await api().get(`/api/subscribe_token/${full.id}`), 'read (set)');
    const ips = await api().post('/api/subscribe_token', { label: 'ips', streams: [{ streamName: 'cam2' }], allowedIpAddresses: ['203.0.113.9'], allowedCountries: ['US'], expires: 60 });
    decodes(SubscribeToken, ips, 'create (addresses, countries, expires)');

    let listed = 0;
    for (const path of ['/api/subscribe_token/list?page=1&itemsOnPage=25', '/api/subscribe_token/list_by_name?name=cam&filterBy=StreamName&page=1&itemsOnPage=25']) {
      for (const rec of await api().get(path)) {
        decodes(SubscribeToken, rec, path);
        listed++;
      }
    }
    assert.equal(listed, 3 + 3);

    decodes(SubscribeToken, await api().put(`/api/subscribe_token/${minimal.id}`, { tracking: { trackingId: 'g2' }, updateBindIpsOnUsage: 1, expires: 60 }), 'update v1 (setting)');
    const cleared = await api().put(`/api/v2/subscribe_token/${full.id}`, { tracking: null, expires: null, bindIpsOnUsage: 0 });
    const c = decodes(SubscribeToken, cleared, 'update v2 (unsetting)');
    assert.deepEqual([c.tracking, c.expires_on, c.bind_ips_on_usage], [null, null, null]);
    decodes(SubscribeToken, await api().put(`/api/subscribe_token/${ips.id}`, { tracking: { trackingId: null } }), 'update v1 (a null trackingId)');
  });

  it('webhooks: create, read, list, update, disabled, delete', async () => {
    const plain = await api().post('/api/webhooks', { url: 'https://127.0.0.1:9/hook', isFeedHooks: true });
    assert.equal(decodes(Webhook, plain, 'create (no filter)').is_feed_hooks, true);
    const filtered = await api().post('/api/webhooks', { url: 'https://127.0.0.1:9/other', isFeedHooks: false, isThumbnailHooks: true, filter: 'cam.*' });
    decodes(Webhook, filtered, 'create (filter)');
    decodes(Webhook, await api().get(`/api/webhooks/${filtered.id}`), 'read');
    decodes(Webhook, await api().put(`/api/webhooks/${filtered.id}`, { filter: null, refreshSecret: true }), 'update (filter removed)');
    await t.services.store.updateWebhook(accountId, plain.id, (cur) => ({ ...cur, failures: 3, disabled: { until: null, reason: '3 consecutive failed deliveries' } }));
    const disabled = await api().get(`/api/webhooks/${plain.id}`);
    assert.deepEqual(disabled.disabled, { reason: '3 consecutive failed deliveries' });
    decodes(Webhook, disabled, 'read (disabled until re-enabled)');
    const listed = await api().get('/api/webhooks/list?itemCount=10');
    assert.equal(listed.length, 2);
    for (const w of listed) decodes(Webhook, w, 'list');
    decodes(Webhook, await api().del(`/api/webhooks/${plain.id}`), 'delete');
  });
});
