// The official Python REST client's requests (test/compat/python-fixtures.ts), replayed byte for
// byte against a Streamgate app on a real port: every call must answer as the hosted platform does
// (status 200, the success envelope, the fields the client reads), and change the stored state the
// way the call says. The calls run in the client's order; ids learned from one feed the next.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import { pythonCalls, type PythonCall } from './python-fixtures.js';

const HEX64 = /^[0-9a-f]{64}$/;
const BASE64_32 = /^[A-Za-z0-9+/]{43}=$/;

interface Answer {
  status: number;
  /** x-streamgate-ignored-fields, or null when absent. */
  ignored: string | null;
  body: any;
}

describe('the official Python client (dolbyio_rest_apis 5.0.0) against Streamgate', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  let server: Listening;
  const vars: Record<string, string> = {};

  before(async () => {
    await factory.setup();
    // The client's webhook URL is on loopback.
    // Two clusters, so the client's cluster update has one to move to.
    t = await testApp(await factory.make(), {
      webhooks: { allowPrivateTargets: true },
      director: {
        clusters: [
          { id: 'eu-1', name: 'Frankfurt', publishUrls: ['wss://eu/{streamName}'], subscribeUrls: ['wss://eu/{streamName}'], location: { city: 'Frankfurt', country: 'Germany' } },
          { id: 'us-1', name: 'Ashburn', publishUrls: ['wss://us/{streamName}'], subscribeUrls: ['wss://us/{streamName}'], rtmpPublishUrls: ['rtmp://ingest.us.example/live/{streamName}'] },
        ],
      },
    });
    const acct = await t.account('python');
    vars.apiSecret = acct.secret;
    vars.accountId = acct.id;
    server = await listen(t.app);
  });
  after(async () => {
    await server.close();
    await factory.teardown();
  });

  const fill = (s: string) =>
    s.replace(/\{\{(\w+)\}\}/g, (_m, k: string) => {
      const v = vars[k];
      if (v === undefined) throw new Error(`no value yet for {{${k}}}: the call that yields it failed`);
      return v;
    });

  async function send(c: PythonCall): Promise<Answer> {
    const headers = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, fill(v)]));
    const url = `${server.base}${fill(c.path)}${c.query ? `?${fill(c.query)}` : ''}`;
    const r = await fetch(url, { method: c.method, headers, body: c.body === undefined ? undefined : fill(c.body) });
    const text = await r.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* kept as text, so a failed assertion shows it */
    }
    return { status: r.status, ignored: r.headers.get('x-streamgate-ignored-fields'), body };
  }

  const call = (name: string) => {
    const c = pythonCalls.find((x) => x.name === name);
    if (!c) throw new Error(`no fixture named ${name}`);
    return send(c);
  };
  /** GET with the client's headers, to check stored state after a call. */
  const read = (path: string) => send({ name: 'read', method: 'GET', path, query: '', headers: pythonCalls.find((c) => c.name === 'publish_token.read')!.headers });

  /** 200 with the success envelope; returns data. */
  const ok = (a: Answer) => {
    assert.deepEqual([a.status, a.body?.status], [200, 'success'], JSON.stringify(a.body));
    return a.body.data;
  };
  const remember = (key: string, a: Answer) => {
    const id = a.body?.data?.id;
    if (typeof id === 'number') vars[key] = String(id);
  };

  const records: Record<string, any> = {};

  it('every replayed call is one of the fixtures, and every endpoint they call is served (none marked later)', () => {
    assert.deepEqual(
      pythonCalls.filter((c) => c.later).map((c) => `${c.method} ${c.path}`),
      [],
    );
  });

  it('publish_token.create: 200 with every field the client sent (expiresOn, the hosted flags) stored and returned, nothing ignored', async () => {
    const a = await call('publish_token.create');
    remember('publishTokenId', a);
    records.publish = a.body?.data;
    const d = ok(a);
    assert.equal(a.ignored, null);
    assert.match(d.token, HEX64);
    assert.equal(Date.parse(d.expiresOn), Date.parse('2090-01-01T00:00:00Z'));
    assert.deepEqual(
      {
        label: d.label,
        isActive: d.isActive,
        streams: d.streams,
        allowedOrigins: d.allowedOrigins,
        allowedIpAddresses: d.allowedIpAddresses,
        allowedCountries: d.allowedCountries,
        deniedCountries: d.deniedCountries,
        subscribeRequiresAuth: d.subscribeRequiresAuth,
        record: d.record,
        multisource: d.multisource,
        enableThumbnails: d.enableThumbnails,
        displaySrtPassphrase: d.displaySrtPassphrase,
        lowLatencyRtmp: d.lowLatencyRtmp,
        clip: d.clip,
        restream: d.restream,
      },
      {
        label: 'py-studio',
        isActive: true,
        streams: [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'cam[0-9]+', isRegex: true },
        ],
        allowedOrigins: ['*.example.com'],
        allowedIpAddresses: [],
        allowedCountries: ['US', 'CA'],
        deniedCountries: [],
        subscribeRequiresAuth: false,
        record: false,
        multisource: false,
        enableThumbnails: false,
        displaySrtPassphrase: false,
        lowLatencyRtmp: true,
        clip: false,
        restream: undefined, // none: left out (docs/compatibility.md#records), the client's model defaults it to []
      },
    );
  });

  it('publish_token.create with the defaults only: 200, no expiry', async () => {
    const a = await call('publish_token.create (defaults only)');
    remember('minimalTokenId', a);
    const d = ok(a);
    assert.equal(a.ignored, null);
    assert.deepEqual([d.label, d.streams, d.isActive, d.expiresOn ?? null], ['py-minimal', [{ streamName: 'backstage', isRegex: false }], true, null]);
  });

  it('publish_token.read: 200 with the record the create answered', async () => {
    assert.deepEqual(ok(await call('publish_token.read')), records.publish);
  });

  it('publish_token.update (removeTokenStreams as objects, clip: false always sent): 200, the change stored', async () => {
    const a = await call('publish_token.update');
    const d = ok(a);
    assert.equal(a.ignored, null);
    assert.deepEqual(
      [d.id, d.token, d.label, d.streams, d.allowedOrigins, d.subscribeRequiresAuth, d.clip],
      [
        records.publish.id,
        records.publish.token,
        'py-studio-2',
        [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'backup', isRegex: false },
        ],
        ['studio.example.com'],
        true,
        false,
      ],
    );
    assert.deepEqual(ok(await read(`/api/publish_token/${vars.publishTokenId}`)), d);
  });

  it('publish_token.list_tokens (isDescending=False): 200, sorted by name', async () => {
    const d = ok(await call('publish_token.list_tokens'));
    assert.deepEqual(
      d.map((x: { id: number; label: string }) => [x.id, x.label]),
      [
        [Number(vars.minimalTokenId), 'py-minimal'],
        [Number(vars.publishTokenId), 'py-studio-2'],
      ],
    );
  });

  it('publish_token.list_tokens (sortBy=AddedOn, isDescending=True): 200, newest first', async () => {
    const d = ok(await call('publish_token.list_tokens (descending)'));
    assert.deepEqual(
      d.map((x: { id: number }) => x.id),
      [Number(vars.minimalTokenId), Number(vars.publishTokenId)],
    );
  });

  it('publish_token.get_active_publish_token_id (streamId=<account>/cam1, "/" unescaped): 200 {tokenIds: []}', async () => {
    assert.deepEqual(ok(await call('publish_token.get_active_publish_token_id')), { tokenIds: [] });
  });

  it('publish_token.get_all_active_publish_token_id: 200 {tokenIds: []}', async () => {
    assert.deepEqual(ok(await call('publish_token.get_all_active_publish_token_id')), { tokenIds: [] });
  });

  it('publish_token.disable: 200, the token is stored inactive', async () => {
    assert.deepEqual(ok(await call('publish_token.disable')), { successfulTokens: [Number(vars.minimalTokenId)], failedTokens: [] });
    assert.equal(ok(await read(`/api/publish_token/${vars.minimalTokenId}`)).isActive, false);
  });

  it('subscribe_token.create (tracking, allowedIpAddresses): 200, nothing ignored', async () => {
    const a = await call('subscribe_token.create');
    remember('subscribeTokenId', a);
    records.subscribe = a.body?.data;
    const d = ok(a);
    assert.equal(a.ignored, null);
    assert.match(d.token, HEX64);
    assert.deepEqual(
      [d.label, d.isActive, d.streams, d.allowedIpAddresses, d.allowedOrigins, d.allowedCountries, d.deniedCountries, d.tracking],
      [
        'py-viewers',
        true,
        [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'vip-.*', isRegex: true },
        ],
        ['203.0.113.0/24'],
        [],
        [],
        [],
        { trackingId: 'group-a' },
      ],
    );
  });

  it('subscribe_token.read: 200 with the record the create answered', async () => {
    assert.deepEqual(ok(await call('subscribe_token.read')), records.subscribe);
  });

  it('subscribe_token.update: 200, streams, IP list and countries changed, tracking kept', async () => {
    const a = await call('subscribe_token.update');
    const d = ok(a);
    assert.equal(a.ignored, null);
    assert.deepEqual(
      [d.token, d.label, d.streams, d.allowedIpAddresses, d.deniedCountries, d.tracking],
      [
        records.subscribe.token,
        'py-viewers-2',
        [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'cam2', isRegex: false },
        ],
        [],
        ['FR'],
        { trackingId: 'group-a' },
      ],
    );
    assert.deepEqual(ok(await read(`/api/subscribe_token/${vars.subscribeTokenId}`)), d);
  });

  it('subscribe_token.list_tokens: 200 with the one token', async () => {
    const d = ok(await call('subscribe_token.list_tokens'));
    assert.deepEqual(
      d.map((x: { id: number; label: string }) => [x.id, x.label]),
      [[Number(vars.subscribeTokenId), 'py-viewers-2']],
    );
  });

  it('webhooks.create: 200 with a signing secret; isClipHooks (in no hosted schema) ignored and named', async () => {
    const a = await call('webhooks.create');
    remember('webhookId', a);
    records.webhook = a.body?.data;
    const d = ok(a);
    assert.equal(a.ignored, 'isClipHooks');
    assert.match(d.secret, BASE64_32);
    assert.deepEqual(
      [d.url, d.isFeedHooks, d.isRecordingHooks, d.isThumbnailHooks, d.isTranscoderHooks],
      ['https://127.0.0.1:8443/streamgate-hook', true, false, false, false],
    );
  });

  it('webhooks.read: 200 with the record the create answered', async () => {
    assert.deepEqual(ok(await call('webhooks.read')), records.webhook);
  });

  it('webhooks.update (refreshSecret, isThumbnailHooks): 200, a new secret, the flag stored', async () => {
    const a = await call('webhooks.update');
    const prior = records.webhook;
    records.webhook = a.body?.data;
    const d = ok(a);
    assert.equal(a.ignored, null);
    assert.match(d.secret, BASE64_32);
    assert.notEqual(d.secret, prior.secret);
    assert.deepEqual({ ...d, secret: '' }, { ...prior, isThumbnailHooks: true, secret: '' });
    assert.deepEqual(ok(await read(`/api/webhooks/${vars.webhookId}`)), d);
  });

  it('webhooks.list_webhooks (startingId, item_count, isDescending=False): 200 with the webhook', async () => {
    assert.deepEqual(ok(await call('webhooks.list_webhooks')), [records.webhook]);
  });

  it('account.read_geo_restrictions: 200 with both lists', async () => {
    assert.deepEqual(ok(await call('account.read_geo_restrictions')), { allowedCountries: [], deniedCountries: [] });
  });

  it('account.update_geo_restrictions: its allowedCountries/deniedCountries are taken as the hosted update* names; 200 with the new record', async () => {
    const d = ok(await call('account.update_geo_restrictions'));
    assert.deepEqual(d, { allowedCountries: ['US'], deniedCountries: [] });
    assert.deepEqual(ok(await call('account.read_geo_restrictions')), d);
  });

  // What the client's ClusterResponse.from_dict reads: defaultCluster, and per cluster id, name,
  // rtmp, srt, location {city, region, country} and features {transcoding}, none optional.
  const CLUSTERS = [
    { id: 'eu-1', name: 'Frankfurt', rtmp: '', srt: '', location: { city: 'Frankfurt', region: null, country: 'Germany' }, features: { transcoding: false } },
    { id: 'us-1', name: 'Ashburn', rtmp: 'ingest.us.example', srt: '', location: { city: null, region: null, country: null }, features: { transcoding: false } },
  ];

  it('cluster.read: 200 with the default cluster (the first, none set yet) and every field the client reads of each cluster', async () => {
    assert.deepEqual(ok(await call('cluster.read')), { defaultCluster: 'eu-1', availableClusters: CLUSTERS });
  });

  it('cluster.update: 200, the new default stored and answered with the clusters', async () => {
    const a = await call('cluster.update');
    assert.equal(a.ignored, null);
    assert.deepEqual(ok(a), { defaultCluster: 'us-1', availableClusters: CLUSTERS });
    assert.equal((await t.services.store.getAccount(vars.accountId))?.defaultCluster, 'us-1');
    assert.deepEqual(ok(await call('cluster.read')).defaultCluster, 'us-1');
  });

  it('account.read_geo_cascade: 200 {isEnabled: false, clusters: []} before any is set', async () => {
    assert.deepEqual(ok(await call('account.read_geo_cascade')), { isEnabled: false, clusters: [] });
  });

  it('account.update_geo_cascade: 200, stored and answered as sent', async () => {
    const a = await call('account.update_geo_cascade');
    assert.equal(a.ignored, null);
    assert.deepEqual(ok(a), { isEnabled: true, clusters: ['us-1', 'eu-1'] });
    assert.deepEqual(ok(await call('account.read_geo_cascade')), { isEnabled: true, clusters: ['us-1', 'eu-1'] });
    // the publish token left without one follows the account's setting and default cluster
    const rec = ok(await read(`/api/publish_token/${vars.publishTokenId}`));
    assert.deepEqual([rec.geoCascade, rec.effectiveSettings.geoCascade, rec.effectiveSettings.originCluster], [undefined, { isEnabled: true, clusters: ['us-1', 'eu-1'] }, 'us-1']);
  });

  it('account.update_geo_cascade with the model defaults (isEnabled false, clusters []): 200, disabled', async () => {
    assert.deepEqual(ok(await call('account.update_geo_cascade (defaults)')), { isEnabled: false, clusters: [] });
    assert.deepEqual((await t.services.store.getAccount(vars.accountId))?.geoCascade, { isEnabled: false, clusters: [] });
  });

  it('webhooks.delete: 200 with the deleted webhook; it is gone', async () => {
    assert.deepEqual(ok(await call('webhooks.delete')), records.webhook);
    assert.equal((await read(`/api/webhooks/${vars.webhookId}`)).status, 404);
  });

  it('subscribe_token.delete: 200 true; it is gone', async () => {
    assert.equal(ok(await call('subscribe_token.delete')), true);
    assert.equal((await read(`/api/subscribe_token/${vars.subscribeTokenId}`)).status, 404);
  });

  it('publish_token.delete: 200 true; it is gone', async () => {
    assert.equal(ok(await call('publish_token.delete')), true);
    assert.equal((await read(`/api/publish_token/${vars.publishTokenId}`)).status, 404);
  });

  /** Publishes `name` through SRS with a new publish token; the registry id of its session. */
  const publishLive = async (name: string, client: string): Promise<string> => {
    const tok = ok(await send({ ...pythonCalls.find((c) => c.name === 'publish_token.create (defaults only)')!, body: JSON.stringify({ label: `live-${name}`, streams: [{ streamName: name }] }) }));
    const r = await fetch(`${server.base}/hooks/srs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'on_publish', server_id: 'srs1', client_id: client, ip: '203.0.113.7', app: 'live', stream: name, param: `?token=${tok.token}` }),
    });
    assert.deepEqual([r.status, await r.text()], [200, '{"code":0}']);
    await t.services.lifecycle.idle();
    const live = ok(await read(`/api/sessions?streamId=${name}&direction=publish`));
    assert.equal(live.data.length, 1);
    return live.data[0].id as string;
  };

  it('stream.stop (streamId <account>/cam1): 200 {stoppingLevel: "Stream"}, the live publisher of cam1 ended', async () => {
    const id = await publishLive('cam1', 'p1');
    const other = await publishLive('cam2', 'p2');
    const a = await call('stream.stop');
    assert.equal(a.ignored, null);
    assert.deepEqual(ok(a), { stoppingLevel: 'Stream' });
    assert.equal(ok(await read(`/api/sessions/${id}`)).endedReason, 'stopped');
    assert.equal(ok(await read(`/api/sessions/${other}`)).endedReason, null, 'another stream is untouched');
    assert.deepEqual(ok(await call('stream.stop')), { stoppingLevel: 'None' }, 'nothing left to stop');
  });

  it('stream.stop_all (body: JSON null): 200 {stoppingLevel: "Account"}, every live publisher ended', async () => {
    const a = await call('stream.stop_all');
    assert.equal(a.ignored, null);
    assert.deepEqual(ok(a), { stoppingLevel: 'Account' });
    assert.equal(ok(await read('/api/sessions?direction=publish')).pagination.totalItems, 0);
    assert.deepEqual(ok(await call('stream.stop_all')), { stoppingLevel: 'None' });
  });
});
