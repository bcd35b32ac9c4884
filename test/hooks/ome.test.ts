// OvenMediaEngine AdmissionWebhooks, with X-OME-Signature computed here independently. Each test has
// an app and tokens of its own, so any one runs alone or in any order.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';

const SECRET = 'ome-secret-key';
const sign = (body: string) => createHmac('sha1', SECRET).update(Buffer.from(body)).digest('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

describe('OvenMediaEngine adapter', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  let sub: { id: number; token: string };
  beforeEach(async () => {
    f = await hookFixture({ hooks: { secret: '', trustedProxies: [], omeSecret: SECRET, accountInPath: false, mediamtx: { allowApiFrom: [], pathPrefix: '' } } });
    pub = await f.token('publish', { streams: [{ streamName: 'stream' }] });
    sub = await f.token('subscribe', { streams: [{ streamName: 'stream' }] });
  });
  afterEach(() => f.close());
  const body = (direction: string, status: string, url: string) =>
    JSON.stringify({
      client: { address: '211.233.58.86', port: 29291, real_ip: '192.0.2.43', user_agent: 'Mozilla/5.0' },
      request: { direction, protocol: 'rtmp', status, url, time: '2021-05-12T13:45:00.000Z' },
    });
  const send = (raw: string, signature = sign(raw)) =>
    request(f.t.app).post('/hooks/ome/admission').set('content-type', 'application/json').set('x-ome-signature', signature).send(raw);

  it('admits an incoming (publish) opening with the token in the URL', async () => {
    const r = await send(body('incoming', 'opening', `rtmp://host:1935/app/stream?token=${pub.token}`));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { allowed: true, reason: 'authorized' });
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
  });

  it('admits an outgoing (play) opening on LL-HLS, and refuses a wrong token with 200 allowed:false', async () => {
    assert.deepEqual((await send(body('outgoing', 'opening', `https://host:3334/app/stream/llhls.m3u8?token=${sub.token}`))).body, { allowed: true, reason: 'authorized' });
    const r = await send(body('outgoing', 'opening', `https://host:3334/app/stream/llhls.m3u8?token=${pub.token}`));
    assert.deepEqual([r.status, r.body], [200, { allowed: false, reason: 'token_invalid' }]);
  });

  it('refuses a missing or wrong signature, and a signature over other bytes', async () => {
    const raw = body('incoming', 'opening', `rtmp://host:1935/app/stream?token=${pub.token}`);
    assert.equal((await send(raw, '')).status, 401);
    assert.equal((await send(raw, sign(raw).slice(1))).status, 401);
    assert.equal((await send(raw, sign(`${raw} `))).status, 401);
  });

  it('ends the feed on closing with {}', async () => {
    const opened = await send(body('incoming', 'opening', `rtmp://host:1935/app/stream?token=${pub.token}`));
    assert.deepEqual([opened.status, opened.body], [200, { allowed: true, reason: 'authorized' }]);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
    const r = await send(body('incoming', 'closing', `rtmp://host:1935/app/stream?token=${pub.token}`));
    assert.deepEqual([r.status, r.body], [200, {}]);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
  });

  it('answers 400 for malformed bodies', async () => {
    assert.equal((await send('{not json')).status, 400);
    assert.equal((await send(JSON.stringify({ request: { direction: 'sideways' } }))).status, 400);
  });

  it('refuses a request.url that is not valid percent-encoding, or hides a separator, with 200 allowed:false', async () => {
    const reason = 'request.url path has a dot segment, a separator or ; ? # inside a segment, or bad percent-encoding';
    for (const url of [
      `rtmp://host:1935/app/stream%E0%A4%A?token=${pub.token}`,
      `rtmp://host:1935/app/%ZZstream?token=${pub.token}`,
      `rtmp://host:1935/app/stream%2F..%2Fother?token=${pub.token}`,
      `rtmp://host:1935/app%2Fstream/x?token=${pub.token}`,
      `rtmp://host:1935/app/%2e%2e/stream?token=${pub.token}`,
      `rtmp://host:1935/app/other/../stream?token=${pub.token}`,
      `rtmp://host:1935/app/other/%2E%2E/stream/x?token=${pub.token}`,
      `rtmp://host:1935/app/stream%5Cx?token=${pub.token}`,
      `ws://host:3333/app/stream;x?token=${pub.token}`,
      `ws://host:3333/app/stream%3B?token=${pub.token}`,
      `ws://host:3333/app/stream%3F/x?token=${pub.token}`,
      `ws://host:3333/app/stream%23?token=${pub.token}`,
      `ws://host:3333/app/stream%00?token=${pub.token}`,
    ]) {
      const r = await send(body('incoming', 'opening', url));
      assert.deepEqual([r.status, r.body], [200, { allowed: false, reason }], url);
    }
    // a legitimate encoded character is still decoded
    const spaced = await f.token('publish', { streams: [{ streamName: 'my stream' }] });
    const ok = await send(body('incoming', 'opening', `rtmp://host:1935/app/my%20stream?token=${spaced.token}`));
    assert.deepEqual([ok.status, ok.body], [200, { allowed: true, reason: 'authorized' }]);
  });
});
