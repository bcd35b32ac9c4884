// Webhook SSRF bypasses through the API: every spelling of a private address that URL parsers
// accept (decimal, octal, hex, short, full-width, percent-encoded, trailing dot, IPv4-mapped and
// translated IPv6) is refused on create and on update with the exact 400; names that resolve to
// loopback are refused at create, and at delivery when a stored URL's name points there later;
// redirects are never followed, to a private address or anywhere.
// (test/unit/webhook-guard.test.ts and webhook-client.test.ts cover the functions; this is the API.)
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { selfSignedCert } from '../helpers/receiver.js';

const refusal = (message: string) => ({ status: 'fail', data: { message: 'Validation errors', errors: { url: [message] } } });

const BYPASSES: Array<[string, string]> = [
  ['https://2130706433/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://017700000001/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://0177.0.0.1/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://0177.1/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://0x7f000001/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://0x7f.0x0.0x0.0x1/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://127.1/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://127.0.0.1./h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://%31%32%37.0.0.1/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://0/h', 'resolves to an unspecified address (0.0.0.0)'],
  ['https://167772161/h', 'resolves to a private address (10.0.0.1)'],
  ['https://0xa9fea9fe/latest/meta-data', 'resolves to a cloud metadata address (169.254.169.254)'],
  ['https://0251.0376.0251.0376/latest', 'resolves to a cloud metadata address (169.254.169.254)'],
  ['https://169.254.169.254./latest', 'resolves to a cloud metadata address (169.254.169.254)'],
  ['https://[::ffff:127.0.0.1]/h', 'resolves to a loopback address (::ffff:7f00:1, IPv4-mapped 127.0.0.1)'],
  ['https://[0:0:0:0:0:ffff:169.254.169.254]/h', 'resolves to a cloud metadata address (::ffff:a9fe:a9fe, IPv4-mapped 169.254.169.254)'],
  ['https://[::ffff:c0a8:101]/h', 'resolves to a private address (::ffff:c0a8:101, IPv4-mapped 192.168.1.1)'],
  ['https://[::ffff:0:a00:1]/h', 'resolves to a private address (::ffff:0:a00:1, IPv4-translated 10.0.0.1)'],
  ['https://[64:ff9b::7f00:1]/h', 'resolves to a loopback address (64:ff9b::7f00:1, NAT64 127.0.0.1)'],
  ['https://[2002:a9fe:a9fe::1]/h', 'resolves to a cloud metadata address (2002:a9fe:a9fe::1, 6to4 169.254.169.254)'],
  ['https://[::127.0.0.1]/h', 'resolves to a reserved address (::7f00:1)'],
  ['https://[fd00:ec2::254]/h', 'resolves to a private address (fd00:ec2::254)'],
  ['https://[fe80::1%25eth0]/h', 'must be a valid URL'],
  ['https://localhost/h', 'resolves to a loopback address (127.0.0.1)'],
  ['https://LocalHost:8443/h', 'resolves to a loopback address (127.0.0.1)'],
];

