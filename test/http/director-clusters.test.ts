// Clusters (docs/api.md#clusters): GET/PUT /api/cluster and /api/account/geo_cascade in the hosted
// shapes, the account default stored and applied, and the director answering with the URLs of the
// cluster a grant falls in: the token's originCluster, else the account's default cluster, else the
// first configured one; with none configured, the implicit `auto` made of the director's own URLs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { SignJWT } from 'jose';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { loadConfig } from '../../src/config/load.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';

const CLUSTERS = [
  {
    id: 'eu-1',
    name: 'Frankfurt',
    publishUrls: ['wss://eu.media.example/pub/{accountId}/{streamName}'],
    subscribeUrls: ['wss://eu.media.example/sub/{accountId}/{streamName}', 'wss://eu2.media.example/sub/{streamName}'],
    location: { city: 'Frankfurt', country: 'Germany' },
  },
  {
    id: 'US-1',
    publishUrls: ['wss://us.media.example/pub/{streamName}'],
    subscribeUrls: ['wss://us.media.example/sub/{streamName}'],
    rtmpPublishUrls: ['rtmp://ingest.us.example:1935/live/{streamName}'],
    srt: 'srt.us.example',
  },
];

interface App {
  t: TestApp;
  acct: { id: string; secret: string };
  other: { id: string; secret: string };
  http: Listening;
}

async function start(director: Record<string, unknown>): Promise<App> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-clusters-'));
  const t = await testApp(new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL' }), { director });
  return { t, acct: await t.account('acme'), other: await t.account('other'), http: await listen(t.app) };
}

const api = (a: App, method: 'get' | 'put' | 'post', p: string, body?: unknown, secret = a.acct.secret) => {
  const r = request(a.t.app)[method](p).set('authorization', `Bearer ${secret}`);
  return body === undefined ? r : r.send(body as object);
};

