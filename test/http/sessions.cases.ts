// Running-session control over HTTP, against every store backend (docs/api.md#running-sessions):
// sessions admitted through the real caller hooks (SRS http_hooks mostly), listed and cut through
// /api/sessions, held after a cut, limited by a token's maxConcurrentSessions / maxUses, settled by
// enforcement.publishConflict, stopped through the hosted stream stop calls, ended by the token
// changes listed in enforcement.terminateOn, and seen in webhooks, monitoring and /metrics.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { ADMIN_KEY, testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/until.js';
import { SESSION_ID } from '../helpers/sessions.js';

const IP_A = '203.0.113.7';
const IP_B = '203.0.113.8';
const SERVER = 'vid-0xk989d';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const OK = '200 {"code":0}';
const refused = (message: string) => `403 ${JSON.stringify({ code: 403, message })}`;
const LIMIT = refused('Unauthorized: Too many sessions for this token');
const USED = refused('Unauthorized: Token already used');
const TAKEN = refused('Unauthorized: Stream already being published');
const HELD = refused('Unauthorized: Session terminated');

type View = Record<string, unknown> & { id: string; startedAt: string };

export function sessionsSuite(factory: StoreFactory): void {
  describe(`running sessions over HTTP: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    let rx: Receiver;
    before(async () => {
      await factory.setup();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await factory.teardown();
    });

    /**
     * A new app on a new store, with one account. `now`: the clock of the store and the app; by
     * default Date.now, read at each call, so a test's mocked Date moves them.
     */
    const fresh = async (overrides: Record<string, unknown> = {}, now: () => number = () => Date.now()) => {
      t = await testApp(await factory.make({ now }), overrides, { now });
      acct = await t.account();
    };
    const api = (secret = acct.secret) => {
      const auth = { authorization: `Bearer ${secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, b?: unknown) => (b === undefined ? request(t.app).post(p).set(auth) : request(t.app).post(p).set(auth).send(b as object)),
        put: (p: string, b: object) => request(t.app).put(p).set(auth).send(b),
        del: (p: string) => request(t.app).delete(p).set(auth),
      };
    };
    const mk = async (kind: 'publish' | 'subscribe', body: Record<string, unknown> = {}) => {
      const r = await api().post(`/api/${kind}_token`, { label: 'x', streams: [{ streamName: 'cam[0-9]+', isRegex: true }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; token: string } & Record<string, unknown>;
    };
    const settle = () => t.services.lifecycle.idle();

    /** One SRS http_hooks call: "status body". */
    const srs = async (action: string, o: { client: string; token?: string; ip?: string; stream?: string }) => {
      const r = await request(t.app)
        .post('/hooks/srs')
        .send({
          server_id: SERVER,
          action,
          client_id: o.client,
          ip: o.ip ?? IP_A,
          vhost: '__defaultVhost__',
          app: 'live',
          tcUrl: 'rtmp://host/live',
          stream: o.stream ?? 'cam1',
          param: o.token ? `?token=${o.token}` : '',
          stream_id: `vid-${o.stream ?? 'cam1'}`,
        });
      await settle();
      return `${r.status} ${r.text}`;
    };
    const play = (client: string, token: string, o: { ip?: string; stream?: string } = {}) => srs('on_play', { client, token, ...o });
    const publish = (client: string, token: string, o: { ip?: string; stream?: string } = {}) => srs('on_publish', { client, token, ...o });

    /** The account's live sessions (all of them, one page). */
    const live = async (query = '') => {
      const r = await api().get(`/api/sessions${query}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { pagination: { totalItems: number; totalPages: number; itemsOnPage: number }; data: View[] };
    };
    const liveIds = async (query = '') => (await live(query)).data.map((s) => s.callerSessionId);
    const session = async (id: string) => {
      const r = await api().get(`/api/sessions/${id}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as View;
    };
    const byClient = async (client: string) => {
      const s = (await live()).data.find((x) => x.callerSessionId === `${SERVER}#${client}`);
      assert.ok(s, `no live session of client ${client}`);
      return s;
    };
    /** Waits for GET /api/sessions/:id to show the session ended: its endedReason. */
    const endedReason = async (id: string) => {
      let ended: unknown = null;
      await until(
        async () => {
          ended = (await session(id)).endedReason;
          return ended !== null;
        },
        5000,
        `session ${id} to end`,
      );
      return ended;
    };

    describe('GET /api/sessions and DELETE /api/sessions/:id', () => {
      it('lists the admitted sessions, oldest first, with the exact view', async (ctx) => {
        ctx.mock.timers.enable({ apis: ['Date'], now: Date.now() });
        await fresh();
        const p = await mk('publish');
        const v = await mk('subscribe', { tracking: { trackingId: 'fans' } });
        assert.equal(await publish('p1', p.token), OK);
        ctx.mock.timers.tick(5);
        assert.equal(await play('v1', v.token, { ip: IP_B }), OK);
        const { pagination, data } = await live();
        assert.deepEqual(pagination, { totalItems: 2, totalPages: 1, itemsOnPage: 25 });
        const [pub, view] = data;
        for (const s of data) {
          assert.match(s.id, SESSION_ID);
          assert.match(s.startedAt, ISO);
        }
        assert.deepEqual(pub, {
          id: pub.id,
          caller: 'srs',
          callerSessionId: `${SERVER}#p1`,
          accountId: acct.id,
          tokenId: p.id,
          streamId: `${acct.id}/cam1`,
          streamName: 'cam1',
          direction: 'publish',
          clientIp: IP_A,
          protocol: 'rtmp',
          trackingId: null,
          startedAt: pub.startedAt,
          lastSeenAt: pub.startedAt,
          endedReason: null,
          endedAt: null,
        });
        assert.deepEqual(view, {
          id: view.id,
          caller: 'srs',
          callerSessionId: `${SERVER}#v1`,
          accountId: acct.id,
          tokenId: v.id,
          streamId: `${acct.id}/cam1`,
          streamName: 'cam1',
          direction: 'subscribe',
          clientIp: IP_B,
          protocol: 'rtmp',
          trackingId: 'fans',
          startedAt: view.startedAt,
          lastSeenAt: view.startedAt,
          endedReason: null,
          endedAt: null,
        });
        assert.ok(pub.startedAt < view.startedAt, 'oldest first');
        assert.deepEqual(await session(view.id), view);
        // a viewer's own end (on_stop) takes it off the list
        assert.equal(await srs('on_stop', { client: 'v1', token: v.token }), OK);
        assert.deepEqual(await liveIds(), [`${SERVER}#p1`]);
        assert.equal((await session(view.id)).endedReason, 'done');
      });

      it('filters by streamId (hosted and bare), tokenId and direction, and pages', async (ctx) => {
        ctx.mock.timers.enable({ apis: ['Date'], now: Date.now() });
        await fresh();
        const p = await mk('publish');
        const v1 = await mk('subscribe');
        const v2 = await mk('subscribe');
        assert.equal(await publish('p1', p.token), OK);
        for (const [client, tok, stream] of [
          ['a', v1.token, 'cam1'],
          ['b', v1.token, 'cam1'],
          ['c', v2.token, 'cam1'],
          ['d', v2.token, 'cam2'],
        ] as const) {
          ctx.mock.timers.tick(3);
          assert.equal(await play(client, tok, { stream }), OK, client);
        }
        const ids = (...c: string[]) => c.map((x) => `${SERVER}#${x}`);
        assert.deepEqual(await liveIds(), ids('p1', 'a', 'b', 'c', 'd'));
        assert.deepEqual(await liveIds(`?streamId=${acct.id}/cam1`), ids('p1', 'a', 'b', 'c'));
        assert.deepEqual(await liveIds(`?streamId=${encodeURIComponent(`${acct.id}/cam1`)}`), ids('p1', 'a', 'b', 'c'));
        assert.deepEqual(await liveIds('?streamId=cam1'), ids('p1', 'a', 'b', 'c'));
        assert.deepEqual(await liveIds('?streamId=cam2'), ids('d'));
        assert.deepEqual(await liveIds('?streamId=cam3'), []);
        assert.deepEqual(await liveIds(`?tokenId=${v1.id}`), ids('a', 'b'));
        assert.deepEqual(await liveIds(`?tokenId=${v2.id}&streamId=cam1`), ids('c'));
        assert.deepEqual(await liveIds('?direction=publish'), ids('p1'));
        assert.deepEqual(await liveIds('?direction=subscribe&streamId=cam1'), ids('a', 'b', 'c'));
        const page2 = await live('?itemsOnPage=2&page=2');
        assert.deepEqual(page2.pagination, { totalItems: 5, totalPages: 3, itemsOnPage: 2 });
        assert.deepEqual(
          page2.data.map((s) => s.callerSessionId),
          ids('b', 'c'),
        );
        const page3 = await live('?itemsOnPage=2&page=3');
        assert.deepEqual(
          page3.data.map((s) => s.callerSessionId),
          ids('d'),
        );
        assert.deepEqual((await live('?itemsOnPage=2&page=4')).data, []);
      });

      it("hides one account's sessions from another: list, read and cut all answer as if there were none", async () => {
        await fresh();
        const v = await mk('subscribe');
        assert.equal(await play('v1', v.token), OK);
        const mine = await byClient('v1');
        const other = await t.account('other');
        const r = await api(other.secret).get('/api/sessions');
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: { pagination: { totalItems: 0, totalPages: 0, itemsOnPage: 25 }, data: [] } }]);
        const read = await api(other.secret).get(`/api/sessions/${mine.id}`);
        assert.deepEqual([read.status, read.body.data.message], [404, `No session with id: ${mine.id}`]);
        const cut = await api(other.secret).del(`/api/sessions/${mine.id}`);
        assert.deepEqual([cut.status, cut.body.data.message], [404, `No live session with id: ${mine.id}`]);
        assert.deepEqual(await session(mine.id), mine);
        assert.equal(await play('v2', v.token), OK, 'no hold was placed');
      });

      it('answers 404 for an unknown id and 400 naming the field for a bad query', async () => {
        await fresh();
        const id = '00000000-0000-4000-8000-000000000000';
        const g = await api().get(`/api/sessions/${id}`);
        assert.deepEqual([g.status, g.body], [404, { status: 'fail', data: { message: `No session with id: ${id}` } }]);
        const d = await api().del(`/api/sessions/${id}`);
        assert.deepEqual([d.status, d.body], [404, { status: 'fail', data: { message: `No live session with id: ${id}` } }]);
        for (const [query, field] of [
          ['tokenId=abc', 'tokenId'],
          ['tokenId=0', 'tokenId'],
          ['direction=x', 'direction'],
          ['itemsOnPage=0', 'itemsOnPage'],
          ['itemsOnPage=101', 'itemsOnPage'],
          ['page=0', 'page'],
        ]) {
          const r = await api().get(`/api/sessions?${query}`);
          assert.equal(r.status, 400, query);
          assert.equal(r.body.status, 'fail', query);
          assert.equal(r.body.data.message, 'Validation errors', query);
          assert.deepEqual(Object.keys(r.body.data.errors), [field], query);
        }
        assert.equal((await request(t.app).get('/api/sessions')).status, 401);
      });

      it('a cut ends the session (stopped), holds the token from that address until an update, and is not repeated', async () => {
        await fresh();
        const v = await mk('subscribe');
        assert.equal(await play('v1', v.token), OK);
        const s = await byClient('v1');
        const cut = await api().del(`/api/sessions/${s.id}`);
        assert.equal(cut.status, 200, JSON.stringify(cut.body));
        assert.match(cut.body.data.endedAt, ISO);
        assert.deepEqual(cut.body.data, { ...s, lastSeenAt: cut.body.data.lastSeenAt, endedReason: 'stopped', endedAt: cut.body.data.endedAt });
        assert.deepEqual(await session(s.id), cut.body.data);
        assert.deepEqual(await liveIds(), []);
        const again = await api().del(`/api/sessions/${s.id}`);
        assert.deepEqual([again.status, again.body.data.message], [404, `No live session with id: ${s.id}`]);

        assert.equal(await play('v2', v.token), HELD, 'the same token from the same address');
        assert.equal(await play('v3', v.token, { ip: IP_B }), OK, 'from another address');
        const check = await api().post(`/api/subscribe_token/${v.id}/check`, { streamName: 'cam1', clientIp: IP_A });
        assert.equal(check.body.data.reason, 'session_terminated');
        const u = await api().put(`/api/subscribe_token/${v.id}`, { label: 'renamed' });
        assert.equal(u.status, 200);
        assert.equal(await play('v4', v.token), OK, 'an update lifts the hold');
      });

      it('an nginx-rtmp re-ask (on_update) of a cut session is refused; of a live one admitted', async () => {
        await fresh();
        const p = await mk('publish');
        const rtmp = async (call: string, clientid: string) => {
          const r = await request(t.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=${IP_A}&clientid=${clientid}&call=${call}&name=cam1&type=live&token=${p.token}`);
          await settle();
          return `${r.status} ${r.text}`;
        };
        assert.equal(await rtmp('publish', '11'), '200 OK');
        assert.equal(await rtmp('update_publish', '11'), '200 OK');
        const s = (await live()).data[0];
        assert.deepEqual([s.caller, s.direction, s.clientIp], ['nginx-rtmp', 'publish', IP_A]);
        assert.equal((await api().del(`/api/sessions/${s.id}`)).status, 200);
        assert.equal(await rtmp('update_publish', '11'), '403 Unauthorized: Session terminated');
      });

      it('with terminatedHoldSeconds: 1 the hold ends by itself after a second', async (ctx) => {
        ctx.mock.timers.enable({ apis: ['Date'], now: Date.now() });
        await fresh({ enforcement: { terminatedHoldSeconds: 1 } });
        const v = await mk('subscribe');
        assert.equal(await play('v1', v.token), OK);
        const s = await byClient('v1');
        assert.equal((await api().del(`/api/sessions/${s.id}`)).status, 200);
        assert.equal(await play('v2', v.token), HELD);
        ctx.mock.timers.tick(999);
        assert.equal(await play('v3', v.token), HELD, 'held for the whole second');
        ctx.mock.timers.tick(1);
        assert.equal(await play('v4', v.token), OK);
      });

      it('with terminatedHoldSeconds: 0 nothing is held', async () => {
        await fresh({ enforcement: { terminatedHoldSeconds: 0 } });
        const v = await mk('subscribe');
        assert.equal(await play('v1', v.token), OK);
        assert.equal((await api().del(`/api/sessions/${(await byClient('v1')).id}`)).status, 200);
        assert.equal(await play('v2', v.token), OK);
      });
    });

    describe('token limits', () => {
      it('maxConcurrentSessions: 1 refuses a second viewer while the first is live (session_limit), admits one after it is done', async () => {
        await fresh();
        const v = await mk('subscribe', { maxConcurrentSessions: 1 });
        assert.equal(v.maxConcurrentSessions, 1);
        assert.equal('maxUses' in v, false);
        assert.equal(await play('v1', v.token), OK);
        assert.equal(await play('v2', v.token, { ip: IP_B }), LIMIT);
        assert.equal(await play('v3', v.token, { stream: 'cam2' }), LIMIT, 'counted per token, not per stream');
        assert.deepEqual(await liveIds(), [`${SERVER}#v1`]);
        assert.equal(await srs('on_stop', { client: 'v1', token: v.token }), OK);
        assert.equal(await play('v4', v.token, { ip: IP_B }), OK);
        assert.deepEqual(await liveIds(), [`${SERVER}#v4`]);
        // another token is not counted against it
        const free = await mk('subscribe');
        assert.equal(await play('v5', free.token), OK);
      });

      it('concurrent admissions against maxConcurrentSessions: 3 admit exactly 3', async () => {
        // 30 decisions at once on a loaded machine: no store call may be taken for unreachable (503)
        await fresh({ enforcement: { storeTimeoutMs: 5000 } });
        const v = await mk('subscribe', { maxConcurrentSessions: 3 });
        const answers = await Promise.all(Array.from({ length: 30 }, (_x, i) => play(`c${i}`, v.token, { ip: `198.51.100.${i + 1}` })));
        assert.deepEqual([answers.filter((a) => a === OK).length, answers.filter((a) => a === LIMIT).length], [3, 27], [...new Set(answers)].join('\n'));
        assert.equal((await live()).pagination.totalItems, 3);
      });

      it('the limited session is registered in the decision itself (listed before the lifecycle queue runs)', async () => {
        await fresh();
        const v = await mk('subscribe', { maxConcurrentSessions: 2 });
        const r = await request(t.app)
          .post('/hooks/srs')
          .send({ server_id: SERVER, action: 'on_play', client_id: 'v1', ip: IP_A, app: 'live', tcUrl: 'rtmp://host/live', stream: 'cam1', param: `?token=${v.token}` });
        assert.equal(r.text, '{"code":0}');
        assert.deepEqual(await liveIds(), [`${SERVER}#v1`]);
        await settle();
      });

      it('maxUses: 1 admits one session ever (uses_exhausted after it)', async () => {
        await fresh();
        const v = await mk('subscribe', { maxUses: 1 });
        assert.deepEqual([v.maxUses, 'maxConcurrentSessions' in v], [1, false]);
        assert.equal(await play('v1', v.token), OK);
        assert.equal(await play('v2', v.token, { ip: IP_B }), USED);
        assert.equal(await srs('on_stop', { client: 'v1', token: v.token }), OK);
        assert.equal(await play('v3', v.token), USED, 'a use is spent when it ends');
        // an update that removes the limit (0) lets it on again
        const u = await api().put(`/api/subscribe_token/${v.id}`, { maxUses: 0 });
        assert.deepEqual([u.status, 'maxUses' in u.body.data], [200, false]);
        assert.equal(await play('v4', v.token), OK);
      });

      it('a limited token is a viewer session at auth_request, and refused at /hooks/authorize (no session there): session_limit, the message naming HTTP streaming', async () => {
        await fresh({ hooks: { trustedProxies: ['127.0.0.1', '::ffff:127.0.0.1'] } });
        const v = await mk('subscribe', { maxConcurrentSessions: 3 });
        const free = await mk('subscribe');
        const ask = (token: string) =>
          request(t.app)
            .get('/hooks/auth-request')
            .set({ 'x-original-uri': `/hls/cam1/index.m3u8?token=${token}`, 'x-forwarded-for': IP_A });
        assert.equal((await ask(free.token)).status, 200);
        const r = await ask(v.token);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const generic = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', token: v.token, streamName: 'cam1', clientIp: IP_A });
        assert.deepEqual([generic.status, generic.body.reason], [403, 'session_limit']);
        // docs/api.md#session-limits: the refusal says why (this endpoint starts no countable session)
        assert.match(generic.body.message, /HTTP streaming/);
        // the two auth_request viewers are viewer sessions (docs/callers.md#http-viewer-sessions)
        assert.equal((await live('?direction=subscribe')).data.filter((s) => s.caller === 'auth-request').length, 2);
      });

      it('validates the limits on create and update; an update of 0 removes one', async () => {
        await fresh();
        for (const [body, field] of [
          [{ maxConcurrentSessions: -1 }, 'maxConcurrentSessions'],
          [{ maxUses: -2 }, 'maxUses'],
          [{ maxUses: 1.5 }, 'maxUses'],
          [{ maxConcurrentSessions: 'two' }, 'maxConcurrentSessions'],
        ] as const) {
          const r = await api().post('/api/subscribe_token', { label: 'x', streams: [{ streamName: 'cam1' }], ...body });
          assert.equal(r.status, 400, JSON.stringify(body));
          assert.deepEqual(Object.keys(r.body.data.errors ?? {}), [field], JSON.stringify(r.body));
        }
        const p = await mk('publish', { maxConcurrentSessions: 2, maxUses: 5 });
        assert.deepEqual([p.maxConcurrentSessions, p.maxUses], [2, 5]);
        assert.deepEqual([(await api().get(`/api/publish_token/${p.id}`)).body.data.maxConcurrentSessions, (await api().get(`/api/publish_token/${p.id}`)).body.data.maxUses], [2, 5]);
        const bad = await api().put(`/api/publish_token/${p.id}`, { maxUses: -1 });
        assert.deepEqual([bad.status, Object.keys(bad.body.data.errors ?? {})], [400, ['maxUses']]);
        const u = await api().put(`/api/publish_token/${p.id}`, { maxConcurrentSessions: 0 });
        assert.equal(u.status, 200);
        assert.deepEqual(['maxConcurrentSessions' in u.body.data, u.body.data.maxUses], [false, 5]);
        const plain = await mk('subscribe');
        assert.deepEqual(['maxConcurrentSessions' in plain, 'maxUses' in plain], [false, false]);
      });
    });

    describe('enforcement.publishConflict', () => {
      it('reject (the default, as on the hosted platform): a second publisher of a live stream is refused (stream_taken) until the first is done', async () => {
        await fresh();
        assert.equal(t.services.config.enforcement.publishConflict, 'reject');
        const p = await mk('publish');
        const q = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await publish('p2', q.token, { ip: IP_B }), TAKEN);
        assert.equal(await publish('p3', p.token, { stream: 'cam2' }), OK, 'another stream');
        assert.deepEqual(await liveIds('?streamId=cam1'), [`${SERVER}#p1`]);
        assert.equal(await srs('on_unpublish', { client: 'p1', token: p.token }), OK);
        assert.equal(await publish('p4', q.token, { ip: IP_B }), OK);
        assert.deepEqual(await liveIds('?streamId=cam1'), [`${SERVER}#p4`]);
      });

      it('replace: the second publisher is admitted and the first ends (replaced)', async () => {
        await fresh({ enforcement: { publishConflict: 'replace' } });
        const p = await mk('publish');
        const q = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        const first = await byClient('p1');
        assert.equal(await publish('p2', q.token, { ip: IP_B }), OK);
        assert.equal(await endedReason(first.id), 'replaced');
        assert.deepEqual(await liveIds('?direction=publish'), [`${SERVER}#p2`]);
        assert.equal(await publish('p3', p.token), OK, 'a replaced publisher is not held');
      });

      it('allow: both publishers are admitted (the media server decides)', async () => {
        await fresh({ enforcement: { publishConflict: 'allow' } });
        const p = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await publish('p2', p.token, { ip: IP_B }), OK);
        assert.deepEqual(await liveIds(), [`${SERVER}#p1`, `${SERVER}#p2`]);
      });
    });

    describe('POST /api/stream/stop and /api/stream/stop/all', () => {
      it("stop ends the stream's publishers (Stream), not its viewers; None when nothing is live; the publisher is held", async () => {
        await fresh();
        const p = await mk('publish');
        const v = await mk('subscribe');
        const none = await api().post('/api/stream/stop', { streamId: `${acct.id}/cam1` });
        assert.deepEqual([none.status, none.body], [200, { status: 'success', data: { stoppingLevel: 'None' } }]);
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await publish('p2', p.token, { stream: 'cam2' }), OK);
        assert.equal(await play('v1', v.token), OK);
        const pub = await byClient('p1');
        const r = await api().post('/api/stream/stop', { streamId: `${acct.id}/cam1` });
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: { stoppingLevel: 'Stream' } }]);
        assert.equal((await session(pub.id)).endedReason, 'stopped');
        assert.deepEqual(await liveIds(), [`${SERVER}#p2`, `${SERVER}#v1`]);
        assert.deepEqual((await api().post('/api/stream/stop', { streamId: `${acct.id}/cam1` })).body.data, { stoppingLevel: 'None' });
        assert.equal(await publish('p3', p.token), HELD);
        // the bare name
        assert.deepEqual((await api().post('/api/stream/stop', { streamId: 'cam2' })).body.data, { stoppingLevel: 'Stream' });
        assert.deepEqual(await liveIds(), [`${SERVER}#v1`]);
      });

      it('stop/all ends every publisher of the account (Account), with no body or a JSON null; None after', async () => {
        await fresh();
        const p = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await publish('p2', p.token, { stream: 'cam2', ip: IP_B }), OK);
        const other = await t.account('other');
        const theirs = (await api(other.secret).post('/api/publish_token', { label: 'o', streams: [{ streamName: 'cam1' }] })).body.data;
        assert.equal(await publish('o1', theirs.token), OK);
        const r = await api().post('/api/stream/stop/all');
        assert.deepEqual([r.status, r.body], [200, { status: 'success', data: { stoppingLevel: 'Account' } }]);
        assert.deepEqual(await liveIds(), []);
        assert.deepEqual(
          (await api(other.secret).get('/api/sessions')).body.data.data.map((s: View) => s.callerSessionId),
          [`${SERVER}#o1`],
          "another account's publisher is untouched",
        );
        const n = await request(t.app).post('/api/stream/stop/all').set({ authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' }).send('null');
        assert.deepEqual([n.status, n.body], [200, { status: 'success', data: { stoppingLevel: 'None' } }]);
        const theirsAll = await request(t.app).post('/api/stream/stop/all').set({ authorization: `Bearer ${other.secret}`, 'content-type': 'application/json' }).send('null');
        assert.deepEqual(theirsAll.body.data, { stoppingLevel: 'Account' });
      });

      it('answers 400 naming streamId for a body without it or with a number', async () => {
        await fresh();
        for (const body of [{}, { streamId: 5 }, { streamId: '' }]) {
          const r = await api().post('/api/stream/stop', body);
          assert.equal(r.status, 400, JSON.stringify(body));
          assert.deepEqual([r.body.status, r.body.data.message, Object.keys(r.body.data.errors ?? {})], ['fail', 'Validation errors', ['streamId']], JSON.stringify(r.body));
        }
        const none = await api().post('/api/stream/stop');
        assert.equal(none.status, 400);
      });
    });

    describe('enforcement.terminateOn', () => {
      it('default [delete]: deleting the token ends its sessions (token_revoked); disabling it does not', async () => {
        await fresh();
        const p = await mk('publish');
        const q = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await publish('q1', q.token, { stream: 'cam2' }), OK);
        const [s1, s2] = [await byClient('p1'), await byClient('q1')];
        assert.equal((await api().put(`/api/publish_token/${q.id}`, { isActive: false })).status, 200);
        assert.equal((await api().del(`/api/publish_token/${p.id}`)).status, 200);
        assert.equal(await endedReason(s1.id), 'token_revoked');
        // the disable's change was taken up when it was made, before the delete's: had it ended s2, s2 would show it by now
        assert.equal((await session(s2.id)).endedReason, null, 'disable is not listed');
      });

      it('[disable, refresh]: disabling one token and refreshing another end their sessions; deleting a third does not', async () => {
        await fresh({ enforcement: { terminateOn: ['disable', 'refresh'] } });
        const [a, b, c] = [await mk('publish'), await mk('publish'), await mk('publish')];
        assert.equal(await publish('a', a.token, { stream: 'cam1' }), OK);
        assert.equal(await publish('b', b.token, { stream: 'cam2' }), OK);
        assert.equal(await publish('c', c.token, { stream: 'cam3' }), OK);
        const [sa, sb, sc] = [await byClient('a'), await byClient('b'), await byClient('c')];
        assert.equal((await api().put(`/api/publish_token/${a.id}`, { isActive: false })).status, 200);
        const r = await api().put(`/api/publish_token/${b.id}`, { refreshToken: true });
        assert.equal(r.status, 200);
        assert.notEqual(r.body.data.token, b.token);
        assert.equal((await api().del(`/api/publish_token/${c.id}`)).status, 200);
        assert.equal(await endedReason(sa.id), 'token_revoked');
        assert.equal(await endedReason(sb.id), 'token_revoked');
        // the delete's change was taken up when it was made, after the disable's and the refresh's: had it ended sc, sc would show it by now
        assert.equal((await session(sc.id)).endedReason, null, 'delete is not listed');
      });

      it('[secretDeleted]: deleting the account API secret ends every session of the account (secret_deleted)', async () => {
        await fresh({ enforcement: { terminateOn: ['secretDeleted'] } });
        const p = await mk('publish');
        const v = await mk('subscribe');
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await play('v1', v.token, { ip: IP_B }), OK);
        const ids = (await live()).data.map((s) => s.id);
        const other = await t.account('other');
        const theirs = (await api(other.secret).post('/api/subscribe_token', { label: 'o', streams: [{ streamName: 'cam1' }] })).body.data;
        assert.equal(await play('o1', theirs.token), OK);
        const admin = { authorization: `Bearer ${ADMIN_KEY}` };
        const d = await request(t.app).delete(`/admin/accounts/${acct.id}/secret`).set(admin);
        assert.deepEqual([d.status, d.body], [200, { status: 'success', data: true }]);
        assert.equal((await request(t.app).get('/api/sessions').set({ authorization: `Bearer ${acct.secret}` })).status, 401);
        const fresh2 = await request(t.app).post(`/admin/accounts/${acct.id}/secret`).set(admin);
        acct = { ...acct, secret: fresh2.body.data.apiSecret };
        for (const id of ids) assert.equal(await endedReason(id), 'secret_deleted');
        assert.deepEqual(await liveIds(), []);
        assert.equal((await api(other.secret).get('/api/sessions')).body.data.pagination.totalItems, 1, "another account's session is untouched");
      });

      it('[expire]: a session of a token that expires in 2 s ends at the first expiry sweep from then (token_expired)', async (ctx) => {
        // The expiry sweeper's interval is a timer of the mocked clock, and the app reads the test's
        // clock: the sweeps run only when the test moves them, at the time the test sets.
        ctx.mock.timers.enable({ apis: ['setInterval'] });
        const made = Date.now();
        let clock = made;
        await fresh({ enforcement: { terminateOn: ['expire'] } }, () => clock);
        const v = await mk('subscribe', { expires: 2 });
        assert.equal(await play('v1', v.token), OK);
        const s = await byClient('v1');
        clock = made + 1999;
        await t.services.sessions.sweep(); // no sweep of the sweeper's own is under way: this one runs to the end
        assert.equal((await session(s.id)).endedReason, null, 'not expired yet');
        clock = made + 2000;
        ctx.mock.timers.tick(250); // the sweeper's next sweep (enforcement sweeps every 250 ms)
        assert.equal(await endedReason(s.id), 'token_expired');
      });
    });

    describe('events', () => {
      const hookSettle = async () => {
        await settle();
        await new Promise((r) => setImmediate(r));
        await t.services.dispatcher.idle();
      };
      const freshHooks = async (enforcement: Record<string, unknown> = {}, now?: () => number) => {
        await fresh({ enforcement, webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: 2000, retries: 0 } }, now);
        rx.received.length = 0;
      };
      const bodies = () => rx.received.map((r) => JSON.parse(r.body.toString()) as { type: string; event: string; data: Record<string, unknown> });

      it('feeds ended carries the reason of a stop', async () => {
        await freshHooks();
        const w = await api().post('/api/webhooks', { url: `${rx.url}/feeds`, isFeedHooks: true });
        assert.equal(w.status, 200);
        const p = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        assert.deepEqual((await api().post('/api/stream/stop', { streamId: 'cam1' })).body.data, { stoppingLevel: 'Stream' });
        await hookSettle();
        const got = bodies();
        assert.deepEqual(
          got.map((b) => [b.type, b.event, b.data.reason]),
          [
            ['feeds', 'started', undefined],
            ['feeds', 'ended', 'stopped'],
          ],
        );
        assert.deepEqual([got[1].data.name, got[1].data.tokenId, got[1].data.active, got[1].data.feedId], ['cam1', p.id, false, got[0].data.feedId]);
      });

      it("feeds ended carries done for the media server's own end", async () => {
        await freshHooks();
        await api().post('/api/webhooks', { url: `${rx.url}/feeds`, isFeedHooks: true });
        const p = await mk('publish');
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await srs('on_unpublish', { client: 'p1', token: p.token }), OK);
        await hookSettle();
        assert.deepEqual(
          bodies().map((b) => [b.event, b.data.reason]),
          [
            ['started', undefined],
            ['ended', 'done'],
          ],
        );
      });

      it('viewerConnection: ViewerAttempt for a viewer of a stream not live (one per 10 s), FirstViewerConnection when the watch begins, NoActiveViewers 60 s after the last viewer left', async (ctx) => {
        // The app and store read Date.now() late, so the mocked clock (from just before the last
        // viewer leaves) moves the 60 s; until then the clock is the real one.
        await freshHooks();
        const w = await api().post('/api/webhooks', { url: `${rx.url}/viewers`, isFeedHooks: false, isViewerConnectionHooks: true });
        assert.equal(w.status, 200);
        const v = await mk('subscribe');
        const p = await mk('publish');
        const seen = async () => {
          await hookSettle();
          const out = bodies().map((b) => `${b.type} ${b.event}`);
          rx.received.length = 0;
          return out;
        };
        const data = { name: 'cam1', accountId: acct.id, streamId: `${acct.id}/cam1` };
        assert.equal(await play('v1', v.token), OK);
        await hookSettle();
        const [attempt] = bodies();
        assert.deepEqual(attempt, { type: 'viewerConnection', event: 'ViewerAttempt', timestamp: (attempt as unknown as { timestamp: number }).timestamp, data });
        rx.received.length = 0;
        assert.equal(await play('v2', v.token, { ip: IP_B }), OK);
        assert.deepEqual(await seen(), [], 'within 10 s of the last ViewerAttempt');
        assert.equal(await publish('p1', p.token), OK);
        assert.deepEqual(await seen(), ['viewerConnection FirstViewerConnection'], 'the viewers waiting begin the watch when the stream goes live');
        assert.equal(await play('v3', v.token), OK);
        assert.equal(await srs('on_stop', { client: 'v1', token: v.token }), OK);
        assert.equal((await api().del(`/api/sessions/${(await byClient('v2')).id}`)).status, 200);
        assert.deepEqual(await seen(), [], 'live: no ViewerAttempt; viewers left');

        ctx.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
        assert.equal(await srs('on_stop', { client: 'v3', token: v.token }), OK);
        const left = Date.now();
        assert.deepEqual(await seen(), [], 'not when the last viewer leaves');
        ctx.mock.timers.tick(30_000);
        assert.equal(await play('v4', v.token), OK);
        assert.deepEqual(await seen(), [], 'a viewer within the 60 s: the watch goes on');
        ctx.mock.timers.tick(30_000);
        assert.deepEqual(await seen(), [], 'no NoActiveViewers: v4 watches');
        assert.equal(await srs('on_stop', { client: 'v4', token: v.token }), OK);
        await hookSettle();
        ctx.mock.timers.tick(59_999);
        assert.deepEqual(await seen(), []);
        ctx.mock.timers.tick(1);
        await hookSettle();
        assert.deepEqual(bodies(), [{ type: 'viewerConnection', event: 'NoActiveViewers', timestamp: left + 120_000, data }]);
        rx.received.length = 0;
        assert.equal(await play('v5', v.token), OK);
        assert.deepEqual(await seen(), ['viewerConnection FirstViewerConnection'], 'a new watch');
        ctx.mock.timers.reset();
      });
    });

    describe('monitoring and metrics', () => {
      it('GET /api/monitoring/streams lists a live stream with its viewer count; /:name reads one; 404 for one not live', async () => {
        await fresh();
        const p = await mk('publish', { record: true });
        const v = await mk('subscribe');
        const empty = await api().get('/api/monitoring/streams');
        assert.deepEqual([empty.status, empty.body.data], [200, { pagination: { totalItems: 0, totalPages: 0, itemsOnPage: 10 }, data: [] }]);
        assert.equal(await publish('p1', p.token), OK);
        assert.equal(await play('v1', v.token), OK);
        assert.equal(await play('v2', v.token, { ip: IP_B }), OK);
        assert.equal(await play('v3', v.token, { stream: 'cam2' }), OK, 'a viewer of a stream not live');
        const pub = await byClient('p1');
        const r = await api().get('/api/monitoring/streams');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const feedId = r.body.data.data[0]?.feeds?.[0]?.feedId;
        assert.match(String(feedId), UUID);
        const details = {
          streamId: `${acct.id}/cam1`,
          streamName: 'cam1',
          clusters: [],
          secureStream: false,
          isRecordingAllowed: true,
          multisource: true, // the hosted default of a publish token
          live: true,
          startTime: pub.startedAt,
          endTime: null,
          viewerCount: 2,
          hasRedundant: false,
          restreaming: false,
          feeds: [{ streamId: `${acct.id}/cam1`, feedId, serverId: 'srs', active: true, startTime: pub.startedAt, endTime: null, isRecordingAllowed: true, type: 'rtmp', tokenId: p.id }],
        };
        assert.deepEqual(r.body.data, { pagination: { totalItems: 1, totalPages: 1, itemsOnPage: 10 }, data: [details] });
        const one = await api().get('/api/monitoring/streams/cam1');
        assert.deepEqual([one.status, one.body.data], [200, details]);
        const gone = await api().get('/api/monitoring/streams/cam2');
        assert.deepEqual([gone.status, gone.body], [404, { status: 'fail', data: { message: 'No live stream named: cam2' } }]);
        assert.equal(await srs('on_stop', { client: 'v1', token: v.token }), OK);
        assert.equal((await api().get('/api/monitoring/streams/cam1')).body.data.viewerCount, 1);
        assert.equal(await srs('on_unpublish', { client: 'p1', token: p.token }), OK);
        assert.equal((await api().get('/api/monitoring/streams/cam1')).status, 404);
        const other = await t.account('other');
        assert.equal((await api(other.secret).get('/api/monitoring/streams')).body.data.pagination.totalItems, 0);
      });

      it('/metrics counts live sessions by caller and action, and terminations after a stop', async () => {
        await fresh();
        const p = await mk('publish');
        const v = await mk('subscribe');
        assert.equal(await publish('p1', p.token), OK);
        for (const c of ['v1', 'v2', 'v3']) assert.equal(await play(c, v.token), OK);
        const metric = async (series: string) => {
          const text = (await request(t.app).get('/metrics')).text;
          const line = text.split('\n').find((l) => l.startsWith(`${series} `));
          return line === undefined ? 0 : Number(line.slice(series.length + 1));
        };
        const viewers = 'streamgate_sessions_active{caller="srs",action="subscribe"}';
        const publishers = 'streamgate_sessions_active{caller="srs",action="publish"}';
        const stops = 'streamgate_session_terminations_total{trigger="stop",result="ended"}';
        assert.deepEqual([await metric(viewers), await metric(publishers), await metric(stops)], [3, 1, 0]);
        assert.equal((await api().del(`/api/sessions/${(await byClient('v1')).id}`)).status, 200);
        assert.deepEqual((await api().post('/api/stream/stop', { streamId: 'cam1' })).body.data, { stoppingLevel: 'Stream' });
        assert.deepEqual([await metric(viewers), await metric(publishers), await metric(stops)], [2, 0, 2]);
        assert.equal(await srs('on_stop', { client: 'v2', token: v.token }), OK);
        assert.equal(await metric(viewers), 1);
      });
    });
  });
}