interface Rx {
  url: string;
  hits: string[];
  close(): Promise<void>;
}
async function receiver(tls: { cert: string; key: string }, answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Rx> {
  const hits: string[] = [];
  const server = https.createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    hits.push(req.url ?? '');
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

describe('security: webhook SSRF bypasses', () => {
  const factory = sqliteFactory();
  const tls = selfSignedCert();
  let guarded: TestApp;
  let secret: string;
  let accountId: string;
  before(async () => {
    await factory.setup();
    guarded = await testApp(await factory.make(), { webhooks: { allowPrivateTargets: false, caFile: tls.cert, timeoutMs: 2000 } });
    ({ secret, id: accountId } = await guarded.account());
  });
  after(() => factory.teardown());
  const api = (t: TestApp, s: string) => ({
    post: (p: string, b?: object) => request(t.app).post(p).set('authorization', `Bearer ${s}`).send(b),
    put: (p: string, b: object) => request(t.app).put(p).set('authorization', `Bearer ${s}`).send(b),
    get: (p: string) => request(t.app).get(p).set('authorization', `Bearer ${s}`),
  });

  it(`refuses ${BYPASSES.length} private-address spellings on create and update, with the exact 400, storing nothing`, async () => {
    const ok = await api(guarded, secret).post('/api/webhooks', { url: 'https://8.8.8.8/h', isFeedHooks: true });
    assert.equal(ok.status, 200);
    for (const [url, message] of BYPASSES) {
      const c = await api(guarded, secret).post('/api/webhooks', { url, isFeedHooks: true });
      assert.deepEqual([c.status, c.body], [400, refusal(message)], `create ${url}`);
      const u = await api(guarded, secret).put(`/api/webhooks/${ok.body.data.id}`, { url });
      assert.deepEqual([u.status, u.body], [400, refusal(message)], `update ${url}`);
    }
    const list = await api(guarded, secret).get('/api/webhooks/list');
    assert.deepEqual(list.body.data.map((w: { url: string }) => w.url), ['https://8.8.8.8/h']);
  });

  it('checks the resolved address again at delivery: a stored name that now resolves to loopback reaches nothing', async () => {
    const rx = await receiver(tls, (_q, s) => s.writeHead(204).end());
    try {
      const w = await api(guarded, secret).post('/api/webhooks', { url: 'https://8.8.8.8/h', isFeedHooks: true });
      // What DNS rebinding (or a URL stored before the rule) amounts to: the stored name now points at us.
      const port = new URL(rx.url).port;
      await guarded.services.store.updateWebhook(accountId, w.body.data.id, (cur) => ({ ...cur, url: `https://localhost:${port}/stolen` }));
      assert.equal((await api(guarded, secret).post('/api/webhooks/test/Feeds', { streamName: 'cam1' })).status, 200);
      await guarded.services.dispatcher.idle();
      const log = await api(guarded, secret).get(`/api/webhooks/${w.body.data.id}/deliveries`);
      assert.equal(log.body.data.length, 1);
      assert.equal(log.body.data[0].statusCode, undefined);
      assert.equal(log.body.data[0].error, 'refused: localhost resolves to a loopback address (127.0.0.1)');
      assert.deepEqual(rx.hits, [], 'the receiver on loopback got nothing');
    } finally {
      await rx.close();
    }
  });

  it('never follows a redirect (301, 302, 303, 307, 308) to a private address', async () => {
    const inside = await receiver(tls, (_q, s) => s.writeHead(200).end('secret'));
    const codes = [301, 302, 303, 307, 308];
    let n = 0;
    const outside = await receiver(tls, (_q, s) => s.writeHead(codes[n++ % codes.length], { location: `${inside.url}/admin`, 'content-length': '0' }).end());
    // Private targets allowed so that a receiver on 127.0.0.1 can be reached at all; the redirect is
    // then the only way to the second one.
    const f = sqliteFactory();
    await f.setup();
    try {
      const t = await testApp(await f.make(), { webhooks: { allowPrivateTargets: true, caFile: tls.cert, timeoutMs: 2000 } });
      const s = (await t.account()).secret;
      const w = await api(t, s).post('/api/webhooks', { url: `${outside.url}/hook`, isFeedHooks: true });
      for (let i = 0; i < codes.length; i++) await api(t, s).post('/api/webhooks/test/Feeds', { streamName: 'cam1' });
      await t.services.dispatcher.idle();
      const log = await api(t, s).get(`/api/webhooks/${w.body.data.id}/deliveries`);
      assert.deepEqual(log.body.data.map((d: { statusCode: number }) => d.statusCode).sort(), codes);
      assert.equal(outside.hits.length, codes.length);
      assert.deepEqual(inside.hits, [], 'no redirect was followed');
      await t.services.close();
    } finally {
      await outside.close();
      await inside.close();
      await f.teardown();
    }
  });
});
