// The webhook dispatcher with a scripted receiver: a flooding account with a receiver that never
// answers holds only its own share of slots and queue, its drops are its own (counted, logged once,
// in its deliveries log), a retry's backoff holds no slot, and shutdown stops at its deadline. The
// receivers' answers, the backoffs and the deadline run on node:test's mocked clock (setTimeout and
// Date): each test moves it by hand.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config/load.js';
import { Metrics } from '../../src/observability/metrics.js';
import { createLogger } from '../../src/observability/logger.js';
import { WebhookDispatcher, ABORTED_BY_SHUTDOWN, type Poster } from '../../src/webhooks/dispatcher.js';
import type { DeliveryResult } from '../../src/webhooks/client.js';
import type { Delivery, Store, Webhook } from '../../src/store/store.js';
import type { PublicEvent } from '../../src/lifecycle/events.js';

type Answer = 'never' | 'fast' | 'fail';

interface Call {
  url: string;
  at: number;
  settled: boolean;
}

/** A receiver per URL host: 'never' answers only when aborted, 'fast' answers 204 after 5 ms, 'fail' 500 after 1 ms. */
function scriptedPoster(answers: Record<string, Answer>) {
  const calls: Call[] = [];
  const poster: Poster = {
    post(url, _body, _headers, signal): Promise<DeliveryResult> {
      const call: Call = { url, at: Date.now(), settled: false };
      calls.push(call);
      const answer = answers[new URL(url).hostname];
      return new Promise<DeliveryResult>((resolve) => {
        const done = (r: DeliveryResult) => {
          call.settled = true;
          resolve(r);
        };
        if (answer === 'fast') setTimeout(() => done({ statusCode: 204, durationMs: 5 }), 5);
        else if (answer === 'fail') setTimeout(() => done({ statusCode: 500, durationMs: 1 }), 1);
        if (signal?.aborted) return done({ error: 'aborted', durationMs: 0 });
        signal?.addEventListener('abort', () => done({ error: 'aborted', durationMs: 0 }), { once: true });
      });
    },
  };
  return { poster, calls, inFlight: (host: string) => calls.filter((c) => !c.settled && new URL(c.url).hostname === host).length };
}

function fakeStore(hooks: Webhook[]) {
  const deliveries: Array<{ webhookId: number; d: Delivery }> = [];
  const store = {
    listWebhooks: async (accountId: string) => hooks.filter((w) => w.accountId === accountId),
    findTokenById: async () => null,
    addDelivery: async (_a: string, webhookId: number, d: Delivery) => {
      deliveries.push({ webhookId, d });
    },
  } as unknown as Store;
  return { store, deliveries };
}

const hook = (id: number, accountId: string, host: string): Webhook => ({
  id,
  accountId,
  url: `https://${host}/hook`,
  secret: Buffer.alloc(32, id).toString('base64'),
  isFeedHooks: true,
  isRecordingHooks: false,
  isThumbnailHooks: false,
  createdOn: '2026-01-01T00:00:00.000Z',
  updatedOn: '2026-01-01T00:00:00.000Z',
  rev: 1,
});

const feed = (accountId: string, name = 'cam1'): PublicEvent => ({
  type: 'feeds',
  event: 'started',
  timestamp: 1,
  data: { feedId: 'f', accountId, name, streamId: `${accountId}/${name}`, started: 1, active: true },
});

function setup(hooks: Webhook[], answers: Record<string, Answer>, webhooks: Record<string, number>) {
  const cfg = loadConfig({ env: {}, overrides: { webhooks: { allowPrivateTargets: true, ...webhooks } } }).webhooks;
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  const metrics = new Metrics({ defaultMetrics: false });
  const { store, deliveries } = fakeStore(hooks);
  const rx = scriptedPoster(answers);
  const dispatcher = new WebhookDispatcher(store, rx.poster, cfg, metrics, createLogger('info', sink), 'test');
  const counted = async (result: string) =>
    (await metrics.webhookDeliveries.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
  return { dispatcher, rx, lines, deliveries, counted, metrics };
}

/** Lets every callback already due run: the store writes, the logging, the next deliveries started. */
const settle = () => new Promise((r) => setImmediate(r));

/** The mocked clock, from before the dispatcher is made (it keeps a reference to Date.now). */
const mockClock = (t: TestContext) => t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-03-01T12:00:00.000Z') });

/** Moves the mocked clock `ms` forward a millisecond at a time, letting what each one starts run. */
async function advance(t: TestContext, ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    t.mock.timers.tick(1);
    await settle();
  }
}

