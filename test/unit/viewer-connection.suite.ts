// The viewerConnection webhook events' timing as the hosted platform sends them
// (docs/api.md#viewer-connection-events), driven through the lifecycle with node:test's mock
// timers (setTimeout and Date; the lifecycle and the store read the mocked clock): ViewerAttempt for
// a viewer of a stream not live, at most once per 10 s per stream; FirstViewerConnection when a
// watch of a live stream begins (its first viewer, or viewers already waiting when the feed
// starts); NoActiveViewers 60 s after the last viewer left, called off by a viewer joining
// meanwhile, which then begins no new watch. With `instances: 2`, two lifecycles share one store as
// two instances share Redis: each event goes out from one instance only.
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Lifecycle, NO_VIEWERS_AFTER_MS, VIEWER_ATTEMPT_EVERY_MS } from '../../src/lifecycle/lifecycle.js';
import type { UsageService } from '../../src/analytics/usage.js';
import type { PublicEvent, ViewerConnectionEvent } from '../../src/lifecycle/events.js';
import { Metrics } from '../../src/observability/metrics.js';
import type { Store } from '../../src/store/store.js';
import { sessionRecord } from '../helpers/sessions.js';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const ACCT = 'VWRACC';
const OTHER = 'NOHOOK';

export interface SharedStores {
  name: string;
  setup(): Promise<void>;
  /** `count` stores over the same data (one per instance), reading the clock `now`. */
  open(count: number, now: () => number): Promise<Store[]>;
  teardown(): Promise<void>;
}

interface Instance {
  lifecycle: Lifecycle;
  store: Store;
  /** The viewerConnection events published since the last call, once every queued signal is applied. */
  take(): Promise<ViewerConnectionEvent[]>;
  play(id: string, stream?: string, account?: string): void;
  /** A viewer the caller names no connection for: never in the session registry. */
  playUnnamed(stream?: string): void;
  stop(id: string): void;
  publish(id: string, stream?: string): void;
}

function instance(store: Store): Instance {
  const events: ViewerConnectionEvent[] = [];
  const lifecycle = new Lifecycle(
    store,
    { queueSize: 1000, liveTtlSeconds: 86_400, defaultAccountId: '' },
    new Metrics({ defaultMetrics: false }),
    pino({ level: 'silent' }),
    async () => null,
    {} as UsageService,
    () => Date.now(),
  );
  lifecycle.subscribe((e: PublicEvent) => {
    if (e.type === 'viewerConnection') events.push(e);
  });
  return {
    lifecycle,
    store,
    take: async () => {
      await lifecycle.idle();
      return events.splice(0);
    },
    play: (id, stream = 'cam1', account = ACCT) =>
      lifecycle.signal({ kind: 'session_started', caller: 'srs', sessionId: id, action: 'subscribe', accountId: account, streamName: stream }),
    playUnnamed: (stream = 'cam1') => lifecycle.signal({ kind: 'session_started', caller: 'srs', action: 'subscribe', accountId: ACCT, streamName: stream }),
    stop: (id) => lifecycle.signal({ kind: 'session_ended', caller: 'srs', sessionId: id }),
    publish: (id, stream = 'cam1') =>
      lifecycle.signal({ kind: 'session_started', caller: 'srs', sessionId: id, action: 'publish', accountId: ACCT, streamName: stream, tokenId: 9 }),
  };
}

/** An event exactly as the lifecycle hands it to the dispatcher. */
const ev = (event: ViewerConnectionEvent['event'], at: number, stream = 'cam1'): ViewerConnectionEvent => ({
  type: 'viewerConnection',
  event,
  timestamp: at,
  accountId: ACCT,
  filterName: stream,
  data: { name: stream, accountId: ACCT, streamId: `${ACCT}/${stream}` },
});

