// A webhook receiver that never answers does not slow decisions, on every store: the median time
// of a decision while four deliveries hang stays within a bound of the median without them. That
// the decisions are answered at all, and the attempts' timeouts, are tested on the mocked clock in
// test/http/webhooks.suite.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { redisFactory, sqliteFactory, type StoreFactory } from '../helpers/stores.js';
import { testApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { until } from '../helpers/until.js';

function hangingReceiverSuite(factory: StoreFactory): void {
  describe(`a receiver that hangs: ${factory.name}`, () => {
    let rx: Receiver;
    before(async () => {
      await factory.setup();
      rx = await startReceiver();
    });
    after(async () => {
      await rx.close();
      await factory.teardown();
    });

    it('does not slow decisions', async () => {
      const t = await testApp(await factory.make(), {
        webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: 1500, retries: 0, queueSize: 100, concurrency: 4 },
      });
      const acct = await t.account();
      const auth = { authorization: `Bearer ${acct.secret}` };
      const s = (await request(t.app).post('/api/subscribe_token').set(auth).send({ label: 's', streams: [{ streamName: 'cam1' }] })).body.data;
      /** The median of 40 decisions, in ms. */
      const measure = async () => {
        const times: number[] = [];
        for (let i = 0; i < 40; i++) {
          const t0 = process.hrtime.bigint();
          const r = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', token: s.token, streamName: 'cam1' });
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
          assert.equal(r.status, 200);
        }
        return times.sort((a, b) => a - b)[20];
      };
      const baseline = await measure();
      const w = await request(t.app).post('/api/webhooks').set(auth).send({ url: `${rx.url}/hook`, isFeedHooks: true });
      assert.equal(w.status, 200, JSON.stringify(w.body));
      rx.received.length = 0;
      rx.respond = () => {}; // never answers (the connection is closed when the attempt times out)
      for (let i = 0; i < 4; i++) await request(t.app).post('/api/webhooks/test/Feeds').set(auth).send({ streamName: 'cam1' });
      await until(() => rx.received.length === 4, 10_000, 'the four deliveries to reach the receiver');
      const during = await measure();
      assert.ok(during < baseline * 3 + 5, `median decision ${during.toFixed(2)} ms with hanging deliveries vs ${baseline.toFixed(2)} ms without`);
      await t.services.close(Date.now());
    });
  });
}

hangingReceiverSuite(sqliteFactory());
hangingReceiverSuite(redisFactory());