/** Moves the mocked clock a millisecond at a time until `p` settles (at most `limitMs`); resolves to the ms that took. */
async function clockUntil(t: TestContext, p: Promise<unknown>, limitMs: number): Promise<number> {
  const from = Date.now();
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await settle();
  while (!done && Date.now() - from < limitMs) {
    t.mock.timers.tick(1);
    await settle();
  }
  assert.ok(done, `still waiting after ${limitMs} ms`);
  await p;
  return Date.now() - from;
}
const flooderHooks = Array.from({ length: 20 }, (_, i) => hook(i + 1, 'FLOOD', 'never.test'));

describe('WebhookDispatcher: fairness between accounts', () => {
  it('a flooding account holds at most its in-flight cap and its queue share; the victim is sent at once and loses nothing', async (t) => {
    mockClock(t);
    const victimHook = hook(100, 'VICTIM', 'fast.test');
    const { dispatcher, rx, lines, deliveries, counted } = setup([...flooderHooks, victimHook], { 'never.test': 'never', 'fast.test': 'fast' }, {
      concurrency: 8,
      accountConcurrency: 2,
      queueSize: 1000,
      accountQueueSize: 50,
    });
    for (let i = 0; i < 10; i++) await dispatcher.onEvent(feed('FLOOD')); // 200 deliveries
    assert.equal(rx.inFlight('never.test'), 2, 'the flood holds exactly its cap of slots');
    await dispatcher.onEvent(feed('VICTIM'));
    assert.equal(rx.calls.filter((c) => c.url.includes('fast.test')).length, 1, 'the victim was sent without waiting');
    await advance(t, 5); // its receiver answers
    assert.deepEqual(
      deliveries.filter((x) => x.webhookId === 100).map((x) => [x.d.statusCode, x.d.error]),
      [[204, undefined]],
    );
    // 200 = 2 in flight + 50 waiting + 148 dropped, all the flooder's own.
    const drops = deliveries.filter((x) => x.d.error === 'dropped: account delivery queue full');
    assert.equal(drops.length, 148);
    assert.ok(drops.every((x) => x.webhookId <= 20), 'only the flooder loses deliveries');
    assert.equal(await counted('dropped'), 148);
    const warnings = lines.filter((l) => l.msg === 'webhook delivery dropped');
    assert.deepEqual(
      warnings.map((l) => [l.accountId, l.reason, l.droppedSinceLastWarning]),
      [['FLOOD', 'dropped: account delivery queue full', 1]],
      'one warning per account per interval, not one per drop',
    );
    const secretsInLog = JSON.stringify(lines);
    for (const w of flooderHooks) assert.ok(!secretsInLog.includes(w.secret), 'no webhook secret in the log');
    await clockUntil(t, dispatcher.shutdown(Date.now()), 10);
  });

  it('when the whole queue is full, a newcomer takes room from the longest account, not its own or a peer', async (t) => {
    mockClock(t);
    const { dispatcher, deliveries } = setup([...flooderHooks, hook(100, 'VICTIM', 'never.test')], { 'never.test': 'never' }, {
      concurrency: 4,
      accountConcurrency: 1,
      queueSize: 30,
      accountQueueSize: 100,
    });
    for (let i = 0; i < 2; i++) await dispatcher.onEvent(feed('FLOOD')); // 40: 1 in flight, 30 waiting, 9 refused
    await dispatcher.onEvent(feed('VICTIM')); // in flight at once
    await dispatcher.onEvent(feed('VICTIM')); // waits; the flood gives up its newest
    const byReason = (r: string) => deliveries.filter((x) => x.d.error === r).map((x) => x.webhookId);
    assert.equal(byReason('dropped: delivery queue full').length, 10);
    assert.ok(byReason('dropped: delivery queue full').every((id) => id <= 20));
    await clockUntil(t, dispatcher.shutdown(Date.now()), 10);
    assert.deepEqual(
      deliveries.filter((x) => x.webhookId === 100).map((x) => x.d.error),
      [ABORTED_BY_SHUTDOWN],
      'the victim lost nothing to the flood: one attempt, cut only by shutdown',
    );
  });

  it('a retry waiting for its backoff holds no slot: the account\'s next delivery goes first', async (t) => {
    t.mock.method(Math, 'random', () => 0.5); // the first backoff is then 250 ms
    mockClock(t);
    const { dispatcher, rx } = setup([hook(1, 'A', 'fail.test'), hook(2, 'A', 'fast.test')], { 'fail.test': 'fail', 'fast.test': 'fast' }, {
      concurrency: 1,
      accountConcurrency: 1,
      retries: 1,
    });
    const t0 = Date.now();
    await dispatcher.onEvent(feed('A'));
    await clockUntil(t, dispatcher.idle(), 1000);
    assert.deepEqual(
      rx.calls.map((c) => [new URL(c.url).hostname, c.at - t0]),
      [
        ['fail.test', 0],
        ['fast.test', 1],
        ['fail.test', 251],
      ],
      'the second webhook was sent as the first one failed, while it waited 250 ms to retry',
    );
  });
});

