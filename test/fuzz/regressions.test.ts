// Defects the property and fuzz tests found, each kept as the failing case at the HTTP surface.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from '../hooks/fixture.js';

describe('regressions found by the property and fuzz tests', () => {
  let f: HookFixture;
  before(async () => {
    f = await hookFixture();
  });

  it('duplicate group names: a token whose patterns name the same group decides (was 500 on every decision)', async () => {
    const t = await f.token('publish', {
      streams: [{ streamName: '(?<n>cam)[0-9]+', isRegex: true }, { streamName: '(?<n>mic)[0-9]+', isRegex: true }],
    });
    const ok = await request(f.t.app).post('/hooks/authorize').send({ action: 'publish', token: t.token, streamName: 'mic7' });
    assert.deepEqual([ok.status, ok.body.allowed, ok.body.tokenId], [200, true, t.id]);
    const no = await request(f.t.app).post('/hooks/authorize').send({ action: 'publish', token: t.token, streamName: 'tv1' });
    assert.deepEqual([no.status, no.body.reason], [403, 'stream_not_allowed']);
    const check = await f.api('post', `/api/publish_token/${t.id}/check`, { streamName: 'cam1' });
    assert.deepEqual([check.status, check.body.data.allowed], [200, true]);
  });

  it('duplicate group names: two securing tokens naming the same group leave viewing decidable (was 500 for every viewer)', async () => {
    await f.token('publish', { subscribeRequiresAuth: true, streams: [{ streamName: '(?<g>a)[0-9]', isRegex: true }] });
    await f.token('publish', { subscribeRequiresAuth: true, streams: [{ streamName: '(?<g>b)[0-9]', isRegex: true }] });
    const open = await request(f.t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'zzz', accountId: f.acct.id });
    assert.deepEqual([open.status, open.body.allowed], [200, true]);
    const secured = await request(f.t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'b1', accountId: f.acct.id });
    assert.deepEqual([secured.status, secured.body.reason], [401, 'token_required']);
  });
});
