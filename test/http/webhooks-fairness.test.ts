// One account floods its webhooks (as many as it may hold, all pointing at a receiver that never
// answers, fed by every test send it is allowed and by its media server's events): another
// account's event is still delivered while every one of the flood's attempts hangs, exact and
// signed, and the flooder loses only its own deliveries. Default fairness settings throughout; the
// attempt deadline (webhooks.timeoutMs) outlasts the test, so a victim event queued behind the
// flood could never arrive.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';
import { until } from '../helpers/until.js';

/** Longer than the whole test: no attempt of the flood ends (times out) while it runs. */
const HANGING_ATTEMPT_MS = 600_000;

function signatureVerifies(r: Received, secret: string): boolean {
  const key = Buffer.from(secret, 'base64');
  const sha1 = `sha1=${createHmac('sha1', key).update(r.body).digest('hex')}`;
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const v1 = `v1,${createHmac('sha256', key).update(`${id}.${ts}.`).update(r.body).digest('base64')}`;
  return r.headers['x-service-signature'] === sha1 && String(r.headers['webhook-signature']).split(' ').includes(v1);
}

describe('webhook fairness: a flooding account does not delay another account', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  // One HTTPS receiver (one certificate to trust): /victim answers 204 at once, every other path never answers.
  let rx: Receiver;
  const atVictim = () => rx.received.filter((r) => r.path === '/victim');
  const atFlood = () => rx.received.filter((r) => r.path !== '/victim');
  const clock = Date.now();

  before(async () => {
    await factory.setup();
    rx = await startReceiver();
    rx.respond = (req, res) => {
      if (req.url !== '/victim') return; // the connection stays open until the receiver closes
      res.statusCode = 204;
      res.end();
    };
    t = await testApp(await factory.make(), { webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: HANGING_ATTEMPT_MS } }, { now: () => clock });
  });
  after(async () => {
    await t.services.close(Date.now());
    await rx.close();
    await factory.teardown();
  });

  it("delivers the victim's event while the flood's attempts hang, exact and signed, the flood holding only its own share", async () => {
    const { webhooks: cfg } = t.services.config;
    const flood = await t.account('flood');
    const victim = await t.account('victim');
    const as = (secret: string) => ({ authorization: `Bearer ${secret}` });

    // The flooder asks for 100 webhooks: it gets its allowance, the rest are refused.
    const made = [];
    for (let i = 0; i < 100; i++) {
      made.push(await request(t.app).post('/api/webhooks').set(as(flood.secret)).send({ url: `${rx.url}/hook/${i}`, isFeedHooks: true, isRecordingHooks: true }));
    }
    assert.deepEqual(
      [made.filter((r) => r.status === 200).length, made.filter((r) => r.status === 400 && r.body.data.limit === cfg.maxPerAccount).length],
      [cfg.maxPerAccount, 100 - cfg.maxPerAccount],
    );
    // 101 test sends: its allowance goes through, the rest are 429.
    const sends = [];
    for (let i = 0; i < 101; i++) sends.push(await request(t.app).post('/api/webhooks/test/Feeds').set(as(flood.secret)).send({ streamName: 'flood' }));
    assert.deepEqual(
      [sends.filter((r) => r.status === 200).length, sends.filter((r) => r.status === 429 && r.headers['retry-after'] === '60').length],
      [cfg.testSendsPerMinute, 101 - cfg.testSendsPerMinute],
    );
    // And its media server reports recordings as fast as it likes.
    const EVENTS = 100;
    for (let i = 0; i < EVENTS; i++) {
      const r = await request(t.app).post('/hooks/events').send({ type: 'recording', event: 'completed', accountId: flood.id, streamName: 'flood', data: { path: `/rec/${i}.mp4` } });
      assert.equal(r.status, 202, JSON.stringify(r.body));
    }
    const attempted = cfg.maxPerAccount * (cfg.testSendsPerMinute + EVENTS);
    const expectedDrops = attempted - cfg.accountConcurrency - cfg.accountQueueSize;
    assert.ok(expectedDrops > 0, 'the flood overflows its queue share');
    /** The deliveries ended so far, by result. */
    const results = async () => Object.fromEntries((await t.services.metrics.webhookDeliveries.get()).values.map((v) => [v.labels.result, v.value]));
    const dropped = async () => (await results()).dropped ?? 0;
    await until(async () => (await dropped()) === expectedDrops, 15_000, 'the flood to be queued');
    await until(() => atFlood().length === cfg.accountConcurrency, 15_000, 'the flood to hold its in-flight share');
    assert.equal(cfg.accountConcurrency < cfg.concurrency, true);

    // The victim's event, during the flood.
    const vh = (await request(t.app).post('/api/webhooks').set(as(victim.secret)).send({ url: `${rx.url}/victim`, isFeedHooks: true })).body.data;
    const sent = await request(t.app).post('/api/webhooks/test/Feeds').set(as(victim.secret)).send({ streamName: 'victim-cam' });
    assert.deepEqual([sent.status, sent.body], [200, { status: 'success', data: true }]);
    await until(async () => (await results()).success === 1, 15_000, 'the victim delivery');
    assert.deepEqual(await results(), { dropped: expectedDrops, success: 1 }, "delivered while none of the flood's attempts has ended");
    assert.equal(atVictim().length, 1);

    const got = atVictim()[0];
    const body = JSON.parse(got.body.toString());
    assert.deepEqual(body, {
      type: 'feeds',
      event: 'started',
      timestamp: clock,
      data: { feedId: body.data.feedId, accountId: victim.id, name: 'victim-cam', streamId: `${victim.id}/victim-cam`, started: clock, active: true },
    });
    assert.match(body.data.feedId, /^[0-9a-f-]{36}$/);
    assert.equal(got.path, '/victim');
    assert.ok(signatureVerifies(got, vh.secret), 'both signatures verify with the victim webhook secret');
    await until(async () => (await request(t.app).get(`/api/webhooks/${vh.id}/deliveries`).set(as(victim.secret))).body.data.length === 1, 15_000, 'the victim log entry');
    const log = (await request(t.app).get(`/api/webhooks/${vh.id}/deliveries`).set(as(victim.secret))).body.data;
    assert.deepEqual(log.map((d: { statusCode: number; error?: string }) => [d.statusCode, d.error]), [[204, undefined]]);

    // The flooder's drops are its own, recorded in its webhooks' logs; nothing dropped the victim's.
    assert.equal(await dropped(), expectedDrops);
    assert.equal(atFlood().length, cfg.accountConcurrency, 'the flood still holds only its share');
    const metrics = await (await request(t.app).get('/metrics')).text;
    for (const id of [flood.id, victim.id]) assert.ok(!metrics.includes(id), 'no account id in metrics');
    assert.match(metrics, new RegExp(`streamgate_webhook_queue_depth ${cfg.accountQueueSize}\\n`));
  });
});
