// Generic lifecycle input: /hooks/events and /hooks/thumbnail; and the rule that adapters translate only.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { ROOT } from '../helpers/process.js';

describe('generic lifecycle hooks', () => {
  let f: HookFixture;
  let pub: { id: number; token: string };
  before(async () => {
    f = await hookFixture();
    pub = await f.token('publish', { enableThumbnails: true });
  });

  it('feeds started/ended by streamId or by account and name', async () => {
    const a = await request(f.t.app).post('/hooks/events').send({ type: 'feeds', event: 'started', streamId: `${f.acct.id}/cam1`, tokenId: pub.id });
    assert.deepEqual([a.status, a.body], [202, { received: true }]);
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [pub.id] });
    await request(f.t.app).post('/hooks/events').send({ type: 'feeds', event: 'ended', accountId: f.acct.id, streamName: 'cam1' });
    await f.settle();
    assert.deepEqual((await f.api('get', '/api/publish_token/active/all')).body.data, { tokenIds: [] });
  });

  it('recordings started/completed/deleted become recording events', async () => {
    for (const event of ['started', 'completed', 'deleted']) {
      const r = await request(f.t.app).post('/hooks/events').send({ type: 'recording', event, streamId: `${f.acct.id}/cam1`, tokenId: pub.id, data: { path: '/rec/1.mp4' } });
      assert.equal(r.status, 202);
    }
    await f.settle();
    const recs = f.events.filter((e) => e.type === 'recording');
    assert.deepEqual(recs.map((e) => e.type === 'recording' && [e.event, e.data.path, e.data.tokenId]), [
      ['started', '/rec/1.mp4', pub.id],
      ['completed', '/rec/1.mp4', pub.id],
      ['deleted', '/rec/1.mp4', pub.id],
    ]);
  });

  it('refuses malformed events naming the field', async () => {
    const cases: Array<[object, string[]]> = [
      [{ type: 'feeds', event: 'completed', streamId: 'A/b' }, ['event']],
      [{ type: 'feeds', event: 'started' }, ['streamId']],
      [{ type: 'weather', event: 'started', streamId: 'A/b' }, ['type']],
      [{ type: 'feeds', event: 'started', streamId: 'nostream' }, ['streamId']],
    ];
    for (const [body, fields] of cases) {
      const r = await request(f.t.app).post('/hooks/events').send(body);
      assert.deepEqual([r.status, Object.keys(r.body.errors)], [400, fields], JSON.stringify(body));
    }
  });

  it('passes the exact thumbnail bytes on', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 1, 2, 3, 0xff, 0xd9]);
    const r = await request(f.t.app).post(`/hooks/thumbnail?streamId=${f.acct.id}/cam1`).set('content-type', 'image/jpeg').send(jpeg);
    assert.deepEqual([r.status, r.body], [202, { received: true }]);
    await f.settle();
    const t = f.events.find((e) => e.type === 'thumbnail');
    assert.ok(t && t.type === 'thumbnail');
    assert.deepEqual([t.streamId, t.contentType, Buffer.compare(t.image, jpeg)], [`${f.acct.id}/cam1`, 'image/jpeg', 0]);
    const bad = await request(f.t.app).post('/hooks/thumbnail').set('content-type', 'text/plain').send('hi');
    assert.deepEqual([bad.status, Object.keys(bad.body.errors).sort()], [400, ['content-type', 'streamId']]);
  });
});

describe('callers translate, the Enforcer decides', () => {
  it('no caller module imports the policy, reads the store or holds the Enforcer; admissions are decided through the caller context', () => {
    const dir = `${ROOT}src/callers`;
    for (const file of readdirSync(dir)) {
      const text = readFileSync(`${dir}/${file}`, 'utf8');
      assert.ok(!/policy\/evaluate/.test(text), `${file} imports evaluate()`);
      assert.ok(!/^import (?!type )[^;]*from '\.\.\/store\//m.test(text), `${file} imports the store`);
      if (file !== 'context.ts') assert.ok(!/\.(store|enforcer)\b/.test(text), `${file} reaches the store or the Enforcer`);
    }
    assert.match(readFileSync(`${ROOT}src/http/caller-routes.ts`, 'utf8'), /\bctx\.admit\(/);
    assert.match(readFileSync(`${ROOT}src/admission/context.ts`, 'utf8'), /\bs\.enforcer\.admit\(/);
    assert.match(readFileSync(`${ROOT}src/http/director.ts`, 'utf8'), /\benforcer\.admit\(/);
  });
});