async function mk(a: App, kind: 'publish' | 'subscribe', body: Record<string, unknown> = {}): Promise<{ id: number; token: string }> {
  const r = await api(a, 'post', `/api/${kind}_token`, { label: 'x', streams: [{ streamName: 'cam1' }], ...body });
  if (r.body.status !== 'success') throw new Error(`token create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

const director = (a: App, action: 'publish' | 'subscribe', body: object, token?: string) => {
  const r = request(a.t.app).post(`/api/director/${action}`);
  return (token ? r.set('authorization', `Bearer ${token}`) : r).send(body);
};

/** A PUT as the hosted Node client sends it: a JSON body, chunked, and no Content-Type header at all. */
function putWithoutContentType(a: App, p: string, body: string, contentType?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: 'application/json', Authorization: `Bearer ${a.acct.secret}` };
    if (contentType) headers['Content-Type'] = contentType;
    const req = httpRequest(`${a.http.base}${p}`, { method: 'PUT', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.write(body);
    req.end();
  });
}

const EU_VIEW = { id: 'eu-1', name: 'Frankfurt', rtmp: '', srt: '', location: { city: 'Frankfurt', region: null, country: 'Germany' }, features: { transcoding: false } };
const US_VIEW = { id: 'US-1', name: 'US-1', rtmp: 'ingest.us.example', srt: 'srt.us.example', location: { city: null, region: null, country: null }, features: { transcoding: false } };

describe('clusters: the account default, and the director answering with the cluster of a grant', () => {
  let a: App;
  before(async () => {
    a = await start({ clusters: CLUSTERS, rtmpPublishUrls: [] });
  });
  after(() => a.http.close());

  it('GET /api/cluster: the configured clusters in the hosted shape; an account that set none defaults to the first', async () => {
    const r = await api(a, 'get', '/api/cluster');
    assert.deepEqual([r.status, r.body], [200, { status: 'success', data: { defaultCluster: 'eu-1', availableClusters: [EU_VIEW, US_VIEW] } }]);
  });

  it('the director, with no account default: the first cluster; a token naming a cluster: that one (any case)', async () => {
    const plain = await mk(a, 'publish');
    const r = await director(a, 'publish', { streamName: 'cam1' }, plain.token);
    assert.deepEqual([r.status, r.body.data?.urls], [200, [`wss://eu.media.example/pub/${a.acct.id}/cam1`]], JSON.stringify(r.body));
    const us = await mk(a, 'publish', { originCluster: 'us-1' });
    const u = await director(a, 'publish', { streamName: 'cam1' }, us.token);
    assert.deepEqual([u.status, u.body.data?.urls], [200, ['wss://us.media.example/pub/cam1']]);
    const viewer = await mk(a, 'subscribe', { originCluster: 'US-1' });
    const v = await director(a, 'subscribe', { streamName: 'cam1' }, viewer.token);
    assert.deepEqual([v.status, v.body.data?.urls], [200, ['wss://us.media.example/sub/cam1']]);
  });

  it('PUT /api/cluster: unknown id is a 400 naming it and the clusters, nothing stored; a known one (any case) is stored as configured and answered as GET', async () => {
    const bad = await api(a, 'put', '/api/cluster', { defaultCluster: 'mars-9' });
    assert.deepEqual([bad.status, bad.body], [
      400,
      { status: 'fail', data: { message: 'Validation errors', errors: { defaultCluster: ["unknown cluster 'mars-9': the available clusters are eu-1, US-1"] } } },
    ]);
    for (const body of [{}, { defaultCluster: '' }, { defaultCluster: 7 }, { defaultCluster: null }]) {
      const r = await api(a, 'put', '/api/cluster', body);
      assert.deepEqual([r.status, Object.keys(r.body.data.errors ?? {})], [400, ['defaultCluster']], JSON.stringify(body));
    }
    assert.equal((await a.t.services.store.getAccount(a.acct.id))?.defaultCluster, undefined);
    const ok = await api(a, 'put', '/api/cluster', { defaultCluster: 'us-1' });
    assert.deepEqual([ok.status, ok.body.data], [200, { defaultCluster: 'US-1', availableClusters: [EU_VIEW, US_VIEW] }]);
    assert.equal((await a.t.services.store.getAccount(a.acct.id))?.defaultCluster, 'US-1');
    assert.deepEqual((await api(a, 'get', '/api/cluster')).body.data, ok.body.data);
    assert.equal((await api(a, 'get', '/api/cluster', undefined, a.other.secret)).body.data.defaultCluster, 'eu-1', 'another account keeps its own');
  });

  it('the director follows the account default at once: tokens naming none, unknown or stale clusters, token-less viewers and self-signed JWTs; a token naming a cluster keeps it', async () => {
    await api(a, 'put', '/api/cluster', { defaultCluster: 'eu-1' });
    const plain = await mk(a, 'publish');
    assert.deepEqual((await director(a, 'publish', { streamName: 'cam1' }, plain.token)).body.data.urls, [`wss://eu.media.example/pub/${a.acct.id}/cam1`]);
    // decided once (cached): the change below must reach the director's next answer
    await api(a, 'put', '/api/cluster', { defaultCluster: 'US-1' });
    assert.deepEqual((await director(a, 'publish', { streamName: 'cam1' }, plain.token)).body.data.urls, ['wss://us.media.example/pub/cam1']);
    const unknown = await mk(a, 'publish', { originCluster: 'mars-9' });
    assert.deepEqual((await director(a, 'publish', { streamName: 'cam1' }, unknown.token)).body.data.urls, ['wss://us.media.example/pub/cam1'], 'a cluster not configured: the account default');
    const pinned = await mk(a, 'publish', { originCluster: 'eu-1' });
    assert.deepEqual((await director(a, 'publish', { streamName: 'cam1' }, pinned.token)).body.data.urls, [`wss://eu.media.example/pub/${a.acct.id}/cam1`]);
    const open = await director(a, 'subscribe', { streamName: 'open1', streamAccountId: a.acct.id });
    assert.deepEqual([open.status, open.body.data?.urls], [200, ['wss://us.media.example/sub/open1']], 'a token-less viewer: the account default');
    const otherOpen = await director(a, 'subscribe', { streamName: 'open1', streamAccountId: a.other.id });
    assert.deepEqual(otherOpen.body.data?.urls, [`wss://eu.media.example/sub/${a.other.id}/open1`, 'wss://eu2.media.example/sub/open1'], "another account's default");
    const parent = await mk(a, 'subscribe', { originCluster: 'eu-1' });
    const jwt = await new SignJWT({ streaming: { tokenId: parent.id, tokenType: 'Subscribe', streamName: 'cam1' } })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(parent.token));
    assert.deepEqual((await director(a, 'subscribe', { streamName: 'cam1' }, jwt)).body.data.urls, [`wss://eu.media.example/sub/${a.acct.id}/cam1`, 'wss://eu2.media.example/sub/cam1'], "a self-signed JWT: its parent's cluster");
  });

  it('Rtmp: the cluster\'s ingest URLs; a cluster without them is a 400 naming it', async () => {
    await api(a, 'put', '/api/cluster', { defaultCluster: 'eu-1' });
    const us = await mk(a, 'publish', { originCluster: 'US-1' });
    const r = await director(a, 'publish', { streamName: 'cam1', streamType: 'Rtmp' }, us.token);
    assert.deepEqual([r.status, r.body.data?.urls], [200, [`rtmp://ingest.us.example:1935/live/cam1?token=${us.token}`]]);
    const eu = await mk(a, 'publish');
    const refused = await director(a, 'publish', { streamName: 'cam1', streamType: 'Rtmp' }, eu.token);
    assert.deepEqual([refused.status, refused.body.data], [
      400,
      { message: 'Validation errors', errors: { streamType: ["Rtmp publishing is not offered by cluster 'eu-1' (its rtmpPublishUrls are empty): use WebRtc"] } },
    ]);
  });

  it("token records: effectiveSettings.originCluster is the token's cluster, else the account default; list_by_cluster counts tokens naming none in the default", async () => {
    await api(a, 'put', '/api/cluster', { defaultCluster: 'US-1' });
    const plain = await mk(a, 'publish', { label: 'plain-rec' });
    const pinned = await mk(a, 'publish', { label: 'pinned-rec', originCluster: 'eu-1' });
    const read = async (id: number) => (await api(a, 'get', `/api/publish_token/${id}`)).body.data;
    assert.deepEqual([(await read(plain.id)).originCluster, (await read(plain.id)).effectiveSettings.originCluster], ['', 'US-1']);
    assert.deepEqual([(await read(pinned.id)).originCluster, (await read(pinned.id)).effectiveSettings.originCluster], ['eu-1', 'eu-1']);
    const labels = async (cluster: string) =>
      ((await api(a, 'get', `/api/publish_token/list_by_cluster?cluster=${cluster}&itemsOnPage=100`)).body.data as Array<{ label: string }>).map((t) => t.label).filter((l) => l.endsWith('-rec'));
    assert.deepEqual(await labels('us-1'), ['plain-rec']);
    assert.deepEqual(await labels('eu-1'), ['pinned-rec']);
    assert.deepEqual(await labels('auto'), [], 'no implicit cluster once clusters are configured');
  });

  it('PUT /api/cluster without a Content-Type (as the Node client sends it) is read as JSON; another type is still a 415, and other routes keep the rule', async () => {
    const r = await putWithoutContentType(a, '/api/cluster', JSON.stringify({ defaultCluster: 'eu-1' }));
    assert.deepEqual([r.status, r.body.data?.defaultCluster], [200, 'eu-1'], JSON.stringify(r.body));
    const plain = await putWithoutContentType(a, '/api/cluster', JSON.stringify({ defaultCluster: 'US-1' }), 'text/plain');
    assert.deepEqual([plain.status, plain.body], [415, { status: 'fail', data: { message: 'Unsupported Media Type' } }]);
    const malformed = await putWithoutContentType(a, '/api/cluster', '{"defaultCluster":');
    assert.deepEqual([malformed.status, malformed.body.data.message], [400, 'Malformed JSON in request body']);
    const tok = await mk(a, 'publish');
    const elsewhere = await putWithoutContentType(a, `/api/publish_token/${tok.id}`, JSON.stringify({ label: 'y' }));
    assert.equal(elsewhere.status, 415, 'a token update without a Content-Type stays a 415');
    assert.equal((await a.t.services.store.getAccount(a.acct.id))?.defaultCluster, 'eu-1');
  });
});

