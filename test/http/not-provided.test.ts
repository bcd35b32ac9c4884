// The hosted endpoints Streamgate does not provide (docs/compatibility.md, "Endpoints Streamgate does
// not provide"): each listed method and path answers 501 with the hosted fail envelope and a message
// naming the operation and saying Streamgate does not provide it, once authenticated; without the
// API secret it is the 401 of every management route. The table below is written out by hand from
// the hosted OpenAPI documents and the official Node client, not read from the implementation.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { NOT_PROVIDED, hostedPath } from '../../src/http/management/not-provided.routes.js';

const WHY = {
  transcoders: 'Streamgate runs no cloud transcoders; transcode on your own media servers (ABR ladders, simulcast) and publish through them.',
  recordFiles: 'Streamgate stores no recordings; your media servers record, and their recording events are listed by GET /api/recordings.',
  mediaAssets: 'Streamgate keeps no media assets (recordings, clips, uploads); your media servers record, and their recording events are listed by GET /api/recordings.',
  reprioritize: "Streamgate does not rank a stream's sources; a token's priority is stored (PUT /api/v2/publish_token/{id}) and a stream is restarted with POST /api/stream/stop.",
  restreamSync: "Streamgate does not restream; a token's restream targets are stored and returned, never pushed.",
};

/** [method, hosted path, a concrete URL, the hosted operation, why] */
const TABLE: Array<[string, string, string, string, string]> = [
  ['GET', '/api/transcoders', '/api/transcoders?page=1&itemsOnPage=10', 'List Transcoders', WHY.transcoders],
  ['POST', '/api/transcoders', '/api/transcoders', 'Create Transcoder', WHY.transcoders],
  ['GET', '/api/transcoders/{transcoderId}', '/api/transcoders/abcd-efgh', 'Get Transcoder', WHY.transcoders],
  ['PUT', '/api/transcoders/{transcoderId}', '/api/transcoders/abcd-efgh', 'Update Transcoder', WHY.transcoders],
  ['DELETE', '/api/transcoders/{transcoderId}', '/api/transcoders/abcd-efgh', 'Delete Transcoder', WHY.transcoders],
  ['PUT', '/api/transcoders/start/{transcoderId}', '/api/transcoders/start/abcd-efgh', 'Start Transcoder', WHY.transcoders],
  ['PUT', '/api/transcoders/stop/{transcoderId}', '/api/transcoders/stop/abcd-efgh', 'Stop Transcoder', WHY.transcoders],
  ['GET', '/api/transcoders/instances', '/api/transcoders/instances?page=1&itemsOnPage=10', 'List Transcoder Instances', WHY.transcoders],
  ['GET', '/api/transcoders/instances/{instanceId}', '/api/transcoders/instances/mnop-qrst', 'Get Transcoder Instance', WHY.transcoders],
  ['GET', '/api/transcoders/profiles', '/api/transcoders/profiles?page=1&itemsOnPage=10', 'List Transcoder Profiles', WHY.transcoders],
  ['GET', '/api/record_files/{recordFileId}', '/api/record_files/12', 'Read File', WHY.recordFiles],
  ['DELETE', '/api/record_files/{recordFileId}', '/api/record_files/12', 'Delete File', WHY.recordFiles],
  ['POST', '/api/record_files/delete', '/api/record_files/delete', 'Delete Files', WHY.recordFiles],
  ['POST', '/api/record_files/delete/all', '/api/record_files/delete/all', 'Delete All Files', WHY.recordFiles],
  ['GET', '/api/record_files/delete/all', '/api/record_files/delete/all', 'Delete All Files', WHY.recordFiles],
  ['GET', '/api/record_files/list', '/api/record_files/list?page=1&itemsOnPage=10', 'List Files', WHY.recordFiles],
  ['GET', '/api/record_files/list_by_token', '/api/record_files/list_by_token?token=x&page=1&itemsOnPage=10', 'List Files By Token', WHY.recordFiles],
  ['GET', '/api/record_files/list_by_stream', '/api/record_files/list_by_stream?streamname=cam1&page=1&itemsOnPage=10', 'List Files By Stream', WHY.recordFiles],
  ['GET', '/api/record_files/usage', '/api/record_files/usage', 'Usage', WHY.recordFiles],
  ['GET', '/api/record_files/usage_billing', '/api/record_files/usage_billing?startDate=2026-01-01&stopDate=2026-02-01', 'Usage Billable', WHY.recordFiles],
  ['GET', '/api/v2/record_files/list', '/api/v2/record_files/list', 'List Media Assets (v2)', WHY.recordFiles],
  ['GET', '/api/v2/record_files/{mediaAssetId}', '/api/v2/record_files/39f12579', 'Read Media Asset (v2)', WHY.recordFiles],
  ['POST', '/api/v2/record_files/delete', '/api/v2/record_files/delete', 'Delete Media Assets (v2)', WHY.recordFiles],
  ['POST', '/api/v3/media/assets', '/api/v3/media/assets', 'Create Media Asset', WHY.mediaAssets],
  ['GET', '/api/v3/media/assets', '/api/v3/media/assets?limit=10', 'List Media Assets', WHY.mediaAssets],
  ['DELETE', '/api/v3/media/assets', '/api/v3/media/assets?id=a&id=b', 'Delete Media Assets', WHY.mediaAssets],
  ['POST', '/api/v3/media/assets/upload', '/api/v3/media/assets/upload', 'Generate Upload Credentials', WHY.mediaAssets],
  ['POST', '/api/v3/media/assets/register', '/api/v3/media/assets/register', 'Register Media Asset', WHY.mediaAssets],
  ['GET', '/api/v3/media/assets/{mediaAssetId}', '/api/v3/media/assets/39f12579', 'Read Media Asset', WHY.mediaAssets],
  ['PATCH', '/api/v3/media/assets/{mediaAssetId}', '/api/v3/media/assets/39f12579', 'Update Media Asset', WHY.mediaAssets],
  ['DELETE', '/api/v3/media/assets/all/{type}', '/api/v3/media/assets/all/clip', 'Delete All Media Assets', WHY.mediaAssets],
  ['POST', '/api/stream/reprioritize', '/api/stream/reprioritize', 'Reprioritize an active stream', WHY.reprioritize],
  ['POST', '/api/publish_token/{tokenId}/restream/sync', '/api/publish_token/1/restream/sync', 'Sync restream', WHY.restreamSync],
];

