// The test helpers' Redis start: a port taken between choosing it and binding it (by another test's
// server, or by a node of the same cluster not yet bound) is given up for another, never shared.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { freePort, spawnRedisOnFreePort, startRedis, type TestRedis } from '../helpers/redis.js';

describe('starting a test Redis on a free port', () => {
  const procs: ChildProcess[] = [];
  let held: TestRedis | undefined;
  after(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await held?.stop();
  });

  it('a port another server holds is given up, and the next one is used by a server of its own', async () => {
    held = await startRedis();
    const candidates = [held.port];
    const picked: number[] = [];
    const pick = async () => {
      const port = candidates.shift() ?? (await freePort());
      picked.push(port);
      return port;
    };
    const started = await spawnRedisOnFreePort('a redis-server', (port) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { pickPort: pick });
    procs.push(started.proc);
    assert.equal(picked.length, 2);
    assert.equal(picked[0], held.port);
    assert.equal(started.port, picked[1]);
    assert.notEqual(started.port, held.port);
    assert.equal(started.proc.exitCode, null);
  });

  it('gives up after five taken ports, naming what it started', async () => {
    const port = held?.port ?? assert.fail('the first test holds a server');
    await assert.rejects(
      spawnRedisOnFreePort('the held one', (p) => ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { pickPort: async () => port }),
      { message: 'the held one could not start: the port was taken 5 times' },
    );
  });
});
