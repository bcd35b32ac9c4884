// Token-less entry points cannot be used to enumerate accounts: an unknown account, an existing
// account whose stream is secured and one whose every stream is secured (secureViewer) get the
// same status, body and headers, on the director and on every hook, on both stores.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { ADMIN_KEY, testApp, type TestApp } from '../helpers/app.js';
import { sqliteFactory, redisFactory, type StoreFactory } from '../helpers/stores.js';
import { DECISION_ID, idChecked } from '../helpers/decision-id.js';

/** What a caller can tell apart: everything but the per-request id, the date and the decision id. */
function observable(r: request.Response) {
  const { 'x-request-id': _id, date: _date, 'x-streamgate-decision-id': decision, ...headers } = r.headers as Record<string, string>;
  if (decision !== undefined) assert.match(decision, DECISION_ID);
  // every refusal's decisionId is its own (a version 7 UUID): checked, and set aside
  const body = r.body && typeof r.body === 'object' && !Buffer.isBuffer(r.body) ? idChecked(r.body) : r.text;
  return { status: r.status, headers, body };
}

const oracleSuite = (factory: StoreFactory) =>
  describe(`no account-existence oracle: ${factory.name}`, () => {
    let t: TestApp;
    let secured: string;
    let viewerOnly: string;
    const unknown = 'ZZZZZZ';
    before(async () => {
      await factory.setup();
      t = await testApp(await factory.make(), {
        hooks: {
          secret: '',
          trustedProxies: ['127.0.0.1'],
          omeSecret: '',
          accountInPath: true,
          mediamtx: { allowApiFrom: [], pathPrefix: '' },
          authRequest: { streamPatterns: ['^/hls/(?<account>[^/]+)/(?<stream>[^/]+)/'], action: 'subscribe' },
        },
        enforcement: { defaultAccountId: '' },
      });
      const a = await t.account('secured-stream');
      const b = await t.account('secure-viewer');
      secured = a.id;
      viewerOnly = b.id;
      assert.ok(![secured, viewerOnly].includes(unknown));
      const pub = await request(t.app)
        .post('/api/publish_token')
        .set('authorization', `Bearer ${a.secret}`)
        .send({ label: 'premium', streams: [{ streamName: 'premium' }], subscribeRequiresAuth: true });
      assert.ok(pub.status === 200 || pub.status === 201, JSON.stringify(pub.body));
      const sv = await request(t.app).put(`/admin/accounts/${viewerOnly}`).set('authorization', `Bearer ${ADMIN_KEY}`).send({ secureViewer: true });
      assert.equal(sv.status, 200, JSON.stringify(sv.body));
    });
    after(() => factory.teardown());

    /** Each token-less entry point, asked about stream 'premium' of account `acct`. */
    const ENTRY_POINTS: Array<[string, (acct: string) => request.Test]> = [
      ['director subscribe', (acct) => request(t.app).post('/api/director/subscribe').set('origin', 'https://viewer.example').send({ streamName: 'premium', streamAccountId: acct })],
      ['director publish', (acct) => request(t.app).post('/api/director/publish').send({ streamName: 'premium', streamAccountId: acct })],
      ['authorize', (acct) => request(t.app).post('/hooks/authorize').send({ action: 'subscribe', streamName: 'premium', accountId: acct, clientIp: '203.0.113.7' })],
      ['auth-request (nginx)', (acct) => request(t.app).get('/hooks/auth-request').set({ 'x-original-uri': `/hls/${acct}/premium/index.m3u8`, 'x-forwarded-for': '203.0.113.7' })],
      ['auth-request (Envoy suffix)', (acct) => request(t.app).get(`/hooks/auth-request/hls/${acct}/premium/seg-1.ts`)],
      [
        'MediaMTX read',
        (acct) =>
          request(t.app)
            .post('/hooks/mediamtx/auth')
            .send({ ip: '203.0.113.7', user: '', password: '', token: '', action: 'read', path: `${acct}/premium`, protocol: 'rtsp', id: 'sess-1', query: '' }),
      ],
      [
        'nginx-rtmp play',
        (acct) =>
          request(t.app)
            .post('/hooks/nginx-rtmp')
            .set('content-type', 'application/x-www-form-urlencoded')
            .send(`app=live&addr=203.0.113.7&clientid=12&call=play&name=${encodeURIComponent(`${acct}/premium`)}`),
      ],
      [
        'SRS on_play',
        (acct) =>
          request(t.app)
            .post('/hooks/srs')
            .send({ action: 'on_play', client_id: 'c1', ip: '203.0.113.7', vhost: '__defaultVhost__', app: 'live', stream: `${acct}/premium`, param: '' }),
      ],
      [
        'OME outgoing',
        (acct) =>
          request(t.app)
            .post('/hooks/ome/admission')
            .send({
              client: { address: '203.0.113.7', port: 29291 },
              request: { direction: 'outgoing', protocol: 'webrtc', status: 'opening', url: `wss://host:3334/app/${acct}/premium`, time: '2021-05-12T13:45:00.000Z' },
            }),
      ],
    ];

    for (const [name, call] of ENTRY_POINTS) {
      it(`${name}: an unknown account answers exactly as an existing one whose stream is secured`, async () => {
        const [u, s, v] = [observable(await call(unknown)), observable(await call(secured)), observable(await call(viewerOnly))];
        // OME refuses inside a 200 ({"allowed":false}); every other caller with a 4xx.
        assert.ok(u.status !== 200 || (u.body as { allowed?: boolean }).allowed === false, `a refusal: ${JSON.stringify(u)}`);
        assert.deepEqual(s, u, 'secured stream vs unknown account');
        assert.deepEqual(v, u, 'secureViewer account vs unknown account');
      });
    }

    it("an existing account's open stream is served: its existence is public by design, the refusals above are not", async () => {
      const open = await request(t.app).post('/api/director/subscribe').send({ streamName: 'lobby', streamAccountId: secured });
      assert.equal(open.status, 200);
      const none = await request(t.app).post('/api/director/subscribe').send({ streamName: 'lobby', streamAccountId: unknown });
      assert.deepEqual([none.status, idChecked(none.body)], [401, { status: 'fail', data: { message: 'Unauthorized: Token required', reason: 'token_required' } }]);
    });
  });

oracleSuite(sqliteFactory());
oracleSuite(redisFactory());
