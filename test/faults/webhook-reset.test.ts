// A webhook receiver that resets connections (TCP RST mid-request, or right after the handshake, or
// before TLS even starts): each attempt is logged and in the deliveries log as an error, nothing
// throws out of the dispatcher, and decisions taken meanwhile are unaffected.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/observability/logger.js';
import { sqliteFactory } from '../helpers/stores.js';
import { selfSignedCert } from '../helpers/receiver.js';
import { ADMIN_KEY } from '../helpers/app.js';
import { listen, call, type Listening } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';

const EVENTS = soak(6, 25);

type Mode = 'rst-after-request' | 'destroy-after-handshake' | 'rst-before-tls';

/** An HTTPS receiver that never answers: it resets every connection at the chosen moment. */
async function resettingReceiver(mode: Mode, tls: { cert: string; key: string }) {
  let hits = 0;
  let server: net.Server;
  if (mode === 'rst-before-tls') {
    server = net.createServer((socket) => {
      hits++;
      socket.resetAndDestroy();
    });
  } else {
    const s = https.createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req) => {
      hits++;
      // An RST needs the TCP socket under the TLS one (resetAndDestroy refuses a TLS handle).
      (req.socket as unknown as { _parent: net.Socket })._parent.resetAndDestroy();
    });
    if (mode === 'destroy-after-handshake') {
      s.on('secureConnection', (socket) => {
        hits++;
        socket.destroy();
      });
    }
    server = s;
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    hits: () => hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('fault: a webhook receiver that resets connections', () => {
  const factory = sqliteFactory();
  const tls = selfSignedCert();
  const lines: Array<Record<string, unknown>> = [];
  const problems: unknown[] = [];
  const onProblem = (e: unknown) => problems.push(e);
  let services: Services;
  let http: Listening;
  let secret: string;

  before(async () => {
    process.on('unhandledRejection', onProblem);
    process.on('uncaughtException', onProblem);
    await factory.setup();
    const config = loadConfig({
      env: {},
      overrides: {
        adminKey: ADMIN_KEY,
        log: { level: 'info' },
        // Every mode sends its events as test sends, more than the default per-minute allowance.
        webhooks: { allowPrivateTargets: true, caFile: tls.cert, timeoutMs: 3000, retries: 0, concurrency: 4, queueSize: 1000, testSendsPerMinute: 1000 },
      },
    });
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        cb();
      },
    });
    services = await createServices(config, { store: await factory.make(), logger: createLogger('info', sink) });
    http = await listen(createApp(services));
    secret = (await call(http.base, 'POST', '/admin/accounts', { secret: ADMIN_KEY, body: { name: 'rst' } })).body.data.apiSecret;
  });
  after(async () => {
    process.off('unhandledRejection', onProblem);
    process.off('uncaughtException', onProblem);
    await http?.close();
    await services?.close();
    await factory.teardown();
  });

  for (const mode of ['rst-after-request', 'destroy-after-handshake', 'rst-before-tls'] as const) {
    it(`${mode}: ${EVENTS} failed deliveries logged and recorded, decisions unaffected, process fine`, async () => {
      const rx = await resettingReceiver(mode, tls);
      let webhookId: number | undefined;
      try {
        const w = await call(http.base, 'POST', '/api/webhooks', { secret, body: { url: rx.url, isFeedHooks: true } });
        assert.equal(w.status, 200);
        webhookId = w.body.data.id;
        const tok = await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: 's', streams: [{ streamName: 'cam1' }] } });
        lines.length = 0;
        // Events and decisions interleaved: every decision is answered, and allowed.
        const decisions = [];
        for (let i = 0; i < EVENTS; i++) {
          const sent = await call(http.base, 'POST', '/api/webhooks/test/Feeds', { secret, body: { streamName: 'cam1' } });
          assert.deepEqual([sent.status, sent.body], [200, { status: 'success', data: true }]);
          decisions.push(call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: tok.body.data.token, streamName: 'cam1' } }));
        }
        for (const d of await Promise.all(decisions)) assert.deepEqual([d.status, d.body.allowed, d.body.reason], [200, true, 'allowed']);
        await services.dispatcher.idle();

        assert.ok(rx.hits() >= EVENTS, `the receiver saw ${rx.hits()} connections`);
        const log = await call(http.base, 'GET', `/api/webhooks/${w.body.data.id}/deliveries`, { secret });
        assert.equal(log.status, 200);
        assert.equal(log.body.data.length, EVENTS, JSON.stringify(log.body.data));
        for (const d of log.body.data) {
          assert.equal(d.statusCode, undefined);
          assert.equal(d.event, 'feeds.started');
          assert.match(d.error, /ECONNRESET|socket hang up|other side closed|closed|TLS/i, d.error);
          assert.doesNotMatch(d.error, /^timeout/, 'a reset is reported at once, not as a timeout');
        }
        const failed = lines.filter((l) => l.msg === 'webhook delivery failed');
        assert.equal(failed.length, EVENTS);
        for (const l of failed) assert.deepEqual([l.webhookId, l.event, l.statusCode, typeof l.error], [w.body.data.id, 'feeds.started', undefined, 'string']);
        const metrics = await (await fetch(`${http.base}/metrics`)).text();
        assert.match(metrics, /streamgate_webhook_deliveries_total\{result="failure"\} \d+/);
        assert.deepEqual((await call(http.base, 'GET', '/healthz')).body, { status: 'success', data: { alive: true } });
        assert.deepEqual(problems, [], 'no unhandled rejection or uncaught exception');
      } finally {
        if (webhookId !== undefined) await call(http.base, 'DELETE', `/api/webhooks/${webhookId}`, { secret });
        await rx.close();
      }
    });
  }
});
