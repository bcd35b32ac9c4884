// Redis made slow by a proxy that holds its replies: once the version watch stops vouching
// (redis.versionLagMs after the last answered ping), decisions give up at enforcement.storeTimeoutMs
// with the fail-closed 503, management calls at the command timeout with a retryable 503, and both
// recover as soon as replies are fast again, with no restart.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { startDelayProxy, type DelayProxy } from '../helpers/delay-proxy.js';
import { ADMIN_KEY } from '../helpers/app.js';
import { listen, call, type Listening } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';

const STORE_TIMEOUT_MS = 200;
const COMMAND_TIMEOUT_MS = 600;
const MARGIN_MS = 400;
const VERSION_LAG_MS = 100;
const ROUNDS = soak(1, 4);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fault: Redis slow (replies delayed by a proxy)', () => {
  let redis: TestRedis;
  let proxy: DelayProxy;
  let services: Services;
  let http: Listening;
  let secret: string;

  before(async () => {
    redis = await startRedis();
    proxy = await startDelayProxy({ host: '127.0.0.1', port: redis.port });
    const config = loadConfig({
      env: {},
      overrides: {
        adminKey: ADMIN_KEY,
        log: { level: 'silent' },
        dataDir: mkdtempSync(path.join(tmpdir(), 'sg-fault-')),
        redis: { url: proxy.url, keyPrefix: redis.prefix(), commandTimeoutMs: COMMAND_TIMEOUT_MS, versionLagMs: VERSION_LAG_MS },
        enforcement: { storeTimeoutMs: STORE_TIMEOUT_MS },
      },
    });
    services = await createServices(config);
    http = await listen(createApp(services));
    const acct = await call(http.base, 'POST', '/admin/accounts', { secret: ADMIN_KEY, body: { name: 'slow' } });
    secret = acct.body.data.apiSecret;
  });
  after(async () => {
    await http?.close();
    await services?.close();
    await proxy?.close();
    await redis?.stop();
  });

  const decide = (token: string) => call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token, streamName: 'cam1' } });

  it(`times decisions out at storeTimeoutMs and management calls at the command timeout, then recovers (${ROUNDS} round(s))`, async () => {
    const t = await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: 's', streams: [{ streamName: 'cam1' }] } });
    assert.equal(t.status, 200);
    for (let round = 0; round < ROUNDS; round++) {
      assert.equal((await decide(t.body.data.token)).status, 200, `round ${round}: fast store allows`);
      proxy.delayMs = 1500;
      await sleep(VERSION_LAG_MS + 50); // the watch's pings go unanswered: it stops vouching
      const decisions = await Promise.all(Array.from({ length: 8 }, () => decide(t.body.data.token)));
      for (const d of decisions) {
        assert.deepEqual([d.status, d.body.reason, d.body.message], [503, 'store_unavailable', 'Service Unavailable: token store unreachable']);
        assert.ok(d.ms < STORE_TIMEOUT_MS + MARGIN_MS, `decision answered in ${Math.round(d.ms)} ms (storeTimeoutMs ${STORE_TIMEOUT_MS} + ${MARGIN_MS})`);
        assert.ok(d.ms >= STORE_TIMEOUT_MS - 5, `and not before the deadline (${Math.round(d.ms)} ms)`);
      }
      const write = await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: `slow-${round}`, streams: [{ streamName: 'cam1' }] } });
      assert.deepEqual([write.status, write.body], [503, { status: 'fail', data: { message: 'Store unavailable; retry' } }]);
      assert.ok(write.ms < COMMAND_TIMEOUT_MS * 2 + MARGIN_MS, `management call answered in ${Math.round(write.ms)} ms`);
      const ready = await call(http.base, 'GET', '/readyz');
      assert.equal(ready.status, 503);

      proxy.delayMs = 0;
      await sleep(1600); // the replies still held drain; nothing waits on them any more
      const after = await decide(t.body.data.token);
      assert.deepEqual([after.status, after.body.allowed], [200, true], `round ${round}: recovered`);
      assert.equal((await call(http.base, 'GET', '/readyz')).status, 200);
      const created = await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: `fast-${round}`, streams: [{ streamName: 'cam1' }] } });
      assert.equal(created.status, 200);
      const read = await call(http.base, 'GET', `/api/subscribe_token/${created.body.data.id}`, { secret });
      assert.deepEqual(read.body, created.body);
    }
  });
});