describe('geo cascade: the account setting, and the token records that follow it', () => {
  let a: App;
  before(async () => {
    a = await start({ clusters: CLUSTERS });
  });
  after(() => a.http.close());

  it('GET /api/account/geo_cascade: never set, disabled with no clusters', async () => {
    const r = await api(a, 'get', '/api/account/geo_cascade');
    assert.deepEqual([r.status, r.body], [200, { status: 'success', data: { isEnabled: false, clusters: [] } }]);
  });

  it('PUT: clusters as configured (any case, once each); null or absent means ["all"]; "all" stands alone; stored and answered', async () => {
    const cases: Array<[object, { isEnabled: boolean; clusters: string[] }]> = [
      [{ isEnabled: true, clusters: ['us-1', 'EU-1', 'US-1'] }, { isEnabled: true, clusters: ['US-1', 'eu-1'] }],
      [{ isEnabled: true }, { isEnabled: true, clusters: ['all'] }],
      [{ isEnabled: true, clusters: null }, { isEnabled: true, clusters: ['all'] }],
      [{ isEnabled: true, clusters: ['eu-1', 'All'] }, { isEnabled: true, clusters: ['all'] }],
      [{ isEnabled: false, clusters: [] }, { isEnabled: false, clusters: [] }],
      [{ isEnabled: false, clusters: ['eu-1'] }, { isEnabled: false, clusters: ['eu-1'] }],
    ];
    for (const [body, expected] of cases) {
      const r = await api(a, 'put', '/api/account/geo_cascade', body);
      assert.deepEqual([r.status, r.body.data], [200, expected], JSON.stringify(body));
      assert.deepEqual((await a.t.services.store.getAccount(a.acct.id))?.geoCascade, expected);
      assert.deepEqual((await api(a, 'get', '/api/account/geo_cascade')).body.data, expected);
    }
  });

  it('PUT refusals are 400s naming the field, and store nothing', async () => {
    await api(a, 'put', '/api/account/geo_cascade', { isEnabled: true, clusters: ['eu-1'] });
    const cases: Array<[object, Record<string, string[]>]> = [
      [{ isEnabled: true, clusters: [] }, { clusters: ['cannot be empty when isEnabled is true: name clusters, or ["all"] for every cluster'] }],
      [{ isEnabled: true, clusters: ['eu-1', 'mars-9'] }, { clusters: ["unknown cluster 'mars-9': the available clusters are eu-1, US-1"] }],
      [{ isEnabled: false, clusters: ['mars-9'] }, { clusters: ["unknown cluster 'mars-9': the available clusters are eu-1, US-1"] }],
      [{ clusters: ['eu-1'] }, { isEnabled: ['Invalid input: expected boolean, received undefined'] }],
      [{ isEnabled: 'yes' }, { isEnabled: ['Invalid input: expected boolean, received string'] }],
      [{ isEnabled: true, clusters: 'eu-1' }, { clusters: ['Invalid input: expected array, received string'] }],
    ];
    for (const [body, errors] of cases) {
      const r = await api(a, 'put', '/api/account/geo_cascade', body);
      assert.deepEqual([r.status, r.body.data], [400, { message: 'Validation errors', errors }], JSON.stringify(body));
    }
    assert.deepEqual((await a.t.services.store.getAccount(a.acct.id))?.geoCascade, { isEnabled: true, clusters: ['eu-1'] });
  });

  it("PUT without a Content-Type (the Node client's update) is read as JSON", async () => {
    const r = await putWithoutContentType(a, '/api/account/geo_cascade', JSON.stringify({ isEnabled: true, clusters: ['us-1'] }));
    assert.deepEqual([r.status, r.body.data], [200, { isEnabled: true, clusters: ['US-1'] }], JSON.stringify(r.body));
  });

  it("a publish token that sets no geo cascade shows the account's in effectiveSettings (its own geoCascade stays unset); one that sets its own keeps it", async () => {
    await api(a, 'put', '/api/account/geo_cascade', { isEnabled: true, clusters: ['eu-1'] });
    const plain = await mk(a, 'publish');
    const own = await mk(a, 'publish', { geoCascade: { isEnabled: false, clusters: [] } });
    const read = async (id: number) => (await api(a, 'get', `/api/publish_token/${id}`)).body.data;
    assert.deepEqual([(await read(plain.id)).geoCascade, (await read(plain.id)).effectiveSettings.geoCascade], [undefined, { isEnabled: true, clusters: ['eu-1'] }]);
    assert.deepEqual([(await read(own.id)).geoCascade, (await read(own.id)).effectiveSettings.geoCascade], [{ isEnabled: false, clusters: [] }, { isEnabled: false, clusters: [] }]);
    await api(a, 'put', '/api/account/geo_cascade', { isEnabled: false, clusters: [] });
    assert.deepEqual((await read(plain.id)).effectiveSettings.geoCascade, { isEnabled: false, clusters: [] }, 'follows the account when it changes');
    const other = (await api(a, 'get', '/api/account/geo_cascade', undefined, a.other.secret)).body.data;
    assert.deepEqual(other, { isEnabled: false, clusters: [] }, 'another account is untouched');
  });
});

