// touchSessions(store, ...): a backend's own batch where it has one, else touchSession for each
// session, the answers in the order asked (src/store/sessions.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Session, type SessionStore, touchSessions } from '../../src/store/store.js';

const session = (sessionId: string, lastSeenOn: string) => ({ sessionId, lastSeenOn }) as Session;

describe('touchSessions', () => {
  it('touches each session through touchSession where the backend has no batch, answering in the order asked', async () => {
    const calls: string[] = [];
    const store = {
      async touchSession(caller: string, sessionId: string, ttl: number, at: string) {
        calls.push(`${caller} ${sessionId} ${ttl} ${at}`);
        // the first answers last: the answers still follow the order asked
        if (sessionId === 'a') for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        return sessionId === 'gone' ? null : session(sessionId, at);
      },
    } as unknown as SessionStore;
    const answers = await touchSessions(store, 'http', [{ sessionId: 'a', at: 't1' }, { sessionId: 'gone', at: 't2' }, { sessionId: 'c', at: 't3' }], 30);
    assert.deepEqual(calls, ['http a 30 t1', 'http gone 30 t2', 'http c 30 t3']);
    assert.deepEqual(answers, [session('a', 't1'), null, session('c', 't3')]);
  });

  it("uses the backend's own batch where it has one, and touchSession not at all", async () => {
    const store = {
      touchSession: () => assert.fail('touchSession called'),
      touchSessions: async (caller: string, touches: ReadonlyArray<{ sessionId: string; at: string }>, ttl: number) => touches.map((t) => session(`${caller}/${t.sessionId}/${ttl}`, t.at)),
    } as unknown as SessionStore;
    assert.deepEqual(await touchSessions(store, 'http', [{ sessionId: 'a', at: 't1' }], 30), [session('http/a/30', 't1')]);
  });
});
