// Redis killed (SIGKILL) and restarted under a steady load of decisions and token creates, through
// the production Redis client: fail-closed answers while it is down, recovery without a restart of
// Streamgate, and every create that was acknowledged (200) still there afterwards.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { ADMIN_KEY } from '../helpers/app.js';
import { listen, call, type Listening } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';

const CYCLES = soak(1, 3);
const PHASE_MS = soak(800, 4000);
const WORKERS = 4;
const STORE_TIMEOUT_MS = 250;

interface Sample {
  kind: 'decide' | 'create';
  status: number;
  body: any;
  start: number;
  end: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fault: Redis killed and restarted under load', () => {
  let redis: TestRedis;
  let services: Services;
  let http: Listening;
  let secret: string;

  before(async () => {
    redis = await startRedis({ persistent: true });
    const config = loadConfig({
      env: {},
      overrides: {
        adminKey: ADMIN_KEY,
        log: { level: 'silent' },
        dataDir: mkdtempSync(path.join(tmpdir(), 'sg-fault-')),
        redis: { url: redis.url, keyPrefix: redis.prefix() },
        enforcement: { storeTimeoutMs: STORE_TIMEOUT_MS },
      },
    });
    services = await createServices(config); // the production client: no offline queue, reconnects
    http = await listen(createApp(services));
    const acct = await call(http.base, 'POST', '/admin/accounts', { secret: ADMIN_KEY, body: { name: 'load' } });
    assert.equal(acct.status, 201);
    secret = acct.body.data.apiSecret;
  });
  after(async () => {
    await http?.close();
    await services?.close();
    await redis?.stop();
  });

  it(`answers 503 while Redis is down, recovers by itself, and loses no acknowledged create (${CYCLES} cycle(s))`, async () => {
    const seed = await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: 'seed', streams: [{ streamName: 'cam1' }] } });
    assert.equal(seed.status, 200);
    const samples: Sample[] = [];
    let stop = false;
    let n = 0;
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const start = performance.now();
        if (i % 2 === w % 2) {
          const r = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: seed.body.data.token, streamName: 'cam1' } });
          samples.push({ kind: 'decide', status: r.status, body: r.body, start, end: performance.now() });
        } else {
          const r = await call(http.base, 'POST', '/api/subscribe_token', { secret, body: { label: `w${w}-${n++}`, streams: [{ streamName: 'cam1' }] } });
          samples.push({ kind: 'create', status: r.status, body: r.body, start, end: performance.now() });
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    const outages: Array<{ down: number; up: number }> = [];
    try {
      for (let c = 0; c < CYCLES; c++) {
        await sleep(PHASE_MS);
        await redis.kill();
        const down = performance.now();
        await sleep(PHASE_MS);
        const up = performance.now();
        await redis.start();
        outages.push({ down, up });
        // recovery without touching Streamgate: the next decisions are allowed again
        const deadline = Date.now() + 15000;
        let recovered = false;
        while (!recovered && Date.now() < deadline) {
          await sleep(100);
          const since = samples.filter((s) => s.kind === 'decide' && s.start > up);
          recovered = since.length > 0 && since[since.length - 1].status === 200;
        }
        assert.ok(recovered, `cycle ${c}: decisions allowed again within 15 s of Redis coming back`);
      }
      await sleep(PHASE_MS);
    } finally {
      stop = true;
      await load;
    }

    // Every answer is an allow, an acknowledged create, or the documented fail-closed 503.
    for (const s of samples) {
      if (s.kind === 'decide') {
        if (s.status === 200) assert.equal(s.body.allowed, true);
        else assert.deepEqual([s.status, s.body.allowed, s.body.reason, s.body.message], [503, false, 'store_unavailable', 'Service Unavailable: token store unreachable']);
      } else if (s.status !== 200) {
        assert.deepEqual([s.status, s.body], [503, { status: 'fail', data: { message: 'Store unavailable; retry' } }]);
      }
    }
    // Everything asked wholly inside an outage was refused, quickly (no queueing on a dead store).
    for (const [c, o] of outages.entries()) {
      const inside = samples.filter((s) => s.start > o.down && s.end < o.up);
      assert.ok(inside.filter((s) => s.kind === 'decide').length >= 5, `cycle ${c}: the load kept deciding while Redis was down`);
      assert.ok(inside.filter((s) => s.kind === 'create').length >= 5, `cycle ${c}: the load kept writing while Redis was down`);
      for (const s of inside) {
        assert.equal(s.status, 503, `cycle ${c}: ${s.kind} during the outage`);
        assert.ok(s.end - s.start < STORE_TIMEOUT_MS + 750, `cycle ${c}: ${s.kind} answered in ${Math.round(s.end - s.start)} ms`);
      }
    }
    // No acknowledged write lost: each 200 reads back exactly, and its token decides.
    const acked = samples.filter((s) => s.kind === 'create' && s.status === 200);
    assert.ok(acked.length >= 10, `${acked.length} acknowledged creates`);
    for (const s of acked) {
      const r = await call(http.base, 'GET', `/api/subscribe_token/${s.body.data.id}`, { secret });
      assert.deepEqual([r.status, r.body], [200, s.body], `token ${s.body.data.id} survived`);
    }
    const last = acked[acked.length - 1].body.data.token;
    const d = await call(http.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: last, streamName: 'cam1' } });
    assert.equal(d.status, 200);
    const ready = await call(http.base, 'GET', '/readyz');
    assert.equal(ready.status, 200);
  });
});