describe('clusters: none configured, one implicit cluster `auto` of the director URLs', () => {
  let a: App;
  before(async () => {
    a = await start({ clusters: [], rtmpPublishUrls: ['rtmp://ingest.example.com/live/{streamName}'] });
  });
  after(() => a.http.close());

  it('GET /api/cluster lists `auto` alone; PUT takes `auto` and refuses anything else', async () => {
    const auto = { id: 'auto', name: 'auto', rtmp: 'ingest.example.com', srt: '', location: { city: null, region: null, country: null }, features: { transcoding: false } };
    assert.deepEqual((await api(a, 'get', '/api/cluster')).body.data, { defaultCluster: 'auto', availableClusters: [auto] });
    assert.deepEqual((await api(a, 'put', '/api/cluster', { defaultCluster: 'AUTO' })).body.data, { defaultCluster: 'auto', availableClusters: [auto] });
    const bad = await api(a, 'put', '/api/cluster', { defaultCluster: 'eu-1' });
    assert.deepEqual([bad.status, bad.body.data.errors], [400, { defaultCluster: ["unknown cluster 'eu-1': the available clusters are auto"] }]);
  });

  it('the director answers the director URLs whatever cluster a token names', async () => {
    const p = await mk(a, 'publish', { originCluster: 'fra-1' });
    const r = await director(a, 'publish', { streamName: 'cam1' }, p.token);
    assert.deepEqual([r.status, r.body.data?.urls], [200, [`wss://localhost/ws/pub/${a.acct.id}/cam1`]]);
    const rt = await director(a, 'publish', { streamName: 'cam1', streamType: 'rtmp' }, p.token);
    assert.deepEqual(rt.body.data?.urls, [`rtmp://ingest.example.com/live/cam1?token=${p.token}`]);
    const rec = (await api(a, 'get', `/api/publish_token/${p.id}`)).body.data;
    assert.deepEqual([rec.originCluster, rec.effectiveSettings.originCluster], ['fra-1', 'fra-1'], 'the token keeps what it named');
  });
});

