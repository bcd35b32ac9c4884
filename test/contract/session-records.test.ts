// The session registry's two record forms on Redis (src/store/redis/session-record.ts): the whole
// sessions contract on a store whose records are objects (one an earlier build used), and a store
// holding both forms at once, as during a rolling upgrade and its switch: every read gets the same
// sessions, a record takes the store's form at its next write (a touch, an end), and an instance
// follows a switch within a minute.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { sessionStoreContract } from 'streamgate/store-contract';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { keys } from '../../src/store/redis/keys.js';
import { SESSION_RECORDS_META } from '../../src/store/redis/session-record.js';
import { redisFactory } from '../helpers/stores.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { sessionRecord } from '../helpers/sessions.js';
import { touchSessions } from '../../src/store/store.js';
import { HTTP_VIEWER_CALLER } from '../../src/domain/store-rules.js';

sessionStoreContract(redisFactory({ sessionRecords: 'json' }));

describe('redis: session records in both forms', () => {
  let server: TestRedis;
  const clients: Redis[] = [];
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await server.stop();
  });

  const T0 = Date.parse('2026-11-29T10:00:00.000Z');
  const iso = (ms: number) => new Date(ms).toISOString();
  /** An instance of the store under `prefix`, its clock `now`, and a plain client of the same keys. */
  const open = async (prefix: string, now: () => number = () => T0) => {
    const client = new Redis(server.url, { keyPrefix: prefix, enableOfflineQueue: false, lazyConnect: true, commandTimeout: 2000 });
    await client.connect();
    clients.push(client);
    return { store: new RedisStore(client, { now }), raw: client };
  };

  it('a store settles its form once: rows when it holds no account yet, objects when it does; a set form stays', async () => {
    const fresh = await open(server.prefix());
    await fresh.store.upgrade();
    assert.equal(await fresh.store.getMeta(SESSION_RECORDS_META), 'compact');

    const used = await open(server.prefix());
    await used.store.createAccount({ id: 'ACC001', name: 'earlier', createdOn: iso(T0), secureViewer: false });
    await used.store.upgrade();
    assert.equal(await used.store.getMeta(SESSION_RECORDS_META), 'json');

    await used.store.setMeta(SESSION_RECORDS_META, 'compact');
    await used.store.upgrade();
    assert.equal(await used.store.getMeta(SESSION_RECORDS_META), 'compact');
  });

  it('objects and rows side by side read the same, and each takes the store\'s form at its next write', async () => {
    const prefix = server.prefix();
    let clock = T0;
    const earlier = await open(prefix, () => clock);
    await earlier.store.setMeta(SESSION_RECORDS_META, 'json');
    const objectOne = sessionRecord({ accountId: 'A', sessionId: 'obj', id: 'id-obj', tokenId: 4, clientIp: '203.0.113.7', protocol: 'hls' }, clock);
    const objectTwo = sessionRecord({ accountId: 'A', sessionId: 'obj2', id: 'id-obj2', tokenId: 5 }, clock);
    for (const s of [objectOne, objectTwo]) assert.deepEqual(await earlier.store.admitSession(s, 60, {}), { admitted: true, replaced: [] });
    // the switch, seen at once by an instance that has not read the form yet
    await earlier.store.setMeta(SESSION_RECORDS_META, 'compact');
    const later = await open(prefix, () => clock);
    const rowOne = sessionRecord({ accountId: 'A', sessionId: 'row', id: 'id-row', tokenId: 4, action: 'publish', feedId: 'f-1' }, clock);
    assert.deepEqual(await later.store.admitSession(rowOne, 60, {}), { admitted: true, replaced: [] });

    const text = async (id: string) => (await earlier.raw.get(keys.sessionRecord('A', id))) ?? '';
    const rowText = (last: number) => `[1,"id-row","mediamtx","row",1,"A","cam1","${T0}","${last}",4,null,null,null,null,null,"f-1"]`;
    assert.equal(await text('id-obj'), JSON.stringify(objectOne));
    assert.equal(await text('id-row'), rowText(T0));
    assert.deepEqual(await later.store.getSession('mediamtx', 'obj'), objectOne);
    assert.deepEqual(await earlier.store.getSession('mediamtx', 'row'), rowOne);
    const listed = await earlier.store.listSessions('A', {}, { offset: 0, limit: 10 });
    assert.deepEqual(listed.items, [objectOne, objectTwo, rowOne].sort((x, y) => (x.id < y.id ? -1 : 1)));

    // the later instance writes rows: the object it touches becomes one
    clock = T0 + 5000;
    const touched = await touchSessions(later.store, 'mediamtx', [{ sessionId: 'obj', at: iso(clock) }, { sessionId: 'row', at: iso(clock) }], 60);
    assert.deepEqual(touched, [
      { ...objectOne, lastSeenOn: iso(clock) },
      { ...rowOne, lastSeenOn: iso(clock) },
    ]);
    assert.equal(await text('id-obj'), `[1,"id-obj","mediamtx","obj",0,"A","cam1","${T0}","${clock}",4,"203.0.113.7","hls"]`);
    assert.equal(await text('id-row'), rowText(clock));
    // the earlier instance still writes objects (it reads the form again after a minute): the row it touches becomes one
    assert.deepEqual(await earlier.store.touchSession('mediamtx', 'row', 60, iso(clock + 1)), { ...rowOne, lastSeenOn: iso(clock + 1) });
    assert.deepEqual(JSON.parse(await text('id-row')), { ...rowOne, lastSeenOn: iso(clock + 1) });

    const endAt = clock + 2000;
    const endedObj = await later.store.endSession('mediamtx', 'obj2', { reason: 'stopped', at: iso(endAt), keepSeconds: 600 });
    const endedRow = await earlier.store.endSession('mediamtx', 'obj', { reason: 'token_revoked', at: iso(endAt), keepSeconds: 600 });
    assert.deepEqual(endedObj, { ...objectTwo, endedReason: 'stopped', endedOn: iso(endAt) });
    assert.deepEqual(endedRow, { ...objectOne, lastSeenOn: iso(clock), endedReason: 'token_revoked', endedOn: iso(endAt) });
    assert.equal(await text('id-obj2'), `[1,"id-obj2","mediamtx","obj2",0,"A","cam1","${T0}","${T0}",5,null,null,null,null,null,null,null,"stopped","${endAt}"]`);
    // keys in the script's order: compared as parsed
    assert.deepEqual(JSON.parse(await text('id-obj')), endedRow);
    assert.deepEqual(await later.store.getSessionById('A', 'id-obj'), endedRow);
    assert.deepEqual(await earlier.store.getSessionById('A', 'id-obj2'), endedObj);
  });

  it('a publisher replaced by an admission is ended in the admission\'s form', async () => {
    const prefix = server.prefix();
    const clock = T0;
    const a = await open(prefix, () => clock);
    await a.store.setMeta(SESSION_RECORDS_META, 'json');
    const first = sessionRecord({ accountId: 'A', sessionId: 'p1', id: 'id-p1', action: 'publish' }, clock);
    await a.store.admitSession(first, 60, {});
    await a.store.setMeta(SESSION_RECORDS_META, 'compact');
    const b = await open(prefix, () => clock);
    const second = sessionRecord({ accountId: 'A', sessionId: 'p2', id: 'id-p2', action: 'publish' }, clock);
    const ended = { ...first, endedReason: 'replaced' as const, endedOn: iso(clock) };
    assert.deepEqual(await b.store.admitSession(second, 60, { publishConflict: 'replace' }), { admitted: true, replaced: [ended] });
    assert.equal(await a.raw.get(keys.sessionRecord('A', 'id-p1')), `[1,"id-p1","mediamtx","p1",1,"A","cam1","${T0}","${T0}",null,null,null,null,null,null,null,null,"replaced","${T0}"]`);
  });

  it('an HTTP viewer session keeps no pointer, and a hint by caller id only while records are objects (for earlier builds)', async () => {
    for (const form of ['compact', 'json'] as const) {
      const { store, raw } = await open(server.prefix(), () => Date.now());
      await store.setMeta(SESSION_RECORDS_META, form);
      const at = new Date().toISOString();
      const sid = 'Vw1aaaaaaaaaaaaa';
      const viewer = sessionRecord({ caller: HTTP_VIEWER_CALLER, sessionId: sid, id: sid, accountId: 'A', tokenId: 3, lastSeenOn: at });
      assert.deepEqual(await store.admitSession(viewer, 60, { maxConcurrent: 5 }), { admitted: true, replaced: [] });
      await store.startSession(sessionRecord({ sessionId: 'm1', accountId: 'A', lastSeenOn: at }), 60);
      assert.deepEqual(
        [await raw.exists(keys.sessionPointer('A', HTTP_VIEWER_CALLER, sid)), await raw.exists(keys.session(HTTP_VIEWER_CALLER, sid))],
        [0, form === 'json' ? 1 : 0],
        form,
      );
      // a media server's connection keeps both: a media server's own calls name no account
      assert.deepEqual([await raw.exists(keys.sessionPointer('A', 'mediamtx', 'm1')), await raw.exists(keys.session('mediamtx', 'm1'))], [1, 1]);
      const later = new Date(Date.now() + 1000).toISOString();
      const [touched] = await touchSessions(store, HTTP_VIEWER_CALLER, [{ sessionId: sid, at: later, accountId: 'A' }], 120);
      assert.equal(touched?.lastSeenOn, later);
      assert.ok((await raw.pttl(keys.sessionRecord('A', sid))) > 60_000, 'its record lives the touch\'s ttl');
      assert.equal((await store.endSession(HTTP_VIEWER_CALLER, sid, { reason: 'done', at: later, keepSeconds: 600 }, 'A'))?.endedReason, 'done');
      assert.equal(await raw.exists(keys.sessionPointer('A', HTTP_VIEWER_CALLER, sid)), 0, 'none made by the touch or the end');
    }
  });

  it('dates convert both ways exactly, across years, leap days and the epoch', async () => {
    const prefix = server.prefix();
    const dates = ['1970-01-01T00:00:00.000Z', '1999-12-31T23:59:59.999Z', '2000-02-29T12:00:00.001Z', '2024-02-29T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2100-03-01T08:09:10.011Z'];
    let clock = T0;
    const json = await open(prefix, () => clock);
    await json.store.setMeta(SESSION_RECORDS_META, 'json');
    const made = dates.map((d, i) => sessionRecord({ accountId: 'A', sessionId: `d${i}`, id: `id-d${i}`, startedOn: d, lastSeenOn: iso(T0) }, T0));
    for (const s of made) await json.store.admitSession(s, 60, {});
    await json.store.setMeta(SESSION_RECORDS_META, 'compact');
    const rows = await open(prefix, () => clock);
    clock = T0 + 1;
    await touchSessions(rows.store, 'mediamtx', made.map((s) => ({ sessionId: s.sessionId, at: iso(clock) })), 60);
    for (const [i, d] of dates.entries()) {
      const row = JSON.parse((await rows.raw.get(keys.sessionRecord('A', `id-d${i}`))) ?? '') as unknown[];
      assert.equal(row[7], String(Date.parse(d)), `${d} as its epoch ms`);
    }
    // and back to objects
    await rows.store.setMeta(SESSION_RECORDS_META, 'json');
    const back = await open(prefix, () => clock);
    clock = T0 + 2;
    await touchSessions(back.store, 'mediamtx', made.map((s) => ({ sessionId: s.sessionId, at: iso(clock) })), 60);
    for (const [i, d] of dates.entries()) {
      const obj = JSON.parse((await back.raw.get(keys.sessionRecord('A', `id-d${i}`))) ?? '') as Record<string, unknown>;
      assert.equal(obj.startedOn, d);
    }
  });

  it('an instance that read objects writes rows within a minute of the switch', async () => {
    const prefix = server.prefix();
    let clock = T0;
    const instance = await open(prefix, () => clock);
    await instance.store.setMeta(SESSION_RECORDS_META, 'json');
    const first = (n: number) => sessionRecord({ accountId: 'A', sessionId: `c${n}`, id: `id-c${n}` }, clock);
    await instance.store.admitSession(first(1), 600, {});
    await instance.store.setMeta(SESSION_RECORDS_META, 'compact');
    clock = T0 + 59_999;
    await instance.store.admitSession(first(2), 600, {});
    clock = T0 + 60_000;
    // the meta is read again now, not waited for: this admission may still write an object
    await instance.store.admitSession(first(3), 600, {});
    clock = T0 + 60_001;
    await instance.store.admitSession(first(4), 600, {});
    const form = async (id: string) => ((await instance.raw.get(keys.sessionRecord('A', id))) ?? '')[0];
    assert.deepEqual([await form('id-c1'), await form('id-c2'), await form('id-c4')], ['{', '{', '[']);
  });
});
