// Validating costly stream patterns does not hold the event loop: the real process, 8 concurrent
// creates each carrying 100 patterns at the cost cap, while /healthz and a token-less decision are
// sampled every 10 ms.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer } from '../helpers/process.js';
import { heavy, lagMaxSeconds, timed } from '../helpers/pattern-load.js';
import { MAX_PATTERN_COST, patternCost } from '../../src/domain/pattern-cost.js';

// The service's bound is on its own event loop, as the process reports it: compiling on the event
// loop measured 155 ms (one body per turn) and 988 ms (all bodies in one turn) here. What a caller
// sees also carries the 2-core machine shared with the compile worker, this client and the suite
// running beside this one (109 ms seen once in CI with the loop under its bound), so the caller's
// bound is the one the pattern-load suite uses.
const LOOP_DELAY_MS = 100;
const CALLER_MS = 250;
const CREATES = 8;

describe('validating costly patterns, as a process', { timeout: 120_000 }, () => {
  it('8 concurrent creates × 100 patterns at the cap: /healthz and token-less decisions within 250 ms, event loop under 100 ms, every create stored exactly', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-validate-'));
    const s = await startServer({ STREAMGATE_DATA_DIR: dir });
    try {
      const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
      const api = async (method: string, p: string, body?: unknown) => {
        const r = await fetch(s.base + p, {
          method,
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as { data: Record<string, unknown> } };
      };
      const bodies = Array.from({ length: CREATES }, (_, k) => ({
        label: `wide${k}`,
        streams: Array.from({ length: 100 }, (_, i) => ({ streamName: heavy(k, i), isRegex: true })),
      }));
      for (const b of bodies) for (const st of b.streams) assert.ok(patternCost(st.streamName) > 0.95 * MAX_PATTERN_COST && patternCost(st.streamName) <= MAX_PATTERN_COST);

      const health = async () => (await fetch(`${s.base}/healthz`)).status;
      const decision = async () => {
        const r = await fetch(`${s.base}/api/director/subscribe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ streamName: 'open' }),
        });
        await r.arrayBuffer();
        return r.status;
      };
      // Warm the process (the first of each kind of request loads and compiles code), then open
      // the lag window.
      assert.equal(await health(), 200);
      assert.equal(await decision(), 200);
      assert.equal((await api('POST', '/api/publish_token', { label: 'warm', streams: [{ streamName: 'warm-[0-9]+', isRegex: true }] })).status, 200);
      assert.equal(await decision(), 200);
      await lagMaxSeconds(s.base);

      let sampling = true;
      const worst = { health: 0, decision: 0 };
      const seen = { health: new Set<number>(), decision: new Set<string>() };
      const sample = async (what: 'health' | 'decision') => {
        while (sampling) {
          const t = await timed(what === 'health' ? health : decision);
          if (what === 'health') seen.health.add(t.value);
          else seen.decision.add(String(t.value));
          worst[what] = Math.max(worst[what], t.ms);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      const samplers = [sample('health'), sample('decision')];
      let created: Array<{ status: number; body: { data: Record<string, unknown> } }>;
      const t0 = performance.now();
      try {
        created = await Promise.all(bodies.map((b) => api('POST', '/api/publish_token', b)));
      } finally {
        sampling = false;
        await Promise.all(samplers);
      }
      const wall = performance.now() - t0;
      const lag = (await lagMaxSeconds(s.base)) * 1000;
      console.log(
        `8 creates in ${wall.toFixed(0)} ms; /healthz worst ${worst.health.toFixed(1)} ms, decision worst ${worst.decision.toFixed(1)} ms, event-loop lag max ${lag.toFixed(1)} ms`,
      );

      assert.deepEqual(created.map((r) => r.status), Array(CREATES).fill(200));
      for (const [k, r] of created.entries()) {
        const stored = await api('GET', `/api/publish_token/${r.body.data.id as number}`);
        assert.equal(stored.status, 200);
        assert.equal(stored.body.data.label, `wide${k}`);
        assert.deepEqual(stored.body.data.streams, bodies[k].streams);
      }
      assert.deepEqual([...seen.health], [200]);
      assert.deepEqual([...seen.decision], ['200']);
      assert.ok(worst.health < CALLER_MS, `/healthz took ${worst.health.toFixed(1)} ms`);
      assert.ok(worst.decision < CALLER_MS, `a token-less decision took ${worst.decision.toFixed(1)} ms`);
      assert.ok(lag < LOOP_DELAY_MS, `event loop held ${lag.toFixed(1)} ms`);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${s.logs.slice(-10).join('\n')}`, { cause: e });
    } finally {
      s.proc.kill('SIGTERM');
      await s.exited;
    }
  });
});
