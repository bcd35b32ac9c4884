// The director's MediaMTX permission is a way in that never calls back: MediaMTX with
// `authMethod: jwt` admits any connection carrying it. So without director.admits (the default), a
// token whose admission does more than the director's check — counts a use or a session (maxUses,
// maxConcurrentSessions; a self-signed JWT's parent's), binds the connecting address
// (bindIpsOnUsage), refuses a held address (a cut session's hold) — gets a JWT with no
// `mediamtx_permissions`: its connection must go through the media server's call, where that is
// applied (docs/api.md#director-api-browser-sdks). With director.admits the director call is the
// admission, and the permission is given.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { hookFixture, type HookFixture } from '../hooks/fixture.js';
import { signSubscribeJwt } from '../../src/policy/self-signed.js';
import { SESSION_ID } from '../helpers/sessions.js';

const TTL = 60;

const call = (f: HookFixture, action: 'publish' | 'subscribe', token: string) =>
  request(f.t.app)
    .post(`/api/director/${action}`)
    .set('authorization', `Bearer ${token}`)
    .send(action === 'publish' ? { streamName: 'cam1', streamType: 'WebRtc' } : { streamName: 'cam1', streamAccountId: f.acct.id });

/** The JWT's claims, exactly (iat and exp checked, then left out). */
async function claimsOf(f: HookFixture, action: 'publish' | 'subscribe', token: string): Promise<Record<string, unknown>> {
  const r = await call(f, action, token);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const { iat, exp, ...claims } = decodeJwt(r.body.data.jwt as string);
  assert.equal((exp ?? 0) - (iat ?? 0), TTL);
  return claims;
}

/** The claims a JWT for cam1 carries, with or without the MediaMTX permission. */
function expected(f: HookFixture, action: 'publish' | 'subscribe', tokenId: number, permitted: boolean, customData: string | null = null): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    sub: `${f.acct.id}/cam1`,
    streaming:
      action === 'publish'
        ? { tokenId, tokenType: 'Publish', accountId: f.acct.id, streamName: 'cam1', record: false }
        : { tokenId, tokenType: 'Subscribe', accountId: f.acct.id, streamName: 'cam1' },
    millicast: {
      type: action === 'publish' ? 'Publish' : 'Subscribe',
      streamAccountId: f.acct.id,
      streamName: 'cam1',
      serverId: 'streamgate',
      record: false,
      customData,
    },
    iss: 'streamgate',
  };
  if (permitted) claims.mediamtx_permissions = [{ action: action === 'publish' ? 'publish' : 'read', path: 'cam1' }];
  return claims;
}

