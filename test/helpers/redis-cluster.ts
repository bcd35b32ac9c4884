// A real 3-master Redis Cluster from redis-server processes on free ports (and free bus ports),
// created with redis-cli --cluster create. For the store contract on Cluster.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertRedisAllowed, freePort, spawnRedisOnFreePort } from './redis.js';

export interface TestCluster {
  nodes: string[];
  stop(): Promise<void>;
}

async function portPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = await freePort();
    if (p + 10000 > 65535) continue;
    try {
      await new Promise<void>((resolve, reject) => {
        const s = createServer();
        s.once('error', reject);
        s.listen(p + 10000, '127.0.0.1', () => s.close(() => resolve()));
      });
      return p;
    } catch {
      /* bus port taken: try another */
    }
  }
  throw new Error('no free port pair for a cluster node');
}

export async function startCluster(): Promise<TestCluster> {
  assertRedisAllowed();
  if (spawnSync('redis-server', ['--version']).error) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-cluster-'));
  const procs: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    for (const p of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 3; i++) {
      // each node answers before the next port is chosen, so two nodes never get the same one
      const { port, proc } = await spawnRedisOnFreePort('a cluster node', (port) => {
        const d = path.join(dir, String(port));
        mkdirSync(d, { recursive: true });
        return ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no', '--dir', d];
      }, { pickPort: portPair });
      ports.push(port);
      procs.push(proc);
    }
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline && ports.some((p) => spawnSync('redis-cli', ['-p', String(p), 'ping'], { encoding: 'utf8' }).stdout.trim() !== 'PONG')) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    while (Date.now() < deadline + 10000) {
      const ok = ports.every((p) => /cluster_state:ok/.test(spawnSync('redis-cli', ['-p', String(p), 'cluster', 'info'], { encoding: 'utf8' }).stdout));
      if (ok) return { nodes, stop };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('cluster did not reach cluster_state:ok');
  } catch (e) {
    await stop();
    throw e;
  }
}
