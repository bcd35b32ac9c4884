// The lifecycle queue applies signals one at a time, in order. The registry check of a session an
// admission already registered (src/sessions/control.ts registered()) runs beside it instead, so
// one store round trip per admission no longer bounds the queue; a record the lifecycle registers
// itself is still checked before the next signal; idle() waits for both. Viewers the lifecycle
// registers itself are registered together when they come in a run at the head of the queue (a
// burst of admissions), never ahead of a signal of another kind or of the same connection.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Lifecycle } from '../../src/lifecycle/lifecycle.js';
import type { UsageService } from '../../src/analytics/usage.js';
import { Metrics } from '../../src/observability/metrics.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Session } from '../../src/store/store.js';
import type { PublicEvent } from '../../src/lifecycle/events.js';
import { sessionRecord } from '../helpers/sessions.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const record = (id: string): Session => sessionRecord({ id, sessionId: `conn-${id}`, tokenId: 7 }, NOW);

const started = (r: Session, registered: boolean) =>
  ({ kind: 'session_started', caller: r.caller, sessionId: r.sessionId, action: r.action, accountId: r.accountId, streamName: r.streamName, tokenId: r.tokenId, record: r, registered }) as const;

/** A few turns of the event loop: long enough for queued microtasks and immediates to run. */
const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

function setup(check: (s: Session) => Promise<void>) {
  const metrics = new Metrics({ defaultMetrics: false });
  const usage = deferred<unknown[]>();
  const store = new SqliteStore({ file: ':memory:', now: () => NOW });
  const lifecycle = new Lifecycle(
    store,
    { queueSize: 100, liveTtlSeconds: 60, defaultAccountId: '' },
    metrics,
    pino({ level: 'silent' }),
    async () => null,
    { ingestSession: async (...args: unknown[]) => usage.resolve(args) } as unknown as UsageService,
    () => NOW,
    { registered: check },
  );
  const events: string[] = [];
  lifecycle.subscribe((e: PublicEvent) => void events.push(e.type === 'session' ? `session ${e.event} ${e.id}` : e.type));
  return { lifecycle, metrics, usage, events, store };
}