describe('director: no MediaMTX permission for a token whose admission the media server must make', () => {
  it('director.admits false: a maxUses 1 token gets 4 of 4 JWTs, none with a permission; an unlimited token gets its permission', async (t) => {
    const f = await hookFixture();
    t.after(() => f.close());
    const once = await f.token('subscribe', { maxUses: 1 });
    for (let i = 0; i < 4; i++) assert.deepEqual(await claimsOf(f, 'subscribe', once.token), expected(f, 'subscribe', once.id, false), `call ${i + 1}`);
    const open = await f.token('subscribe');
    assert.deepEqual(await claimsOf(f, 'subscribe', open.token), expected(f, 'subscribe', open.id, true));
  });

  it('director.admits false: maxConcurrentSessions on a publish token, and a self-signed JWT whose parent has maxUses, get no permission', async (t) => {
    const f = await hookFixture();
    t.after(() => f.close());
    const pub = await f.token('publish', { maxConcurrentSessions: 1 });
    assert.deepEqual(await claimsOf(f, 'publish', pub.token), expected(f, 'publish', pub.id, false));
    const plain = await f.token('publish');
    assert.deepEqual(await claimsOf(f, 'publish', plain.token), expected(f, 'publish', plain.id, true));

    const parent = await f.token('subscribe', { maxUses: 3 });
    const jwt = await signSubscribeJwt({ token: parent.token, tokenId: parent.id, streamName: 'cam1', customViewerData: 'seat 12', expiresInSeconds: 600 });
    assert.deepEqual(await claimsOf(f, 'subscribe', jwt), expected(f, 'subscribe', parent.id, false, 'seat 12'));
    const free = await f.token('subscribe');
    const freeJwt = await signSubscribeJwt({ token: free.token, tokenId: free.id, streamName: 'cam1', customViewerData: 'seat 12', expiresInSeconds: 600 });
    assert.deepEqual(await claimsOf(f, 'subscribe', freeJwt), expected(f, 'subscribe', free.id, true, 'seat 12'));
  });

  it('director.admits false: a bind-on-usage token gets no permission (MediaMTX would never see the connecting address)', async (t) => {
    const f = await hookFixture();
    t.after(() => f.close());
    const bound = await f.token('subscribe', { bindIpsOnUsage: 1 });
    assert.deepEqual(await claimsOf(f, 'subscribe', bound.token), expected(f, 'subscribe', bound.id, false));
    // the director's own decision still binds its caller's address, as before
    assert.deepEqual(await f.t.services.store.boundAddresses(f.acct.id, bound.id), ['127.0.0.1']);
  });

  it('director.admits false: a token held after a cut gets no permission while held; its update lifts the hold and the permission is back', async (t) => {
    const f = await hookFixture({ hooks: { trustedProxies: ['127.0.0.1'] } });
    t.after(() => f.close());
    const sub = await f.token('subscribe');
    const from = (ip: string) =>
      request(f.t.app).post('/api/director/subscribe').set('authorization', `Bearer ${sub.token}`).set('x-forwarded-for', ip).send({ streamName: 'cam1' });
    const claimsFrom = async (ip: string) => {
      const r = await from(ip);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const { iat: _i, exp: _e, ...claims } = decodeJwt(r.body.data.jwt as string);
      return claims;
    };
    assert.deepEqual(await claimsFrom('198.51.100.1'), expected(f, 'subscribe', sub.id, true));
    const play = await request(f.t.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=203.0.113.7&clientid=9&call=play&name=cam1&token=${sub.token}`);
    assert.equal(play.status, 200);
    await f.settle();
    const listed = await f.api('get', `/api/sessions?tokenId=${sub.id}`);
    assert.equal(listed.body.data.data.length, 1);
    assert.equal((await f.api('delete', `/api/sessions/${listed.body.data.data[0].id}`)).status, 200);
    // the held address is refused by the director itself; another gets a JWT MediaMTX cannot take alone
    const held = await from('203.0.113.7');
    assert.deepEqual([held.status, held.body.data?.reason], [403, 'session_terminated']);
    assert.deepEqual(await claimsFrom('198.51.100.1'), expected(f, 'subscribe', sub.id, false));
    // an update of the token lifts the hold: the permission is given again
    assert.equal((await f.api('put', `/api/subscribe_token/${sub.id}`, { label: 'again' })).status, 200);
    assert.deepEqual(await claimsFrom('198.51.100.1'), expected(f, 'subscribe', sub.id, true));
  });

  it('a token given limits after a JWT was issued never gets the JWT cached with the permission', async (t) => {
    const f = await hookFixture();
    t.after(() => f.close());
    const sub = await f.token('subscribe');
    assert.deepEqual(await claimsOf(f, 'subscribe', sub.token), expected(f, 'subscribe', sub.id, true));
    assert.equal((await f.api('put', `/api/subscribe_token/${sub.id}`, { maxUses: 1 })).status, 200);
    assert.deepEqual(await claimsOf(f, 'subscribe', sub.token), expected(f, 'subscribe', sub.id, false));
  });

  it('director.admits true: the director call is the admission, so limited, bind-on-usage and unlimited tokens get the permission', async (t) => {
    const f = await hookFixture({ director: { admits: true } });
    t.after(() => f.close());
    const once = await f.token('subscribe', { maxUses: 1 });
    assert.deepEqual(await claimsOf(f, 'subscribe', once.token), expected(f, 'subscribe', once.id, true));
    const second = await call(f, 'subscribe', once.token);
    assert.deepEqual([second.status, second.body.data?.reason], [403, 'uses_exhausted']);
    const pub = await f.token('publish', { maxConcurrentSessions: 2 });
    assert.deepEqual(await claimsOf(f, 'publish', pub.token), expected(f, 'publish', pub.id, true));
    const bound = await f.token('subscribe', { bindIpsOnUsage: 1 });
    assert.deepEqual(await claimsOf(f, 'subscribe', bound.token), expected(f, 'subscribe', bound.id, true));
    const open = await f.token('subscribe');
    assert.deepEqual(await claimsOf(f, 'subscribe', open.token), expected(f, 'subscribe', open.id, true));
  });

  it('director.admits true: an unlimited token\'s call registers exactly one session, as a limited token\'s does', async (t) => {
    const f = await hookFixture({ director: { admits: true } });
    t.after(() => f.close());
    const sessionsOf = async (tokenId: number) => {
      await f.settle();
      return f.t.services.store.listSessions(f.acct.id, { tokenId }, { offset: 0, limit: 10 });
    };
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const registered = async (tokenId: number) => {
      const { total, items } = await sessionsOf(tokenId);
      assert.equal(total, 1);
      assert.equal(items.length, 1);
      const { id, sessionId, startedOn, lastSeenOn, ...rest } = items[0];
      assert.match(id, SESSION_ID);
      assert.match(sessionId, UUID);
      assert.equal(startedOn, lastSeenOn);
      assert.ok(Math.abs(Date.parse(startedOn) - Date.now()) < 60_000, startedOn);
      return rest;
    };
    const fields = (tokenId: number) => ({ caller: 'director', action: 'subscribe', accountId: f.acct.id, streamName: 'cam1', tokenId, clientIp: '127.0.0.1', protocol: 'webrtc' });

    const open = await f.token('subscribe');
    assert.deepEqual(await claimsOf(f, 'subscribe', open.token), expected(f, 'subscribe', open.id, true));
    assert.deepEqual(await registered(open.id), fields(open.id));

    const limited = await f.token('subscribe', { maxConcurrentSessions: 5 });
    assert.deepEqual(await claimsOf(f, 'subscribe', limited.token), expected(f, 'subscribe', limited.id, true));
    assert.deepEqual(await registered(limited.id), fields(limited.id));
  });
});