export function viewerConnectionSuite(backend: SharedStores, opts: { instances: 1 | 2 }): void {
  describe(`viewerConnection timing: ${backend.name}`, () => {
    before(() => backend.setup());
    after(() => backend.teardown());

    /** Mocked timers from T0, `count` instances over one store whose account ACCT has a viewerConnection webhook. */
    const start = async (t: TestContext, count = 1, realTimers = false) => {
      if (!realTimers) t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
      const stores = await backend.open(count, () => Date.now());
      await stores[0].createWebhook({
        accountId: ACCT,
        url: 'https://hooks.example.com/v',
        secret: Buffer.alloc(32, 1).toString('base64'),
        isFeedHooks: false,
        isRecordingHooks: false,
        isThumbnailHooks: false,
        isViewerConnectionHooks: true,
        createdOn: new Date(T0).toISOString(),
        updatedOn: new Date(T0).toISOString(),
      });
      const all = stores.map(instance);
      t.after(() => {
        for (const i of all) i.lifecycle.close();
      });
      return all;
    };
    const tick = (t: TestContext, ms: number) => t.mock.timers.tick(ms);

    it('ViewerAttempt: a viewer of a stream not live, at most once per 10 s per stream; none once it is live', async (t) => {
      const [a] = await start(t);
      a.play('v1');
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0)]);
      tick(t, 4000);
      a.play('v2');
      a.play('w1', 'cam2');
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0 + 4000, 'cam2')], 'cam1 waits 10 s; cam2 has its own 10 s');
      tick(t, VIEWER_ATTEMPT_EVERY_MS - 4000 - 1);
      a.play('v3');
      assert.deepEqual(await a.take(), [], '1 ms before the 10 s are up');
      tick(t, 1);
      a.play('v4');
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0 + VIEWER_ATTEMPT_EVERY_MS)]);
      a.publish('p1');
      a.publish('p2', 'cam2');
      await a.take();
      tick(t, VIEWER_ATTEMPT_EVERY_MS);
      a.play('v5');
      a.play('w2', 'cam2');
      assert.deepEqual(await a.take(), [], 'live streams: no ViewerAttempt, and their watches began when the feeds started');
    });

    it('viewers waiting when the feed starts begin the watch: FirstViewerConnection then, once', async (t) => {
      const [a] = await start(t);
      a.play('v1');
      a.play('v2');
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0)]);
      tick(t, 3000);
      a.publish('p1');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0 + 3000)]);
      a.play('v3');
      assert.deepEqual(await a.take(), []);
    });

    it('FirstViewerConnection for the first viewer of a live stream; NoActiveViewers 60 s after the last one left, not before', async (t) => {
      const [a] = await start(t);
      a.publish('p1');
      assert.deepEqual(await a.take(), [], 'a feed with no viewer begins no watch');
      tick(t, 1000);
      a.play('v1');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0 + 1000)]);
      a.play('v2');
      a.stop('v1');
      assert.deepEqual(await a.take(), []);
      tick(t, 5000);
      a.stop('v2');
      const left = T0 + 6000;
      assert.deepEqual(await a.take(), [], 'not at once');
      tick(t, NO_VIEWERS_AFTER_MS - 1);
      assert.deepEqual(await a.take(), [], '1 ms before the 60 s are up');
      tick(t, 1);
      assert.deepEqual(await a.take(), [ev('NoActiveViewers', left + NO_VIEWERS_AFTER_MS)]);
      tick(t, NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), [], 'once');
      a.play('v3');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', left + 2 * NO_VIEWERS_AFTER_MS)], 'a new watch');
    });

    it('a viewer joining within the 60 s calls NoActiveViewers off and begins no new watch; the next last one leaving starts the 60 s again', async (t) => {
      const [a] = await start(t);
      a.publish('p1');
      a.play('v1');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0)]);
      a.stop('v1');
      assert.deepEqual(await a.take(), []);
      tick(t, 30_000);
      a.play('v2');
      assert.deepEqual(await a.take(), [], 'no FirstViewerConnection: the watch goes on');
      tick(t, NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), [], 'no NoActiveViewers while v2 watches');
      a.stop('v2');
      assert.deepEqual(await a.take(), []);
      const left = T0 + 30_000 + NO_VIEWERS_AFTER_MS;
      tick(t, 20_000);
      a.play('v3');
      assert.deepEqual(await a.take(), []);
      tick(t, 10_000);
      a.stop('v3');
      assert.deepEqual(await a.take(), []);
      tick(t, NO_VIEWERS_AFTER_MS - 1);
      assert.deepEqual(await a.take(), [], "v2's 60 s passed while v3 watched; v3's are not up");
      tick(t, 1);
      assert.deepEqual(await a.take(), [ev('NoActiveViewers', left + 30_000 + NO_VIEWERS_AFTER_MS)]);
    });

    it('a viewer waiting while the stream is off keeps the watch: the feed starting again begins none', async (t) => {
      const [a] = await start(t);
      a.publish('p1');
      a.play('v1');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0)]);
      a.stop('p1');
      a.stop('v1');
      assert.deepEqual(await a.take(), []);
      tick(t, 10_000);
      a.play('v2');
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0 + 10_000)], 'not live: an attempt, which also calls off the NoActiveViewers');
      tick(t, NO_VIEWERS_AFTER_MS);
      a.publish('p2');
      assert.deepEqual(await a.take(), [], 'the watch never ended');
      a.stop('v2');
      assert.deepEqual(await a.take(), []);
      tick(t, NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), [ev('NoActiveViewers', T0 + 10_000 + 2 * NO_VIEWERS_AFTER_MS)]);
    });

    it('a viewer registered while the last one\'s departure was written keeps the watch past the departure mark\'s life', async (t) => {
      const [a] = await start(t);
      a.publish('p1');
      a.play('v1');
      a.stop('v1');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0)]);
      // a viewer another instance admitted, whose own mark step came before this departure's
      await a.store.startSession(sessionRecord({ caller: 'srs', sessionId: 'v2', accountId: ACCT }, T0), 86_400);
      tick(t, NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), [], 'v2 watches');
      tick(t, 3 * NO_VIEWERS_AFTER_MS);
      a.play('v3');
      assert.deepEqual(await a.take(), [], 'the watch goes on: no second FirstViewerConnection');
    });

    it('viewers that never saw the stream live end no watch: no NoActiveViewers', async (t) => {
      const [a] = await start(t);
      a.play('v1');
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0)]);
      a.stop('v1');
      assert.deepEqual(await a.take(), []);
      tick(t, 2 * NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), []);
    });

    it('a viewer the registry never holds gets ViewerAttempt only; an account without a viewerConnection webhook gets nothing', async (t) => {
      const [a] = await start(t);
      a.playUnnamed();
      assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0)]);
      a.publish('p1');
      a.playUnnamed();
      assert.deepEqual(await a.take(), [], 'live: no watch begins without a registered session');
      a.play('x1', 'cam1', OTHER);
      a.stop('x1');
      assert.deepEqual(await a.take(), []);
      tick(t, NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), []);
    });

    it('close() drops a NoActiveViewers not yet due', async (t) => {
      const [a] = await start(t);
      a.publish('p1');
      a.play('v1');
      a.stop('v1');
      assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0)]);
      a.lifecycle.close();
      tick(t, NO_VIEWERS_AFTER_MS);
      assert.deepEqual(await a.take(), []);
    });

    it('the NoActiveViewers timer holds no process open, and close() clears it', async (t) => {
      const set = t.mock.method(globalThis, 'setTimeout');
      const clear = t.mock.method(globalThis, 'clearTimeout');
      const [a] = await start(t, 1, true);
      a.publish('p1');
      a.play('v1');
      a.stop('v1');
      await a.take();
      const armed = set.mock.calls.filter((c) => Number(c.arguments[1]) > NO_VIEWERS_AFTER_MS - 5000).map((c) => c.result as NodeJS.Timeout);
      assert.equal(armed.length, 1, 'one timer for the pending NoActiveViewers');
      assert.equal(armed[0].hasRef(), false, 'unref()ed');
      a.lifecycle.close();
      assert.ok(clear.mock.calls.some((c) => c.arguments[0] === armed[0]), 'cleared on close');
    });

    if (opts.instances === 2) {
      it('two instances: a viewer leaving on one and another joining on the other within 60 s sends neither FirstViewerConnection nor NoActiveViewers', async (t) => {
        const [a, b] = await start(t, 2);
        a.publish('p1');
        a.play('v1');
        assert.deepEqual(await a.take(), [ev('FirstViewerConnection', T0)]);
        a.stop('v1');
        await a.take();
        tick(t, 30_000);
        b.play('v2');
        assert.deepEqual(await b.take(), [], 'the watch goes on across instances');
        tick(t, NO_VIEWERS_AFTER_MS);
        assert.deepEqual([await a.take(), await b.take()], [[], []], "a's departure is called off");
        b.stop('v2');
        await b.take();
        tick(t, NO_VIEWERS_AFTER_MS);
        assert.deepEqual([await a.take(), await b.take()], [[], [ev('NoActiveViewers', T0 + 30_000 + 2 * NO_VIEWERS_AFTER_MS)]], 'from the instance the last viewer left');
      });

      it('two instances: a viewer re-joining and leaving on the other within 60 s moves NoActiveViewers there, sent once', async (t) => {
        const [a, b] = await start(t, 2);
        a.publish('p1');
        a.play('v1');
        a.stop('v1');
        await a.take();
        tick(t, 20_000);
        b.play('v2');
        b.stop('v2');
        await b.take();
        tick(t, NO_VIEWERS_AFTER_MS - 20_000);
        assert.deepEqual([await a.take(), await b.take()], [[], []], "a's 60 s: a later departure replaced it");
        tick(t, 20_000);
        assert.deepEqual([await a.take(), await b.take()], [[], [ev('NoActiveViewers', T0 + 20_000 + NO_VIEWERS_AFTER_MS)]]);
      });

      it('two instances: one ViewerAttempt per 10 s per stream, whichever instance the viewers come through', async (t) => {
        const [a, b] = await start(t, 2);
        a.play('v1');
        assert.deepEqual(await a.take(), [ev('ViewerAttempt', T0)]);
        tick(t, 2000);
        b.play('v2');
        assert.deepEqual(await b.take(), []);
        tick(t, VIEWER_ATTEMPT_EVERY_MS - 2000);
        b.play('v3');
        a.play('v4');
        const sent = [...(await b.take()), ...(await a.take())];
        assert.deepEqual(sent, [ev('ViewerAttempt', T0 + VIEWER_ATTEMPT_EVERY_MS)]);
      });

      it('two instances: the first viewers of a live stream joining on both at once send one FirstViewerConnection', async (t) => {
        const [a, b] = await start(t, 2);
        a.publish('p1');
        await a.take();
        a.play('v1');
        b.play('v2');
        const sent = [...(await a.take()), ...(await b.take())];
        assert.deepEqual(sent, [ev('FirstViewerConnection', T0)]);
      });
    }
  });
}
