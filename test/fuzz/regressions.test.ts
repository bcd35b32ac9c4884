// Defects the property and fuzz tests found, each kept as the failing case at the HTTP surface.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { hookFixture, type HookFixture } from '../hooks/fixture.js';
import { MAX_LOOP_DELAY_MS } from './harness.js';

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

  it('costly stream patterns: 100 entries of \\pL{400} are refused naming each entry, without holding the event loop (was ~50 s blocked, then 201)', async () => {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const streams = Array.from({ length: 100 }, (_, i) => ({ streamName: i % 2 ? '\\pL{400}' : '[^\\pL]{300}', isRegex: true }));
    const r = await f.api('post', '/api/publish_token', { label: 'x', streams });
    const update = await f.api('put', `/api/publish_token/${(await f.token('publish')).id}`, { addTokenStreams: streams.slice(0, 2) });
    const hook = await f.api('post', '/api/webhooks', { url: 'https://93.184.215.14/h', isFeedHooks: true, filter: '\\pL{400}' });
    loop.disable();
    assert.equal(r.status, 400);
    assert.equal(Object.keys(r.body.data.errors).length, 100);
    assert.match(r.body.data.errors['streams[1].streamName'][0], /^too large for the RE2 engine: .*\(cost 1409200 instructions, at most 2000\)/);
    assert.deepEqual([update.status, Object.keys(update.body.data.errors)], [400, ['addTokenStreams[0].streamName', 'addTokenStreams[1].streamName']]);
    assert.deepEqual([hook.status, Object.keys(hook.body.data.errors)], [400, ['filter']]);
    assert.ok(loop.max / 1e6 < MAX_LOOP_DELAY_MS, `event loop blocked for ${(loop.max / 1e6).toFixed(0)} ms`);
    // Patterns within the limit still work: a Unicode script class, and three repetitions of it.
    const ok = await f.token('publish', { streams: [{ streamName: '\\p{Latin}+', isRegex: true }, { streamName: '\\p{Latin}{3}[0-9]', isRegex: true }] });
    const d = await request(f.t.app).post('/hooks/authorize').send({ action: 'publish', token: ok.token, streamName: 'ñam1' });
    assert.deepEqual([d.status, d.body.allowed], [200, true]);
  });

  it('bad percent-encoding in a path parameter is a 400 naming it (was 500)', async () => {
    const r = await f.api('get', '/api/publish_token/%E0%A4%A');
    assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: "Malformed percent-encoding in the request path: Failed to decode param '%E0%A4%A'" } }]);
  });

  it('bad percent-encoding in an auth-request suffixed path is a 403 denial (was 500, which proxies turn into errors)', async () => {
    const r = await request(f.t.app).get('/hooks/auth-request/hls/%E0%A4%A/index.m3u8');
    assert.deepEqual([r.status, r.body], [403, { allowed: false, reason: 'stream_not_allowed', message: 'Unauthorized: Stream name not allowed' }]);
    // The same path in nginx's X-Original-URI: the same denial, not a decision about its raw spelling.
    const h = await request(f.t.app).get('/hooks/auth-request').set('x-original-uri', '/hls/%E0%A4%A/index.m3u8');
    assert.deepEqual([h.status, h.body], [403, { allowed: false, reason: 'stream_not_allowed', message: 'Unauthorized: Stream name not allowed' }]);
  });
});