describe('the lifecycle queue', () => {
  it('checks of sessions the admission registered run beside the queue: later signals go on, and idle() waits for the checks', async () => {
    const gate = deferred();
    const checked: string[] = [];
    const { lifecycle, usage, events, store } = setup(async (s) => {
      checked.push(s.id);
      await gate.promise;
    });
    lifecycle.signal(started(record('a'), true));
    lifecycle.signal(started(record('b'), true));
    lifecycle.signal({ kind: 'usage', caller: 'srs', sessionId: 's1', bytesOut: 100, bytesIn: 5 });
    // the usage signal is applied while both checks still wait
    assert.deepEqual(await usage.promise, ['srs', 's1', 100, 5, NOW]);
    assert.deepEqual(checked, ['a', 'b']);
    assert.deepEqual(events, ['session started a', 'session started b']);
    let idle = false;
    const waiting = lifecycle.idle().then(() => {
      idle = true;
    });
    await turns();
    assert.equal(idle, false, 'idle() waits for the checks');
    gate.resolve();
    await waiting;
    assert.equal(idle, true);
    await store.close();
  });

  it('a record the lifecycle registers itself is checked before the next signal is applied', async () => {
    const gate = deferred();
    const checked: string[] = [];
    const { lifecycle, usage, store } = setup(async (s) => {
      checked.push(s.id);
      await gate.promise;
    });
    let ingested = false;
    void usage.promise.then(() => {
      ingested = true;
    });
    lifecycle.signal(started(record('c'), false));
    lifecycle.signal({ kind: 'usage', caller: 'srs', sessionId: 's1', bytesOut: 1, bytesIn: 1 });
    await turns();
    assert.deepEqual(checked, ['c']);
    assert.equal(ingested, false, 'the next signal waits for the check');
    assert.equal((await store.getSession('mediamtx', 'conn-c'))?.id, 'c', 'registered by the lifecycle');
    gate.resolve();
    await lifecycle.idle();
    assert.equal(ingested, true);
    await store.close();
  });

  it('a check beside the queue that fails is counted as a dropped signal, and idle() still resolves', async () => {
    const { lifecycle, metrics, store } = setup(async () => {
      throw new Error('store gone');
    });
    lifecycle.signal(started(record('d'), true));
    await lifecycle.idle();
    const dropped = (await metrics.lifecycleDropped.get()).values.map((v) => [v.labels.kind, v.value]);
    assert.deepEqual(dropped, [['session_started', 1]]);
    await store.close();
  });

  describe('viewer registrations at the head of the queue', () => {
    /** The store's startSession held until `gate` opens: the ids whose registration began, in order. */
    const gated = (store: SqliteStore, gate: Promise<void>) => {
      const began: string[] = [];
      const original = store.startSession.bind(store);
      store.startSession = async (r, ttl) => {
        began.push(r.id);
        await gate;
        return original(r, ttl);
      };
      return began;
    };

    it('start together: every registration of the run begins before the first is answered, and events still come in order', async () => {
      const gate = deferred();
      const checked: string[] = [];
      const { lifecycle, events, store } = setup(async (s) => void checked.push(s.id));
      const began = gated(store, gate.promise);
      for (const id of ['v1', 'v2', 'v3']) lifecycle.signal(started(record(id), false));
      await turns();
      assert.deepEqual(began, ['v1', 'v2', 'v3'], 'all three registrations in flight at once');
      assert.deepEqual(events, [], 'no signal is done before its registration');
      gate.resolve();
      await lifecycle.idle();
      assert.deepEqual(events, ['session started v1', 'session started v2', 'session started v3']);
      assert.deepEqual(checked, ['v1', 'v2', 'v3'], 'each checked after its registration');
      assert.deepEqual(
        await Promise.all(['v1', 'v2', 'v3'].map(async (id) => (await store.getSession('mediamtx', `conn-${id}`))?.id)),
        ['v1', 'v2', 'v3'],
      );
      await store.close();
    });

    it('stop at a signal of another kind: a viewer after it is registered only once it is applied', async () => {
      const gate = deferred();
      const { lifecycle, usage, store } = setup(async () => undefined);
      const began = gated(store, gate.promise);
      let ingested = false;
      void usage.promise.then(() => {
        ingested = true;
      });
      lifecycle.signal(started(record('w1'), false));
      lifecycle.signal({ kind: 'usage', caller: 'srs', sessionId: 's1', bytesOut: 1, bytesIn: 1 });
      lifecycle.signal(started(record('w2'), false));
      await turns();
      assert.deepEqual(began, ['w1'], 'w2 waits behind the usage signal');
      gate.resolve();
      await lifecycle.idle();
      assert.equal(ingested, true);
      assert.deepEqual(began, ['w1', 'w2']);
      await store.close();
    });

    it('stop at a second signal of the same connection, and at a publisher', async () => {
      const gate = deferred();
      const { lifecycle, store } = setup(async () => undefined);
      const began = gated(store, gate.promise);
      const again = { ...record('x2'), sessionId: 'conn-x1' };
      lifecycle.signal(started(record('x1'), false));
      lifecycle.signal(started(again, false));
      await turns();
      assert.deepEqual(began, ['x1'], 'the same connection again waits for the first');
      gate.resolve();
      await lifecycle.idle();
      assert.deepEqual(began, ['x1', 'x2']);
      assert.equal((await store.getSession('mediamtx', 'conn-x1'))?.id, 'x2', 'the later registration is the one the connection names');

      const gate2 = deferred();
      const began2 = gated(store, gate2.promise);
      const publisher = { ...record('p1'), action: 'publish' as const };
      lifecycle.signal(started(record('y1'), false));
      lifecycle.signal(started(publisher, false));
      lifecycle.signal(started(record('y2'), false));
      await turns();
      assert.deepEqual(began2, ['y1'], 'a publisher ends the run');
      gate2.resolve();
      await lifecycle.idle();
      assert.deepEqual(began2, ['y1', 'p1', 'y2']);
      await store.close();
    });

    it('a registration that fails is counted as a dropped signal in its turn, and the run goes on', async () => {
      const { lifecycle, metrics, events, store } = setup(async () => undefined);
      const original = store.startSession.bind(store);
      store.startSession = async (r, ttl) => {
        if (r.id === 'z2') throw new Error('store gone');
        return original(r, ttl);
      };
      for (const id of ['z1', 'z2', 'z3']) lifecycle.signal(started(record(id), false));
      await lifecycle.idle();
      assert.deepEqual(events, ['session started z1', 'session started z3']);
      const dropped = (await metrics.lifecycleDropped.get()).values.map((v) => [v.labels.kind, v.value]);
      assert.deepEqual(dropped, [['session_started', 1]]);
      await store.close();
    });
  });
});