const BODIES: Record<string, object> = {
  'POST /api/transcoders': { name: 'simple_transcoder', cluster: 'phx-1', height: 240, frameRate: 60 },
  'PUT /api/transcoders/{transcoderId}': { name: 'renamed' },
  'POST /api/record_files/delete': { recordFileIds: [12] },
  'POST /api/v2/record_files/delete': { mediaAssetIds: ['39f12579'] },
  'POST /api/v3/media/assets': { streamName: 'cam1', startTime: '2026-01-01T00:00:00Z' },
  'POST /api/v3/media/assets/register': { objectPrefix: 'bucket/account/session/my-asset.mp4' },
  'PATCH /api/v3/media/assets/{mediaAssetId}': { customPath: 'x' },
  'POST /api/stream/reprioritize': { tokenId: 1, updatePriority: 100 },
};

describe('hosted endpoints Streamgate does not provide', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  let secret: string;
  before(async () => {
    await factory.setup();
    t = await testApp(await factory.make());
    ({ secret } = await t.account());
  });
  after(() => factory.teardown());

  const send = (method: string, url: string, auth: string | undefined, body?: object) => {
    let r = request(t.app)[method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](url);
    if (auth !== undefined) r = r.set('authorization', auth);
    return body === undefined ? r : r.send(body);
  };

  it('the table here and the routes Streamgate declares list the same operations', () => {
    const declared = Object.values(NOT_PROVIDED)
      .flat()
      .map((op) => `${op.method.toUpperCase()} ${hostedPath(op.path)}`)
      .sort();
    assert.deepEqual(declared, TABLE.map(([m, p]) => `${m} ${p}`).sort());
  });

  for (const [method, path, url, operation, why] of TABLE) {
    it(`${method} ${path}: 501 saying Streamgate does not provide it; 401 without the API secret`, async () => {
      const body = BODIES[`${method} ${path}`];
      const r = await send(method, url, `Bearer ${secret}`, body);
      assert.deepEqual([r.status, r.headers['content-type'], r.body], [
        501,
        'application/json; charset=utf-8',
        { status: 'fail', data: { message: `Not provided by Streamgate: ${operation} (${method} ${path}). ${why}` } },
      ]);
      for (const auth of [undefined, 'Bearer wrong-secret-0123456789abcdef0123456789']) {
        const refused = await send(method, url, auth, body);
        assert.deepEqual([refused.status, refused.body], [401, { status: 'fail', data: { message: 'Unauthorized' } }], `auth ${auth}`);
      }
    });
  }

  it('another method on a listed path is the generic 404 (only the hosted operations are listed)', async () => {
    for (const [method, url] of [
      ['PATCH', '/api/transcoders'],
      ['GET', '/api/stream/reprioritize'],
      ['DELETE', '/api/publish_token/1/restream/sync'],
    ] as const) {
      const r = await send(method, url, `Bearer ${secret}`);
      assert.equal(r.status, 404, `${method} ${url}`);
      assert.match(r.body.data.message, new RegExp(`^Not found: ${method} ${url.replace(/\//g, '\\/')}`));
    }
  });

  it('the endpoints next to them still answer as before', async () => {
    const stop = await send('POST', '/api/stream/stop', `Bearer ${secret}`, { streamId: 'cam1' });
    assert.deepEqual([stop.status, stop.body], [200, { status: 'success', data: { stoppingLevel: 'None' } }]);
    const recordings = await send('GET', '/api/recordings', `Bearer ${secret}`);
    assert.deepEqual([recordings.status, recordings.body.status], [200, 'success']);
  });

  it('the OpenAPI document describes them with their 501 answer', async () => {
    const doc = (await request(t.app).get('/api/openapi.json')).body;
    const op = doc.paths['/api/transcoders/start/{transcoderId}'].put;
    assert.deepEqual(Object.keys(op.responses).filter((s) => s.startsWith('5')), ['501']);
    assert.match(op.responses['501'].description, /^Not provided: 501 /);
    assert.deepEqual(op.security, [{ ApiSecret: [] }]);
  });
});
