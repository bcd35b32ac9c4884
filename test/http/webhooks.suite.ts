// Webhooks over HTTP on every store: management, delivery to a real HTTPS receiver, signatures
// verified independently of Streamgate's code, refusals of the SSRF guard, retries and timeouts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';
import { until } from '../helpers/until.js';

/** The hosted platform's documented check, written from its docs, not from Streamgate's code. */
function verifyServiceSignature(r: Received, secret: string): boolean {
  const expected = `sha1=${createHmac('sha1', Buffer.from(secret, 'base64')).update(r.body).digest('hex')}`;
  return r.headers['x-service-signature'] === expected;
}

/**
 * A receiver written from the hosted platform's docs: X-Millicast-Signature is
 * 'sha1=' + hex(HMAC-SHA1(rawBody, base64decode(secret))).
 */
function verifyHostedSignature(r: Received, secret: string): boolean {
  const expected = `sha1=${createHmac('sha1', Buffer.from(secret, 'base64')).update(r.body).digest('hex')}`;
  return r.headers['x-millicast-signature'] === expected;
}

/** Standard Webhooks v1: base64 HMAC-SHA256 of "<id>.<timestamp>.<body>". */
function verifyStandard(r: Received, secret: string): boolean {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const mac = createHmac('sha256', Buffer.from(secret, 'base64')).update(Buffer.concat([Buffer.from(`${id}.${ts}.`), r.body])).digest('base64');
  return String(r.headers['webhook-signature']).split(' ').includes(`v1,${mac}`) && Math.abs(Date.now() / 1000 - Number(ts)) < 300;
}