describe('director.clusters configuration', () => {
  const load = (clusters: unknown) => () => loadConfig({ env: {}, overrides: { director: { clusters } } });

  it('refuses a duplicate id (case-insensitive), the id `all`, an entry without URLs, and an unknown key, naming each', () => {
    const base = { publishUrls: ['wss://a/{streamName}'], subscribeUrls: ['wss://a/{streamName}'] };
    assert.throws(load([{ id: 'eu-1', ...base }, { id: 'EU-1', ...base }]), /director\.clusters\.1\.id: 'EU-1' is the id of entry 0 already/);
    assert.throws(load([{ id: 'all', ...base }]), /director\.clusters\.0\.id: 'all' means every cluster/);
    assert.throws(load([{ id: 'eu-1', publishUrls: [], subscribeUrls: base.subscribeUrls }]), /director\.clusters\.0\.publishUrls/);
    assert.throws(load([{ id: 'eu-1', ...base, region: 'x' }]), /director\.clusters\.0/);
    assert.throws(load([{ id: 'eu 1', ...base }]), /director\.clusters\.0\.id/);
    assert.equal(load([{ id: 'eu-1', ...base }])().director.clusters[0]?.id, 'eu-1');
  });

  it('takes STREAMGATE_DIRECTOR_CLUSTERS as a JSON list', () => {
    const c = loadConfig({ env: { STREAMGATE_DIRECTOR_CLUSTERS: JSON.stringify(CLUSTERS) } });
    assert.deepEqual(
      c.director.clusters.map((x) => [x.id, x.rtmpPublishUrls.length]),
      [
        ['eu-1', 0],
        ['US-1', 1],
      ],
    );
  });
});