describe('WebhookDispatcher: shutdown', () => {
  it('delivers what is queued until the deadline, then aborts in-flight attempts and drops the rest with one summary line', async (t) => {
    mockClock(t);
    const { dispatcher, rx, lines, deliveries, counted } = setup(
      [...flooderHooks, hook(100, 'B', 'fast.test')],
      { 'never.test': 'never', 'fast.test': 'fast' },
      { concurrency: 8, accountConcurrency: 2, queueSize: 1000, accountQueueSize: 1000 },
    );
    for (let i = 0; i < 10; i++) await dispatcher.onEvent(feed('FLOOD')); // 2 in flight, 198 waiting
    for (let i = 0; i < 6; i++) await dispatcher.onEvent(feed('B')); // 2 in flight, 4 waiting
    await settle();
    assert.equal(deliveries.length, 0, 'nothing answered before shutdown: the clock has not moved');
    lines.length = 0;
    // B's six deliveries, two at a time, are answered 5, 10 and 15 ms into the shutdown.
    const took = await clockUntil(t, dispatcher.shutdown(Date.now() + 300), 2000);
    assert.equal(took, 300, 'shutdown ends at its deadline: not when B is done, not later');
    assert.equal(deliveries.filter((x) => x.webhookId === 100 && x.d.statusCode === 204).length, 6, 'B\'s queued deliveries were flushed');
    const written = deliveries.filter((x) => x.webhookId <= 20);
    assert.deepEqual(written.map((x) => x.d.error), [ABORTED_BY_SHUTDOWN, ABORTED_BY_SHUTDOWN], 'only the attempts cut short are in the deliveries log');
    assert.deepEqual(
      lines.map((l) => [l.msg, l.aborted, l.dropped]),
      [['webhooks: shutdown deadline reached; in-flight deliveries aborted, queued ones dropped', 2, 198]],
    );
    assert.equal(await counted('dropped'), 198);
    const sent = rx.calls.length;
    await dispatcher.onEvent(feed('B'));
    assert.equal(rx.calls.length, sent, 'nothing is sent after the deadline');
    assert.equal(deliveries.length, 6 + 2, 'and nothing more is written');
    assert.equal(await counted('dropped'), 199, 'though it is counted');
  });

  it('abandons retries waiting for their backoff, counted in the summary', async (t) => {
    t.mock.method(Math, 'random', () => 0.99); // the first backoff is then 495 ms
    mockClock(t);
    const { dispatcher, lines, rx } = setup([hook(1, 'A', 'fail.test')], { 'fail.test': 'fail' }, { retries: 3 });
    await dispatcher.onEvent(feed('A'));
    await advance(t, 1); // the receiver fails it; the retry waits
    assert.equal(rx.calls.length, 1);
    lines.length = 0;
    const took = await clockUntil(t, dispatcher.shutdown(Date.now() + 1000), 2000);
    assert.equal(took, 0, 'nothing in flight: shutdown does not wait for its deadline');
    assert.deepEqual(lines.map((l) => [l.aborted, l.dropped]), [[0, 1]]);
    await advance(t, 1000); // well past the backoff
    assert.equal(rx.calls.length, 1, 'the retry never ran');
  });
});
