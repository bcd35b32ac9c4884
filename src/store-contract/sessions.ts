// The session registry: start, read, touch, end once, expire; admissions that hold their limits
// under concurrency and check the token's revision; lists, the gauge's counts, and the expiry cuts
// (src/store/sessions.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyTokenUpdate } from '../domain/tokens.js';
import { HTTP_VIEWER_CALLER } from '../domain/store-rules.js';
import { newSecret } from '../domain/secrets.js';
import { type Session, type SessionEndReason, type SessionStore, type StoreLifecycle, type TokenStore, touchSessions } from '../store/store.js';
import { sessionRecord, T0, tok } from './fixtures.js';
import type { Fresh } from './factory.js';

/** What the sessions part runs on: the sessions, and the tokens whose revision an admission checks. */
export type SessionsUnderTest = SessionStore & TokenStore & StoreLifecycle;

export function sessionTests(fresh: Fresh<SessionsUnderTest>): void {
  describe('sessions', () => {
    const session = (over: Partial<Session> & { sessionId: string }): Session => sessionRecord({ accountId: 'A', tokenId: 4, ...over }, T0);
    const end = (reason: SessionEndReason, at = T0) => ({ reason, at: new Date(at).toISOString(), keepSeconds: 600 });

    it('starts, reads and ends a session once (kept, marked ended), and expires a lost one', async () => {
      let now = T0;
      const s = await fresh(() => now);
      const sess = session({ sessionId: '5f1c2b0e-6a3d-4c1e-9d0b-1d2f3a4b5c6d', trackingId: 'grp', clientIp: '192.0.2.7', native: { id: 'x', path: 'cam1' } });
      await s.startSession(sess, 60);
      await s.startSession(session({ caller: 'srs', sessionId: 'x1' }), 1);
      assert.deepEqual(await s.getSession('mediamtx', sess.sessionId), sess);
      assert.deepEqual(await s.getSessionById('A', sess.id), sess);
      assert.equal(await s.getSessionById('B', sess.id), null, "another account's session is invisible");
      assert.equal(await s.getSession('srs', sess.sessionId), null);
      const ends = await Promise.all([s.endSession('mediamtx', sess.sessionId, end('done')), s.endSession('mediamtx', sess.sessionId, end('done'))]);
      const ended = { ...sess, endedReason: 'done', endedOn: new Date(T0).toISOString() };
      assert.deepEqual(ends.filter(Boolean), [ended]);
      assert.deepEqual(await s.getSession('mediamtx', sess.sessionId), ended, 'kept after its end, marked ended');
      assert.deepEqual((await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['x1']);
      if (s.kind === 'sqlite') now += 1001;
      else await new Promise((r) => setTimeout(r, 1100)); // Redis expires keys on its own clock
      assert.equal(await s.getSession('srs', 'x1'), null);
      assert.equal((await s.listSessions('A', {}, { offset: 0, limit: 10 })).total, 0);
    });

    it('touch keeps a live session alive and answers an ended one as it is', async () => {
      const s = await fresh(() => Date.now());
      const t0 = Date.now();
      await s.startSession(session({ sessionId: 'r1', lastSeenOn: new Date(t0).toISOString() }), 1);
      await new Promise((r) => setTimeout(r, 600));
      const at = new Date(Date.now()).toISOString();
      assert.equal((await s.touchSession('mediamtx', 'r1', 1, at))?.lastSeenOn, at);
      await new Promise((r) => setTimeout(r, 600));
      assert.equal((await s.getSession('mediamtx', 'r1'))?.endedReason, undefined, 'alive past its first second');
      await s.endSession('mediamtx', 'r1', end('token_revoked', Date.now()));
      assert.equal((await s.touchSession('mediamtx', 'r1', 60, new Date().toISOString()))?.endedReason, 'token_revoked');
      assert.equal(await s.touchSession('mediamtx', 'nope', 60, at), null);
    });

    it("touch moves a session's expiry in the indexes it is in and adds it to no other: a touched viewer is not counted as a publisher", async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      await s.startSession(session({ sessionId: 'pub', action: 'publish', lastSeenOn: at }), 60);
      await s.startSession(session({ sessionId: 'view', lastSeenOn: at }), 60);
      const later = new Date(Date.now() + 1000).toISOString();
      assert.equal((await s.touchSession('mediamtx', 'view', 60, later))?.lastSeenOn, later);
      assert.equal((await s.touchSession('mediamtx', 'pub', 60, later))?.lastSeenOn, later);
      const count = async (action: 'publish' | 'subscribe') => (await s.listSessions('A', { streamName: 'cam1', action }, { offset: 0, limit: 0 })).total;
      assert.deepEqual([await count('publish'), await count('subscribe')], [1, 1]);
      const listed = async (action: 'publish' | 'subscribe') => (await s.listSessions('A', { streamName: 'cam1', action }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId);
      assert.deepEqual([await listed('publish'), await listed('subscribe')], [['pub'], ['view']]);
      assert.equal((await s.listSessions('A', { tokenId: 4 }, { offset: 0, limit: 10 })).total, 2);
    });

    it('touches many sessions in one call as one at a time would: each at its own time, in the order asked, across accounts, ended and unknown ones answered as they are', async () => {
      const t0 = Date.now();
      let now = t0;
      const s = await fresh(() => now);
      const at0 = new Date(t0).toISOString();
      const many = Array.from({ length: 300 }, (_, i) => session({ sessionId: `v${i}`, streamName: `cam${i % 7}`, tokenId: 10 + (i % 3), lastSeenOn: at0 }));
      // TTL seconds: long enough that every start lands before the first expires on a loaded machine
      const ttl = 3;
      await Promise.all(many.map((x) => s.startSession(x, ttl)));
      await s.startSession(session({ sessionId: 'pub', action: 'publish', lastSeenOn: at0 }), ttl);
      await s.startSession(session({ sessionId: 'other', accountId: 'B', lastSeenOn: at0 }), ttl);
      await s.startSession(session({ sessionId: 'gone', lastSeenOn: at0 }), 60);
      await s.endSession('mediamtx', 'gone', end('token_revoked', now));
      await s.startSession(session({ sessionId: 'untouched', lastSeenOn: at0 }), ttl);
      // a Redis key lives its TTL from when it is written, on Redis's own clock
      const started = Date.now();
      const at = (k: number) => new Date(t0 + 100 + k).toISOString();
      const asked = [
        { sessionId: 'other', at: at(1) },
        { sessionId: 'nope', at: at(2) },
        { sessionId: 'gone', at: at(3) },
        { sessionId: 'pub', at: at(4) },
        ...many.map((x, i) => ({ sessionId: x.sessionId, at: at(10 + i) })),
      ];
      // the backend's touchSessions, or touchSession for each where it has none
      const answers = await touchSessions(s, 'mediamtx', asked, 60);
      assert.equal(answers.length, asked.length);
      assert.deepEqual(
        answers.map((a) => (a === null ? null : a.endedReason ?? a.lastSeenOn)),
        [at(1), null, 'token_revoked', at(4), ...many.map((_, i) => at(10 + i))],
      );
      assert.deepEqual(answers[0], { ...session({ sessionId: 'other', accountId: 'B', lastSeenOn: at0 }), lastSeenOn: at(1) });
      // past the TTL they were started with: the touched live on, in every index they are in
      if (s.kind === 'sqlite') now += ttl * 1000 + 1;
      else {
        await new Promise((r) => setTimeout(r, Math.max(0, started + ttl * 1000 + 100 - Date.now())));
        now = Date.now();
      }
      assert.equal(await s.getSession('mediamtx', 'untouched'), null);
      assert.equal((await s.getSession('mediamtx', 'v299'))?.lastSeenOn, at(309));
      assert.equal((await s.getSession('mediamtx', 'other'))?.lastSeenOn, at(1));
      assert.equal((await s.getSession('mediamtx', 'gone'))?.endedReason, 'token_revoked');
      assert.equal((await s.listSessions('A', {}, { offset: 0, limit: 0 })).total, 301);
      assert.equal((await s.listSessions('B', {}, { offset: 0, limit: 0 })).total, 1);
      assert.equal((await s.listSessions('A', { tokenId: 11 }, { offset: 0, limit: 0 })).total, 100);
      const count = async (action: 'publish' | 'subscribe') => (await s.listSessions('A', { streamName: 'cam1', action }, { offset: 0, limit: 0 })).total;
      assert.deepEqual([await count('publish'), await count('subscribe')], [1, 43], 'a touched viewer is not counted as a publisher');
      assert.deepEqual(await touchSessions(s, 'mediamtx', [], 60), []);
    });

    it("a lookup naming an account finds only that account's session; an HTTP viewer session is found only with its account named", async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const viewer = (sessionId: string) => session({ caller: HTTP_VIEWER_CALLER, sessionId, lastSeenOn: at });
      for (const sid of ['v1', 'v2', 'v3', 'v4']) await s.startSession(viewer(sid), 60);
      const media = session({ sessionId: 'm1', lastSeenOn: at });
      await s.startSession(media, 60);
      // a media server's session: by its caller id alone, or with its own account
      assert.deepEqual(await s.getSession('mediamtx', 'm1'), media);
      assert.deepEqual(await s.getSession('mediamtx', 'm1', 'A'), media);
      assert.equal(await s.getSession('mediamtx', 'm1', 'B'), null);
      assert.equal(await s.endSession('mediamtx', 'm1', end('done', Date.now()), 'B'), null);
      // an HTTP viewer's: only with its account
      assert.equal(await s.getSession(HTTP_VIEWER_CALLER, 'v1'), null);
      assert.equal(await s.getSession(HTTP_VIEWER_CALLER, 'v1', 'B'), null);
      assert.deepEqual(await s.getSession(HTTP_VIEWER_CALLER, 'v1', 'A'), viewer('v1'));
      const later = new Date(Date.now() + 1000).toISOString();
      assert.equal(await s.touchSession(HTTP_VIEWER_CALLER, 'v1', 60, later), null);
      assert.equal((await s.touchSession(HTTP_VIEWER_CALLER, 'v1', 60, later, 'A'))?.lastSeenOn, later);
      const touched = await touchSessions(
        s,
        HTTP_VIEWER_CALLER,
        [
          { sessionId: 'v2', at: later, accountId: 'A' },
          { sessionId: 'v3', at: later },
          { sessionId: 'v4', at: later, accountId: 'B' },
          { sessionId: 'nope', at: later, accountId: 'A' },
        ],
        60,
      );
      assert.deepEqual(
        touched.map((x) => x?.lastSeenOn ?? null),
        [later, null, null, null],
      );
      assert.deepEqual([(await s.getSession(HTTP_VIEWER_CALLER, 'v3', 'A'))?.lastSeenOn, (await s.getSession(HTTP_VIEWER_CALLER, 'v4', 'A'))?.lastSeenOn], [at, at], 'untouched');
      assert.equal(await s.endSession(HTTP_VIEWER_CALLER, 'v1', end('done', Date.now())), null);
      assert.equal(await s.endSession(HTTP_VIEWER_CALLER, 'v1', end('done', Date.now()), 'B'), null);
      assert.equal((await s.endSession(HTTP_VIEWER_CALLER, 'v1', end('done', Date.now()), 'A'))?.endedReason, 'done');
      assert.equal((await s.getSession(HTTP_VIEWER_CALLER, 'v1', 'A'))?.endedReason, 'done', 'kept after its end, found with its account');
      assert.deepEqual((await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['v2', 'v3', 'v4', 'm1']);
    });

    it('an HTTP viewer session registered under its caller id is found, touched, limited and ended as any other', async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const own = (sessionId: string, over: Partial<Session> = {}) => session({ caller: HTTP_VIEWER_CALLER, sessionId, id: sessionId, tokenId: 7, lastSeenOn: at, ...over });
      assert.deepEqual(await s.admitSession(own('Vw1aaaaaaaaaaaaa'), 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
      assert.deepEqual(await s.admitSession(own('Vw2aaaaaaaaaaaaa'), 60, { maxConcurrent: 1 }), { admitted: false, reason: 'session_limit' });
      // registered again (its own record, in place): not counted against itself
      const again = own('Vw1aaaaaaaaaaaaa', { clientIp: '192.0.2.9' });
      assert.deepEqual(await s.admitSession(again, 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
      assert.deepEqual(await s.getSession(HTTP_VIEWER_CALLER, 'Vw1aaaaaaaaaaaaa', 'A'), again);
      assert.deepEqual(await s.getSessionById('A', 'Vw1aaaaaaaaaaaaa'), again);
      assert.equal(await s.getSession(HTTP_VIEWER_CALLER, 'Vw1aaaaaaaaaaaaa'), null, 'only with its account');
      const live = await s.listSessions('A', { tokenId: 7 }, { offset: 0, limit: 10 });
      assert.deepEqual([live.total, live.items.map((x) => x.id)], [1, ['Vw1aaaaaaaaaaaaa']]);
      const later = new Date(Date.now() + 1000).toISOString();
      const [touched] = await touchSessions(s, HTTP_VIEWER_CALLER, [{ sessionId: 'Vw1aaaaaaaaaaaaa', at: later, accountId: 'A' }], 60);
      assert.deepEqual(touched, { ...again, lastSeenOn: later });
      assert.deepEqual(await s.admitSession(own('Vw3aaaaaaaaaaaaa'), 60, { maxUses: 2 }), { admitted: false, reason: 'uses_exhausted' });
      assert.equal((await s.endSession(HTTP_VIEWER_CALLER, 'Vw1aaaaaaaaaaaaa', end('token_revoked', Date.now()), 'A'))?.endedReason, 'token_revoked');
      assert.equal(await s.endSession(HTTP_VIEWER_CALLER, 'Vw1aaaaaaaaaaaaa', end('token_revoked', Date.now()), 'A'), null, 'ended once');
      assert.equal((await s.getSession(HTTP_VIEWER_CALLER, 'Vw1aaaaaaaaaaaaa', 'A'))?.endedReason, 'token_revoked');
      assert.deepEqual(await s.admitSession(own('Vw2aaaaaaaaaaaaa'), 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
    });

    it('admits exactly maxConcurrent of concurrent starts, and frees a slot when one ends', async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const tries = Array.from({ length: 20 }, (_, i) => session({ sessionId: `c${i}`, lastSeenOn: at }));
      const results = await Promise.all(tries.map((t) => s.admitSession(t, 60, { maxConcurrent: 3 })));
      assert.equal(results.filter((r) => r.admitted).length, 3);
      assert.deepEqual([...new Set(results.filter((r) => !r.admitted).map((r) => (r.admitted ? '' : r.reason)))], ['session_limit']);
      const admitted = tries.filter((_, i) => results[i]!.admitted);
      assert.equal((await s.listSessions('A', { tokenId: 4 }, { offset: 0, limit: 10 })).total, 3);
      await s.endSession('mediamtx', admitted[0]!.sessionId, end('done'));
      assert.equal((await s.admitSession(session({ sessionId: 'late', lastSeenOn: at }), 60, { maxConcurrent: 3 })).admitted, true);
      assert.deepEqual(await s.admitSession(session({ sessionId: 'later', lastSeenOn: at }), 60, { maxConcurrent: 3 }), { admitted: false, reason: 'session_limit' });
    });

    it('admits exactly maxUses admissions ever, counting the unlimited starts too', async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => s.admitSession(session({ sessionId: `u${i}`, tokenId: 9, lastSeenOn: at }), 60, { maxUses: 1 })));
      assert.equal(results.filter((r) => r.admitted).length, 1);
      const first = results.findIndex((r) => r.admitted);
      await s.endSession('mediamtx', `u${first}`, end('done'));
      assert.deepEqual(await s.admitSession(session({ sessionId: 'again', tokenId: 9, lastSeenOn: at }), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
      await s.startSession(session({ sessionId: 'free', tokenId: 10, lastSeenOn: at }), 60);
      assert.deepEqual(await s.admitSession(session({ sessionId: 'second', tokenId: 10, lastSeenOn: at }), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
    });

    it('with tokenRev, admits only while the token is at that revision; a changed or deleted token registers nothing', async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const t = await s.createToken(tok('A', 'subscribe', 'limited', T0, { maxConcurrentSessions: 5 }));
      const mine = (sid: string) => session({ sessionId: sid, tokenId: t.id, lastSeenOn: at });
      assert.equal((await s.admitSession(mine('r1'), 60, { maxConcurrent: 5, tokenRev: t.rev })).admitted, true);
      const edited = await s.updateToken('A', 'subscribe', t.id, (cur) => applyTokenUpdate(cur, { label: 'renamed' }, T0, newSecret));
      assert.ok(edited && edited.rev !== t.rev);
      assert.deepEqual(await s.admitSession(mine('r2'), 60, { maxConcurrent: 5, tokenRev: t.rev }), { admitted: false, reason: 'token_changed' });
      assert.equal(await s.getSession('mediamtx', 'r2'), null, 'nothing registered');
      assert.deepEqual((await s.listSessions('A', { tokenId: t.id }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['r1']);
      // no use counted for the refused one: one use left of two
      assert.equal((await s.admitSession(mine('r3'), 60, { maxUses: 2, tokenRev: edited!.rev })).admitted, true);
      assert.deepEqual(await s.admitSession(mine('r4'), 60, { maxUses: 2, tokenRev: edited!.rev }), { admitted: false, reason: 'uses_exhausted' });
      // the same connection asking again with a stale revision keeps its earlier record
      assert.deepEqual(await s.admitSession(mine('r1'), 60, { tokenRev: t.rev }), { admitted: false, reason: 'token_changed' });
      assert.equal((await s.getSession('mediamtx', 'r1'))?.endedReason, undefined);
      assert.equal(await s.deleteToken('A', 'subscribe', t.id), true);
      assert.deepEqual(await s.admitSession(mine('r5'), 60, { tokenRev: edited!.rev }), { admitted: false, reason: 'token_changed' });
      // without tokenRev nothing is checked (a token-less session, or a caller that does not ask)
      assert.equal((await s.admitSession(mine('r6'), 60, {})).admitted, true);
    });

    it('a second publisher is refused (reject) or ends the first (replace)', async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const pub = (sid: string, tokenId: number) => session({ sessionId: sid, action: 'publish', tokenId, lastSeenOn: at, feedId: `f-${sid}` });
      assert.equal((await s.admitSession(pub('p1', 1), 60, { publishConflict: 'reject' })).admitted, true);
      assert.deepEqual(await s.admitSession(pub('p2', 2), 60, { publishConflict: 'reject' }), { admitted: false, reason: 'stream_taken' });
      await s.startSession(session({ sessionId: 'v1', lastSeenOn: at }), 60);
      const r = await s.admitSession(pub('p3', 3), 60, { publishConflict: 'replace' });
      assert.equal(r.admitted, true);
      assert.deepEqual(r.admitted ? r.replaced.map((x) => [x.sessionId, x.endedReason]) : [], [['p1', 'replaced']]);
      assert.equal((await s.getSession('mediamtx', 'p1'))?.endedReason, 'replaced');
      const live = await s.listSessions('A', { streamName: 'cam1' }, { offset: 0, limit: 10 });
      assert.deepEqual(live.items.map((x) => x.sessionId).sort(), ['p3', 'v1']);
      assert.deepEqual((await s.listSessions('A', { streamName: 'cam1', action: 'publish' }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['p3']);
      // the same token taking over frees its own slot
      assert.equal((await s.admitSession(pub('p4', 3), 60, { publishConflict: 'replace', maxConcurrent: 1 })).admitted, true);
    });

    it('a refused admission leaves the connection\'s earlier record as it was; an admitted one replaces it without counting it', async () => {
      const s = await fresh(() => Date.now());
      const at = new Date().toISOString();
      const rec = (sid: string, id: string, over: Partial<Session> = {}) => session(Object.assign({ sessionId: sid, id, startedOn: at, lastSeenOn: at }, over));
      const ids = async () => (await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => `${x.sessionId}:${x.id}:${x.action}`).sort();
      assert.equal((await s.admitSession(rec('p1', 'a1', { action: 'publish', tokenId: 1, feedId: 'f1' }), 60, { publishConflict: 'reject' })).admitted, true);
      assert.equal((await s.admitSession(rec('c7', 'a2', { tokenId: 2 }), 60, {})).admitted, true);
      // the same connection (c7) asking to publish the taken stream: refused, its viewing record stays
      assert.deepEqual(await s.admitSession(rec('c7', 'a3', { action: 'publish', tokenId: 2, feedId: 'f3' }), 60, { publishConflict: 'reject' }), { admitted: false, reason: 'stream_taken' });
      assert.deepEqual(await ids(), ['c7:a2:subscribe', 'p1:a1:publish']);
      assert.equal((await s.getSession('mediamtx', 'c7'))?.id, 'a2');
      // refused by the token's limits: the same
      assert.deepEqual(await s.admitSession(rec('c7', 'a4', { tokenId: 2 }), 60, { maxUses: 1 }), { admitted: false, reason: 'uses_exhausted' });
      assert.deepEqual(await s.admitSession(rec('c9', 'a5', { tokenId: 2 }), 60, { maxConcurrent: 1 }), { admitted: false, reason: 'session_limit' });
      assert.deepEqual(await ids(), ['c7:a2:subscribe', 'p1:a1:publish']);
      // admitted again, the connection's earlier record is not one of the token's sessions it counts, and goes
      assert.deepEqual(await s.admitSession(rec('c7', 'a6', { tokenId: 2 }), 60, { maxConcurrent: 1 }), { admitted: true, replaced: [] });
      assert.deepEqual(await ids(), ['c7:a6:subscribe', 'p1:a1:publish']);
      // the publishing connection registering again does not conflict with itself
      assert.deepEqual(await s.admitSession(rec('p1', 'a7', { action: 'publish', tokenId: 1, feedId: 'f7' }), 60, { publishConflict: 'reject' }), { admitted: true, replaced: [] });
      assert.deepEqual(await ids(), ['c7:a6:subscribe', 'p1:a7:publish']);
    });

    it('lists an account\'s live sessions by stream, token and action, oldest first, a page at a time', async () => {
      const s = await fresh(() => Date.now());
      const t = Date.now();
      const iso = (ms: number) => new Date(ms).toISOString();
      for (let i = 0; i < 5; i++) {
        await s.startSession(session({ sessionId: `l${i}`, tokenId: i % 2 === 0 ? 4 : 5, streamName: i < 3 ? 'cam1' : 'cam2', startedOn: iso(t + i), lastSeenOn: iso(t) }), 60);
      }
      await s.startSession(session({ sessionId: 'other', accountId: 'B', lastSeenOn: iso(t) }), 60);
      const all = await s.listSessions('A', {}, { offset: 1, limit: 2 });
      assert.deepEqual([all.total, all.items.map((x) => x.sessionId)], [5, ['l1', 'l2']]);
      assert.deepEqual((await s.listSessions('A', { tokenId: 4 }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['l0', 'l2', 'l4']);
      assert.deepEqual((await s.listSessions('A', { streamName: 'cam2', tokenId: 5 }, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['l3']);
      assert.equal((await s.listSessions('A', { action: 'publish' }, { offset: 0, limit: 10 })).total, 0);
      assert.deepEqual((await s.listSessions('B', {}, { offset: 0, limit: 10 })).items.map((x) => x.sessionId), ['other']);
      // The gauge's counts are written after the admission without a wait (on Redis Cluster they
      // live on another node, so they may land a moment later): read until they settle, 2 s at most.
      const want = [{ caller: 'mediamtx', action: 'subscribe', count: 6 }];
      let counts = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx');
      for (let i = 0; i < 40 && JSON.stringify(counts) !== JSON.stringify(want); i++) {
        await new Promise((r) => setTimeout(r, 50));
        counts = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx');
      }
      assert.deepEqual(counts, want);
    });

    it('a connection registered again is one live session in the gauge, whatever its action', async () => {
      const s = await fresh(() => Date.now());
      const t = new Date().toISOString();
      const counts = async (want: Array<{ action: string; count: number }>) => {
        const key = (c: Array<{ action: string; count: number }>) => JSON.stringify(c.map((x) => [x.action, x.count]).sort());
        // on Redis Cluster the gauge lives on another node and lands a moment later: 2 s at most
        let got = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx' && c.count > 0);
        for (let i = 0; i < 40 && key(got) !== key(want); i++) {
          await new Promise((r) => setTimeout(r, 50));
          got = (await s.sessionCounts()).filter((c) => c.caller === 'mediamtx' && c.count > 0);
        }
        assert.equal(key(got), key(want));
      };
      assert.deepEqual(await s.admitSession(session({ sessionId: 'again', id: 'g1', startedOn: t, lastSeenOn: t }), 60, {}), { admitted: true, replaced: [] });
      assert.deepEqual(await s.admitSession(session({ sessionId: 'again', id: 'g2', startedOn: t, lastSeenOn: t }), 60, {}), { admitted: true, replaced: [] });
      await counts([{ action: 'subscribe', count: 1 }]);
      const asPublisher = session({ sessionId: 'again', id: 'g3', action: 'publish', startedOn: t, lastSeenOn: t });
      assert.deepEqual(await s.admitSession(asPublisher, 60, {}), { admitted: true, replaced: [] });
      await counts([{ action: 'publish', count: 1 }]);
      assert.deepEqual((await s.listSessions('A', {}, { offset: 0, limit: 10 })).items.map((x) => x.id), ['g3']);
    });

    it('hands each due expiry cut to exactly one taker', async () => {
      const s = await fresh(() => Date.now());
      await s.scheduleExpiry('A', 7, T0 + 1000);
      await s.scheduleExpiry('A', 8, T0 + 5000);
      await s.scheduleExpiry('A', 8, T0 + 500); // replaced: due earlier
      assert.deepEqual(await s.takeDueExpiries(T0, 10), []);
      const takes = await Promise.all([s.takeDueExpiries(T0 + 1000, 10), s.takeDueExpiries(T0 + 1000, 10), s.takeDueExpiries(T0 + 1000, 10)]);
      assert.deepEqual(takes.flat().sort((a, b) => a.tokenId - b.tokenId), [{ accountId: 'A', tokenId: 7 }, { accountId: 'A', tokenId: 8 }]);
      assert.deepEqual(await s.takeDueExpiries(T0 + 9000, 10), []);
    });
  });
}
