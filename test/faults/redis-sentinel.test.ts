// A Redis primary, a replica and three Sentinels: decisions through two Streamgate instances
// survive the primary being killed (after failover, without restarting Streamgate), and every
// token acknowledged before it (WAIT for one replica) is still there.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { spawnRedisOnFreePort } from '../helpers/redis.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { createStore } from '../../src/services.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/observability/logger.js';
import { until } from '../helpers/until.js';

const cli = (port: number, ...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout.trim();

describe('Redis Sentinel failover', () => {
  const procs: ChildProcess[] = [];
  let dir: string;
  let primary: number;
  let primaryProc: ChildProcess;
  let replica: number;
  const sentinels: number[] = [];
  let a: TestApp;
  let b: TestApp;

  /** A redis-server or sentinel on a free port, answering (tried again on another port when its was taken). */
  const serverOnFreePort = async (what: string, args: (port: number) => string[]): Promise<{ port: number; proc: ChildProcess }> => {
    const started = await spawnRedisOnFreePort(what, args);
    procs.push(started.proc);
    return started;
  };

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'sg-sentinel-'));
    // the replica's first sync at once (Redis waits 5 s for more replicas by default)
    const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--repl-diskless-sync-delay', '0'];
    const first = await serverOnFreePort('the primary', (port) => ['--port', String(port), ...common]);
    primary = first.port;
    primaryProc = first.proc;
    replica = (await serverOnFreePort('the replica', (port) => ['--port', String(port), '--replicaof', '127.0.0.1', String(primary), ...common])).port;
    await until(() => cli(replica, 'info', 'replication').includes('master_link_status:up'), 20000, 'the replica to sync');
    for (let i = 0; i < 3; i++) {
      const { port } = await serverOnFreePort('a sentinel', (port) => {
        const conf = path.join(dir, `sentinel-${port}.conf`);
        writeFileSync(
          conf,
          [
            `port ${port}`,
            'bind 127.0.0.1',
            `dir ${dir}`,
            `sentinel monitor mymaster 127.0.0.1 ${primary} 2`,
            'sentinel down-after-milliseconds mymaster 1000',
            'sentinel failover-timeout mymaster 5000',
            'sentinel parallel-syncs mymaster 1',
          ].join('\n'),
        );
        return [conf, '--sentinel'];
      });
      sentinels.push(port);
    }
    await until(() => sentinels.every((p) => cli(p, 'sentinel', 'get-master-addr-by-name', 'mymaster').includes(String(primary))), 10000, 'the sentinels');
    await until(() => sentinels.every((p) => /num-other-sentinels\n2/.test(cli(p, 'sentinel', 'master', 'mymaster'))), 15000, 'the sentinels to see each other');
    const overrides = {
      redis: { sentinels: sentinels.map((p) => `127.0.0.1:${p}`), sentinelName: 'mymaster', waitReplicas: 1, waitTimeoutMs: 1500, commandTimeoutMs: 3000, keyPrefix: 'sentinel-test:' },
      enforcement: { storeTimeoutMs: 1000 },
    };
    const mk = async () => {
      const config = loadConfig({ env: {}, overrides: { ...overrides, log: { level: 'silent' } } });
      return testApp(await createStore(config, createLogger('silent')), overrides);
    };
    a = await mk();
    b = await mk();
  });

  after(async () => {
    await a?.services.close().catch(() => {});
    await b?.services.close().catch(() => {});
    for (const p of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps deciding after the primary dies, with every acknowledged token still there', async () => {
    const acct = await a.account();
    const tokens: Array<{ id: number; token: string }> = [];
    for (let i = 0; i < 20; i++) {
      const r = await request(a.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: `t${i}`, streams: [{ streamName: 'cam1' }] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      tokens.push(r.body.data);
    }
    const ask = (app: TestApp, token: string) => request(app.app).post('/hooks/authorize').send({ action: 'subscribe', token, streamName: 'cam1' });
    assert.equal((await ask(b, tokens[0].token)).status, 200);

    primaryProc.kill('SIGKILL');
    await until(() => cli(sentinels[0], 'sentinel', 'get-master-addr-by-name', 'mymaster').includes(String(replica)), 30000, 'the failover');
    await until(async () => (await ask(b, tokens[1].token)).status === 200, 30000, 'decisions on B to recover');
    await until(async () => (await ask(a, tokens[2].token)).status === 200, 30000, 'decisions on A to recover');
    for (const t of tokens) {
      const r = await ask(b, t.token);
      assert.equal(r.status, 200, `token ${t.id} lost in the failover`);
    }
    const after = await request(a.app).post('/api/subscribe_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'after', streams: [{ streamName: 'cam1' }] });
    assert.equal(after.status, 503, `no replica left to confirm the write: not acknowledged (${JSON.stringify(after.body)})`);
    assert.deepEqual(after.body, { status: 'fail', data: { message: 'Write not confirmed by 1 replica(s) within 1500 ms; retry' } });
  });
});
