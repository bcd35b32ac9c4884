// director.admits (MediaMTX authMethod: jwt, where no callback comes): a director call is the
// admission of a session, so a limited token's maxUses and maxConcurrentSessions count it, and the
// session lasts the connection JWT's life. Without it, the director counts nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { hookFixture, type HookFixture } from '../hooks/fixture.js';

const subscribe = (f: HookFixture, token: string) =>
  request(f.t.app).post('/api/director/subscribe').set('authorization', `Bearer ${token}`).send({ streamName: 'cam1', streamAccountId: f.acct.id });

describe('director admissions', () => {
  it('with director.admits, maxUses counts director calls: the third of two uses is refused uses_exhausted', async (t) => {
    const f = await hookFixture({ director: { admits: true } });
    t.after(() => f.close());
    const sub = await f.token('subscribe', { maxUses: 2 });
    assert.equal((await subscribe(f, sub.token)).status, 200);
    assert.equal((await subscribe(f, sub.token)).status, 200);
    const third = await subscribe(f, sub.token);
    assert.deepEqual([third.status, third.body.data?.message], [403, 'Unauthorized: Token already used']);
    const listed = await request(f.t.app).get('/api/sessions').query({ tokenId: sub.id }).set('authorization', `Bearer ${f.acct.secret}`);
    assert.deepEqual(
      listed.body.data.data.map((s: { caller: string; direction: string }) => `${s.caller} ${s.direction}`),
      ['director subscribe', 'director subscribe'],
    );
  });

  it('maxConcurrentSessions counts the connection JWTs still valid: the next call passes once one has expired', async (t) => {
    // The app and its store read the mocked clock: the JWT's second passes without waiting for it.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-05-01T10:00:00.000Z') });
    const f = await hookFixture({ director: { admits: true, jwtTtlSeconds: 1 } });
    t.after(() => f.close());
    const sub = await f.token('subscribe', { maxConcurrentSessions: 1 });
    assert.equal((await subscribe(f, sub.token)).status, 200);
    const second = await subscribe(f, sub.token);
    assert.deepEqual([second.status, second.body.data?.message], [403, 'Unauthorized: Too many sessions for this token']);
    t.mock.timers.tick(999);
    const still = await subscribe(f, sub.token);
    assert.deepEqual([still.status, still.body.data?.message], [403, 'Unauthorized: Too many sessions for this token'], 'the JWT is valid for its whole second');
    t.mock.timers.tick(1);
    assert.equal((await subscribe(f, sub.token)).status, 200);
  });

  it('with director.admits, a director publish is a live publisher for the JWT\'s life: a second one is refused (publishConflict reject, the default) or admitted (allow)', async (t) => {
    const publish = (f: HookFixture, token: string) => request(f.t.app).post('/api/director/publish').set('authorization', `Bearer ${token}`).send({ streamName: 'cam1' });
    const f = await hookFixture({ director: { admits: true } });
    t.after(() => f.close());
    const pub = await f.token('publish');
    assert.equal((await publish(f, pub.token)).status, 200);
    const second = await publish(f, pub.token);
    assert.deepEqual([second.status, second.body.data?.message], [403, 'Unauthorized: Stream already being published']);
    const allow = await hookFixture({ director: { admits: true }, enforcement: { publishConflict: 'allow' } });
    t.after(() => allow.close());
    const open = await allow.token('publish');
    for (let i = 0; i < 2; i++) assert.equal((await publish(allow, open.token)).status, 200);
  });

  it('without it (the default), director calls count nothing and start no session', async (t) => {
    const f = await hookFixture();
    t.after(() => f.close());
    const sub = await f.token('subscribe', { maxUses: 1, maxConcurrentSessions: 1 });
    for (let i = 0; i < 3; i++) assert.equal((await subscribe(f, sub.token)).status, 200);
    const listed = await request(f.t.app).get('/api/sessions').set('authorization', `Bearer ${f.acct.secret}`);
    assert.equal(listed.body.data.pagination.totalItems, 0);
  });
});