export function webhooksSuite(factory: StoreFactory): void {
  describe(`webhooks: ${factory.name}`, () => {
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
    const fresh = async (webhooks: Record<string, unknown> = {}) => {
      t = await testApp(await factory.make(), {
        webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: 2000, retries: 0, queueSize: 100, concurrency: 4, ...webhooks },
      });
      acct = await t.account();
      rx.received.length = 0;
      rx.respond = (_q, s) => {
        s.statusCode = 204;
        s.end();
      };
    };
    const api = (secret = acct.secret) => {
      const auth = { authorization: `Bearer ${secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, b?: object) => request(t.app).post(p).set(auth).send(b),
        put: (p: string, b: object) => request(t.app).put(p).set(auth).send(b),
        del: (p: string) => request(t.app).delete(p).set(auth),
      };
    };
    const settle = async () => {
      await t.services.lifecycle.idle();
      await new Promise((r) => setImmediate(r));
      await t.services.dispatcher.idle();
    };
    const hook = async (body: Record<string, unknown>, secret?: string) => {
      const r = await api(secret).post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: true, ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data as { id: number; secret: string; url: string };
    };
    const token = async (body: Record<string, unknown> = {}) => {
      const r = await api().post('/api/publish_token', { label: 'p', streams: [{ streamName: 'cam.*', isRegex: true }], ...body });
      return r.body.data as { id: number; token: string };
    };
    const rtmp = (call: string, name: string, tok: string, clientid = '7') =>
      request(t.app).post('/hooks/nginx-rtmp').type('form').send(`app=live&addr=203.0.113.7&clientid=${clientid}&call=${call}&name=${name}&type=live&token=${tok}`);

    describe('management', () => {
      before(() => fresh());

      it('creates (200, with a base64 32-byte secret), reads, lists, updates, deletes', async () => {
        const w = await hook({ isRecordingHooks: true, filter: 'cam[0-9]+' });
        assert.equal(Buffer.from(w.secret, 'base64').length, 32);
        assert.deepEqual(w, {
          id: w.id,
          url: `${rx.url}/hook`,
          secret: w.secret,
          isFeedHooks: true,
          isRecordingHooks: true,
          isThumbnailHooks: false,
          isTranscoderHooks: false,
          isMediaHooks: false,
          isViewerConnectionHooks: false,
          filter: 'cam[0-9]+',
        });
        assert.deepEqual((await api().get(`/api/webhooks/${w.id}`)).body.data, w);
        const w2 = await hook({});
        assert.deepEqual((await api().get('/api/webhooks/list')).body.data.map((x: { id: number }) => x.id), [w.id, w2.id]);
        assert.deepEqual((await api().get(`/api/webhooks/list?startingId=${w2.id}&itemCount=5&isDescending=true`)).body.data.map((x: { id: number }) => x.id), [w2.id, w.id]);
        const u = await api().put(`/api/webhooks/${w.id}`, { isThumbnailHooks: true, filter: null });
        assert.deepEqual([u.status, u.body.data.isThumbnailHooks, 'filter' in u.body.data, u.body.data.secret], [200, true, false, w.secret]);
        const r = await api().put(`/api/webhooks/${w.id}`, { refreshSecret: true });
        assert.notEqual(r.body.data.secret, w.secret);
        assert.deepEqual((await api().del(`/api/webhooks/${w.id}`)).body, { status: 'success', data: r.body.data });
        const gone = await api().get(`/api/webhooks/${w.id}`);
        assert.deepEqual([gone.status, gone.body.data.message], [404, `No webhook with id: ${w.id}`]);
      });

      it('is account-scoped', async () => {
        const w = await hook({});
        const other = (await t.account('other')).secret;
        assert.equal((await api(other).get(`/api/webhooks/${w.id}`)).status, 404);
        assert.equal((await api(other).put(`/api/webhooks/${w.id}`, { isFeedHooks: false })).status, 404);
        assert.equal((await api(other).del(`/api/webhooks/${w.id}`)).status, 404);
        assert.equal((await api(other).get(`/api/webhooks/${w.id}/deliveries`)).status, 404);
        assert.deepEqual((await api(other).get('/api/webhooks/list')).body.data, []);
      });

      it('validates every field, naming it', async () => {
        const r = await api().post('/api/webhooks', { url: 'https://example.com/h', filter: '(?<=x)', isThumbnailHooks: 1 });
        assert.equal(r.status, 400);
        assert.deepEqual(Object.keys(r.body.data.errors).sort(), ['filter', 'isFeedHooks', 'isThumbnailHooks']);
        const e = await api().put(`/api/webhooks/${(await hook({})).id}`, {});
        assert.deepEqual([e.status, e.body.data.message], [400, 'No properties specified to update.']);
      });
    });

    describe('limits', () => {
      const ids = async (secret = acct.secret) =>
        (await api(secret).get('/api/webhooks/list?itemCount=100')).body.data.map((w: { id: number }) => w.id) as number[];
      const tooMany = { status: 'fail', data: { message: 'Webhook limit reached: an account may hold at most 3 webhooks; delete one first', limit: 3 } };

      it('an account holds at most webhooks.maxPerAccount: one more is a 400 naming the limit and stores nothing', async () => {
        await fresh({ maxPerAccount: 3 });
        const held = [(await hook({})).id, (await hook({})).id, (await hook({})).id];
        const r = await api().post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: true });
        assert.deepEqual([r.status, r.body], [400, tooMany]);
        assert.deepEqual(await ids(), held);
        const other = await t.account('other');
        assert.equal((await api(other.secret).post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: true })).status, 200, 'another account has its own allowance');
        await api().del(`/api/webhooks/${held[0]}`);
        assert.equal((await api().post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: true })).status, 200, 'deleting one makes room');
      });

      it('creates racing past the limit: exactly the allowance is kept, the rest get the 400', async () => {
        await fresh({ maxPerAccount: 3 });
        const answers = await Promise.all(Array.from({ length: 8 }, () => api().post('/api/webhooks', { url: `${rx.url}/hook`, isFeedHooks: true })));
        const kept = answers.filter((a) => a.status === 200).map((a) => a.body.data.id as number);
        assert.equal(kept.length, 3, JSON.stringify(answers.map((a) => a.status)));
        for (const a of answers.filter((x) => x.status !== 200)) assert.deepEqual([a.status, a.body], [400, tooMany]);
        assert.deepEqual(await ids(), kept.sort((a, b) => a - b));
      });

      it('test sends beyond webhooks.testSendsPerMinute get 429 with Retry-After, queue nothing, and free up as the minute slides', async () => {
        let clock = Date.now();
        t = await testApp(await factory.make(), {
          webhooks: { allowPrivateTargets: true, caFile: rx.caFile, timeoutMs: 2000, retries: 0, testSendsPerMinute: 2 },
        }, { now: () => clock });
        acct = await t.account();
        const other = await t.account('other');
        await hook({});
        rx.received.length = 0;
        const send = (secret = acct.secret) => api(secret).post('/api/webhooks/test/Feeds', { streamName: 'cam1' });
        assert.deepEqual((await send()).body, { status: 'success', data: true });
        clock += 10_000;
        assert.deepEqual((await send()).body, { status: 'success', data: true });
        clock += 20_000;
        const refused = await send();
        assert.deepEqual(
          [refused.status, refused.headers['retry-after'], refused.body],
          [429, '30', { status: 'fail', data: { message: 'Too many test sends: at most 2 per minute per account; retry in 30 s', limit: 2, retryAfterSeconds: 30 } }],
        );
        assert.equal((await send(other.secret)).status, 200, 'another account has its own allowance');
        await settle();
        assert.equal(rx.received.length, 2, 'the refused send queued nothing');
        clock += 29_500;
        assert.deepEqual([(await send()).status, (await send()).headers['retry-after']], [429, '1']);
        clock += 600; // the first send is now more than a minute old
        assert.equal((await send()).status, 200);
        await settle();
        assert.equal(rx.received.length, 3);
      });
    });

    describe('SSRF guard', () => {
      before(() => fresh({ allowPrivateTargets: false }));
      const refused = ['http://example.com/h', 'https://127.0.0.1/h', 'https://10.0.0.5/h', 'https://169.254.169.254/latest', 'https://[::ffff:10.0.0.5]/h', 'https://[::1]/h', 'https://localhost/h', `https://x.example/${'a'.repeat(2100)}`];
      for (const url of refused) {
        it(`refuses ${url.slice(0, 50)} with 400 naming url, on create and update`, async () => {
          const r = await api().post('/api/webhooks', { url, isFeedHooks: true });
          assert.equal(r.status, 400, JSON.stringify(r.body));
          assert.deepEqual(Object.keys(r.body.data.errors), ['url']);
        });
      }
      it('refuses a private URL on update and leaves the webhook unchanged', async () => {
        const ok = await api().post('/api/webhooks', { url: 'https://8.8.8.8/h', isFeedHooks: true });
        assert.equal(ok.status, 200);
        const r = await api().put(`/api/webhooks/${ok.body.data.id}`, { url: 'https://10.0.0.5/h' });
        assert.deepEqual([r.status, Object.keys(r.body.data.errors)], [400, ['url']]);
        assert.equal((await api().get(`/api/webhooks/${ok.body.data.id}`)).body.data.url, 'https://8.8.8.8/h');
      });
    });

    describe('header names', () => {
      before(() => fresh({ headerNames: ['millicast'] }));

      it('webhooks.headerNames [millicast]: only the hosted names, no x-service-*', async () => {
        const w = await hook({});
        assert.equal((await api().post('/api/webhooks/test/Feeds', { streamName: 'cam1' })).status, 200);
        await settle();
        assert.equal(rx.received.length, 1);
        const got = rx.received[0];
        assert.ok(verifyHostedSignature(got, w.secret), 'x-millicast-signature');
        assert.ok(verifyStandard(got, w.secret), 'webhook-signature');
        assert.deepEqual(Object.keys(got.headers).filter((h) => h.startsWith('x-service-')), []);
        await api().del(`/api/webhooks/${w.id}`);
      });
    });

    describe('delivery', () => {
      before(() => fresh());

      it('delivers feeds started then ended for one nginx-rtmp publish, with the same feedId and both signatures valid', async () => {
        const w = await hook({});
        const p = await token();
        assert.equal((await rtmp('publish', 'cam1', p.token)).status, 200);
        assert.equal((await rtmp('publish_done', 'cam1', p.token)).status, 200);
        await settle();
        assert.equal(rx.received.length, 2);
        const [a, b] = rx.received.map((r) => JSON.parse(r.body.toString()));
        for (const r of rx.received) {
          assert.ok(verifyServiceSignature(r, w.secret), 'x-service-signature');
          assert.ok(verifyHostedSignature(r, w.secret), 'x-millicast-signature');
          assert.ok(verifyStandard(r, w.secret), 'webhook-signature');
          assert.equal(r.headers['content-type'], 'application/json');
          assert.equal(r.path, '/hook');
        }
        assert.deepEqual([a.type, a.event, b.type, b.event], ['feeds', 'started', 'feeds', 'ended']);
        assert.equal(a.data.feedId, b.data.feedId);
        assert.deepEqual({ ...a.data, feedId: 0, started: 0 }, { feedId: 0, accountId: acct.id, name: 'cam1', streamId: `${acct.id}/cam1`, started: 0, active: true, tokenId: p.id });
        assert.deepEqual([b.data.active, typeof b.data.ended, b.data.started], [false, 'number', a.data.started]);
        assert.equal(typeof a.timestamp, 'number');
        assert.ok(a.timestamp > 1.7e12, 'epoch milliseconds');
        const log = (await api().get(`/api/webhooks/${w.id}/deliveries`)).body.data;
        assert.deepEqual(log.map((d: { event: string; statusCode: number; attempt: number }) => [d.event, d.statusCode, d.attempt]), [
          ['feeds.ended', 204, 1],
          ['feeds.started', 204, 1],
        ]);
        await api().del(`/api/webhooks/${w.id}`);
      });

      it('signs with the new secret after refreshSecret, and not with the old', async () => {
        rx.received.length = 0;
        const w = await hook({});
        const fresh2 = (await api().put(`/api/webhooks/${w.id}`, { refreshSecret: true })).body.data.secret as string;
        assert.equal((await api().post('/api/webhooks/test/Feeds', { streamName: 'cam1' })).status, 200);
        await settle();
        assert.equal(rx.received.length, 1);
        assert.equal(verifyServiceSignature(rx.received[0], fresh2), true);
        assert.equal(verifyServiceSignature(rx.received[0], w.secret), false);
        assert.equal(verifyStandard(rx.received[0], w.secret), false);
        await api().del(`/api/webhooks/${w.id}`);
      });

      it('sends thumbnails as the exact JPEG bytes, signed, only for publish tokens with enableThumbnails', async () => {
        rx.received.length = 0;
        const w = await hook({ isFeedHooks: false, isThumbnailHooks: true });
        const on = await token({ enableThumbnails: true, streams: [{ streamName: 'thumbs' }] });
        const off = await token({ streams: [{ streamName: 'nothumbs' }] });
        await rtmp('publish', 'thumbs', on.token, '21');
        await rtmp('publish', 'nothumbs', off.token, '22');
        await settle();
        const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
        for (const name of ['thumbs', 'nothumbs']) {
          const r = await request(t.app).post(`/hooks/thumbnail?streamId=${acct.id}/${name}`).set('content-type', 'image/jpeg').send(jpeg);
          assert.equal(r.status, 202);
        }
        await settle();
        assert.equal(rx.received.length, 1);
        const got = rx.received[0];
        assert.equal(Buffer.compare(got.body, jpeg), 0);
        assert.equal(got.headers['content-type'], 'image/jpeg');
        assert.equal(got.headers['x-service-stream-id'], `${acct.id}/thumbs`);
        assert.equal(got.headers['x-service-token-id'], String(on.id));
        assert.match(String(got.headers['x-service-feed-id']), /^[0-9a-f-]{36}$/);
        assert.match(String(got.headers['x-service-timestamp']), /^\d{13}$/);
        // the same values under the hosted platform's names, for receivers written from its docs
        for (const name of ['stream-id', 'token-id', 'feed-id', 'timestamp']) {
          assert.equal(got.headers[`x-millicast-${name}`], got.headers[`x-service-${name}`], name);
        }
        assert.ok(verifyHostedSignature(got, w.secret));
        assert.ok(verifyServiceSignature(got, w.secret));
        assert.ok(verifyStandard(got, w.secret));
        await api().del(`/api/webhooks/${w.id}`);
      });

      it('sends nothing to another account, to a webhook with the kind off, or with a filter that does not match', async () => {
        rx.received.length = 0;
        const otherSecret = (await t.account('other')).secret;
        await hook({}, otherSecret);
        const recOnly = await hook({ isFeedHooks: false, isRecordingHooks: true });
        const filtered = await hook({ filter: 'studio-.*' });
        const p = await token();
        await rtmp('publish', 'cam5', p.token, '31');
        await settle();
        assert.equal(rx.received.length, 0);
        await rtmp('record_done', 'cam5', p.token, '31');
        await settle();
        assert.equal(rx.received.length, 1, 'the recording webhook gets the recording');
        const rec = JSON.parse(rx.received[0].body.toString());
        assert.deepEqual([rec.type, rec.event, rec.data.streamName, rec.data.tokenId], ['recording', 'completed', 'cam5', p.id]);
        for (const w of [recOnly, filtered]) await api().del(`/api/webhooks/${w.id}`);
      });

      it('lists and deletes recordings, sending recording deleted', async () => {
        rx.received.length = 0;
        const w = await hook({ isFeedHooks: false, isRecordingHooks: true });
        const list = (await api().get('/api/recordings?streamName=cam5')).body.data;
        assert.equal(list.length, 1);
        assert.deepEqual([list[0].status, list[0].streamId], ['completed', `${acct.id}/cam5`]);
        assert.deepEqual((await api().del(`/api/recordings/${list[0].id}`)).body, { status: 'success', data: true });
        assert.equal((await api().del(`/api/recordings/${list[0].id}`)).status, 404);
        await settle();
        const ev = JSON.parse(rx.received[0].body.toString());
        assert.deepEqual([ev.event, ev.data.recordingId, typeof ev.data.removedOn], ['deleted', list[0].id, 'number']);
        await api().del(`/api/webhooks/${w.id}`);
      });
    });

    describe('failures', () => {
      it('does not retry by default: one failed attempt in the log, nothing crashes', async () => {
        await fresh();
        const w = await hook({});
        rx.respond = (_q, s) => {
          s.statusCode = 500;
          s.end();
        };
        await api().post('/api/webhooks/test/Feeds', { streamName: 'cam1' });
        await settle();
        assert.equal(rx.received.length, 1);
        const log = (await api().get(`/api/webhooks/${w.id}/deliveries`)).body.data;
        assert.deepEqual(log.map((d: { statusCode: number; attempt: number }) => [d.statusCode, d.attempt]), [[500, 1]]);
      });

      it('with webhooks.retries: 2, exactly 3 attempts arrive, all with the same webhook-id', async (ctx) => {
        // The backoff's jitter drawn as 0: each retry follows at once instead of up to 0.5 s and 1 s later.
        ctx.mock.method(Math, 'random', () => 0);
        await fresh({ retries: 2 });
        await hook({});
        rx.respond = (_q, s) => {
          s.statusCode = 503;
          s.end();
        };
        await api().post('/api/webhooks/test/Feeds', { streamName: 'cam1' });
        await settle();
        assert.equal(rx.received.length, 3);
        assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1);
      });

      it('records a receiver that is down', async () => {
        await fresh();
        const r = await api().post('/api/webhooks', { url: 'https://127.0.0.1:1/h', isFeedHooks: true });
        await api().post('/api/webhooks/test/Feeds', { streamName: 'cam1' });
        await settle();
        const log = (await api().get(`/api/webhooks/${r.body.data.id}/deliveries`)).body.data;
        assert.equal(log.length, 1);
        assert.equal(log[0].statusCode, undefined);
        assert.match(log[0].error, /ECONNREFUSED|refused|connect/i);
      });

      it('a receiver that hangs holds up no decision, and each attempt is recorded as a timeout at webhooks.timeoutMs', async (ctx) => {
        // How long decisions take beside hanging deliveries is measured in test/timing/webhooks-hanging-receiver.test.ts.
        await fresh({ timeoutMs: 1500 });
        const s = (await api().post('/api/subscribe_token', { label: 's', streams: [{ streamName: 'cam1' }] })).body.data;
        const w = await hook({});
        // The attempts' deadlines are timers of the mocked clock: they pass when the test moves it on.
        ctx.mock.timers.enable({ apis: ['setTimeout'] });
        let arrived = 0;
        let arrival: (() => void) | undefined;
        rx.respond = () => {
          arrived++; // never answered (the connection is closed when the attempt times out)
          arrival?.();
        };
        for (let i = 0; i < 4; i++) await api().post('/api/webhooks/test/Feeds', { streamName: 'cam1' });
        while (arrived < 4) await new Promise<void>((r) => (arrival = r));
        for (let i = 0; i < 10; i++) {
          const r = await request(t.app).post('/hooks/authorize').send({ action: 'subscribe', token: s.token, streamName: 'cam1' });
          assert.deepEqual([r.status, r.body.allowed], [200, true], 'answered while four deliveries hang');
        }
        assert.deepEqual((await api().get(`/api/webhooks/${w.id}/deliveries`)).body.data, [], 'every attempt still hangs');
        ctx.mock.timers.tick(1500);
        ctx.mock.timers.reset(); // real timers again, for the wait below
        const logged = async () => (await api().get(`/api/webhooks/${w.id}/deliveries`)).body.data as Array<{ error?: string; statusCode?: number }>;
        await until(async () => (await logged()).length === 4, 10_000, 'the four attempts to be logged');
        assert.deepEqual(
          (await logged()).map((d) => [d.statusCode, d.error]),
          Array.from({ length: 4 }, () => [undefined, 'timeout after 1500 ms']),
        );
      });
    });
  });
}
