// SIGTERM during a load of decisions: every request that was sent gets its answer (no connection
// reset or hang-up), readiness fails while draining, and the process exits 0. The load behaves
// like a load balancer: once told to go away (readiness 503, Connection: close) it sends no more.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request as httpRequest, Agent } from 'node:http';
import { startServer } from '../helpers/process.js';

function post(port: number, agent: Agent, body: string): Promise<{ status?: number; error?: string; close?: boolean }> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/hooks/authorize', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, close: res.headers.connection === 'close' }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    req.end(body);
  });
}

describe('graceful shutdown', () => {
  it('answers every request in flight during SIGTERM and exits 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-stop-'));
    const s = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_SERVER_SHUTDOWNDELAYMS: '500' });
    const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
    const tok = await fetch(`${s.base}/api/subscribe_token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'l', streams: [{ streamName: 'cam1' }] }),
    });
    const { token } = ((await tok.json()) as { data: { token: string } }).data;
    const body = JSON.stringify({ action: 'subscribe', token, streamName: 'cam1' });
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const results: Array<{ status?: number; error?: string; close?: boolean }> = [];
    let stopped = false;
    let sentAfterSignal = 0;
    const loops = Array.from({ length: 16 }, async () => {
      while (!stopped) {
        const r = await post(s.port, agent, body);
        results.push(r);
        if (signalled && !r.error) sentAfterSignal++;
        if (r.close || r.error) break; // told to go away (or failed: counted below)
      }
    });
    let signalled = false;
    await new Promise((r) => setTimeout(r, 400));
    const ready = await fetch(`${s.base}/readyz`);
    assert.equal(ready.status, 200);
    s.proc.kill('SIGTERM');
    signalled = true;
    await new Promise((r) => setTimeout(r, 150));
    const draining = await fetch(`${s.base}/readyz`);
    assert.equal(draining.status, 503, 'not ready while draining');
    const code = await s.exited;
    stopped = true;
    await Promise.all(loops);
    agent.destroy();
    assert.equal(code, 0);
    assert.deepEqual(results.filter((r) => r.error), [], 'no request in flight got a connection error');
    assert.ok(results.filter((r) => r.status === 200).length > 50, 'the load ran');
    assert.ok(sentAfterSignal > 0, 'requests were answered while draining');
    assert.ok(results.every((r) => r.status === 200));
  });
});
