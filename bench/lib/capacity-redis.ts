// The Redis side of the capacity run (bench/capacity.ts): a private deployment, one Redis or a local
// 3-primary Cluster, and what it is measured by: INFO (used_memory, commandstats, CPU) summed over
// the primaries, and MEMORY USAGE of the keys of each key family (src/store/redis/keys.ts).
import { spawnSync } from 'node:child_process';
import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../../src/store/redis/connect.js';
import { startCluster } from '../../test/helpers/redis-cluster.js';
import { LOAD_CPU } from './config.js';
import { startPinnedRedis } from './setup.js';

export type Topology = 'single' | 'cluster';

export interface Deployment {
  topology: Topology;
  /** The primaries, host:port: every figure is summed over them. */
  primaries: string[];
  /** Streamgate's settings naming this Redis. */
  env: Record<string, string>;
  /** A client of this deployment with `keyPrefix`, for writing straight through the store. */
  client(keyPrefix: string): RedisClient;
  stop(): Promise<void>;
}

const hostPort = (hp: string) => {
  const [host, port] = hp.split(':');
  return { host, port: Number(port) };
};

/** A private redis-server on a free port, pinned with the load generator (setup.ts). */
export async function singleRedis(): Promise<Deployment> {
  const r = await startPinnedRedis();
  const { hostname, port } = new URL(r.url);
  return {
    topology: 'single',
    primaries: [`${hostname}:${port}`],
    env: { REDIS_URL: r.url },
    client: (keyPrefix) => new Redis(r.url, { keyPrefix, enableAutoPipelining: true }),
    stop: () => r.stop(),
  };
}

/**
 * A real 3-primary Redis Cluster on free ports (the store contract's helper), its nodes pinned
 * with the load generator as the single Redis is, so Streamgate keeps the servers' core to itself.
 */
export async function clusterRedis(): Promise<Deployment> {
  const c = await startCluster();
  for (const node of c.nodes) {
    const pid = /process_id:(\d+)/.exec(await withNode(node, (r) => r.info('server')))?.[1];
    if (pid) spawnSync('taskset', ['-cp', process.env.BENCH_REDIS_CPU ?? LOAD_CPU, pid], { stdio: 'ignore' });
  }
  return {
    topology: 'cluster',
    primaries: c.nodes,
    env: { STREAMGATE_REDIS_CLUSTERNODES: JSON.stringify(c.nodes) },
    client: (keyPrefix) => new Cluster(c.nodes.map(hostPort), { keyPrefix, enableAutoPipelining: true }),
    stop: () => c.stop(),
  };
}

async function withNode<T>(node: string, f: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(hostPort(node));
  try {
    return await f(r);
  } finally {
    r.disconnect();
  }
}

/** One reading of the deployment, summed over its primaries. */
export interface Reading {
  at: number;
  usedMemory: number;
  /**
   * used_memory less what is not the keys (MEMORY STATS): client buffers (a busy client's query
   * and reply buffers shrink seconds after it goes quiet), cluster links, script caches (a script's
   * first run), replication and AOF buffers, and the keyspace's hashtables (`tables`).
   */
  dataMemory: number;
  /**
   * The keyspace's hashtables (main and expires): a pointer per bucket, doubling when the keys
   * outgrow them, so a step that crosses a power of two pays for all keys before it.
   */
  tableMemory: number;
  /** used_cpu_user + used_cpu_sys, µs. */
  cpuUs: number;
  /** commandstats: calls and µs by command (subcommands as Redis names them, e.g. memory|usage). */
  commands: Map<string, { calls: number; usec: number }>;
  /** Each primary's used_memory and calls (all commands), in the order of Deployment.primaries. */
  byPrimary: Array<{ usedMemory: number; calls: number }>;
}

/**
 * What this meter itself sends, left out of every command count (Streamgate sends INFO only when a
 * connection is made, and SCAN only in its start-up upgrade: neither inside a measured window).
 */
const METER_COMMANDS = new Set(['info', 'scan', 'memory|usage', 'memory|stats']);

/** The MEMORY STATS fields that are not the keys (Reading.dataMemory). */
const NOT_DATA = ['startup.allocated', 'replication.backlog', 'clients.slaves', 'clients.normal', 'cluster.links', 'aof.buffer', 'lua.caches', 'functions.caches'];

/** The commands that run a script: each also counts every command its script runs under that command's name. */
export const SCRIPT_COMMANDS = new Set(['evalsha', 'eval', 'evalsha_ro', 'eval_ro', 'fcall', 'fcall_ro']);

/**
 * Every key family Streamgate keeps (src/store/redis/keys.ts), matched on the key without its prefix;
 * the first match wins.
 */
const FAMILIES: Array<[family: string, match: RegExp]> = [
  ['token records {a}:tr:<bucket>', /^\{a:[^}]*\}:tr:\d+$/],
  ['token value hints tv:<hash4>', /^tv:/],
  ['token id hints tid:<id/100>', /^tid:/],
  ['token lists {a}:tokens:*', /^\{a:[^}]*\}:tokens:/],
  ['bound addresses {a}:t:<id>:bound', /^\{a:[^}]*\}:t:\d+:bound$/],
  ['token uses {a}:t:<id>:uses', /^\{a:[^}]*\}:t:\d+:uses$/],
  ['session records {a}:ss:<id>', /^\{a:[^}]*\}:ss:/],
  ['live sessions of the account {a}:ssi', /^\{a:[^}]*\}:ssi$/],
  ['sessions by token {a}:ssi:t:<id>', /^\{a:[^}]*\}:ssi:t:/],
  ['sessions by stream {a}:ssi:s:<name>', /^\{a:[^}]*\}:ssi:s:/],
  ['publishers by stream {a}:ssi:p:<name>', /^\{a:[^}]*\}:ssi:p:/],
  ['session pointers {a}:sp:<caller>:<id>', /^\{a:[^}]*\}:sp:/],
  ['caller-id hints sess:<caller>:<id>', /^sess:/],
  ['session gauge ssc:*', /^ssc/],
  ['decision history {a}:hd*', /^\{a:[^}]*\}:hd/],
  ['live streams {a}:live', /^\{a:[^}]*\}:live$/],
  ['token id runs {a}:tids', /^\{a:[^}]*\}:tids$/],
  ['other', /^/],
];

export const familyOf = (key: string): string => FAMILIES.find(([, re]) => re.test(key))![0];

/** A family's keys and their bytes (MEMORY USAGE; estimated from a sample when it has many keys). */
export interface FamilySize {
  keys: number;
  bytes: number;
  sampled: number;
}

/** Keys measured per family at most: beyond, an even sample of them, scaled up. */
const SAMPLE_MAX = 5000;

export class Meter {
  private readonly nodes: Redis[];

  constructor(primaries: string[]) {
    this.nodes = primaries.map((p) => new Redis(hostPort(p)));
  }

  async read(): Promise<Reading> {
    const out: Reading = { at: performance.now(), usedMemory: 0, dataMemory: 0, tableMemory: 0, cpuUs: 0, commands: new Map(), byPrimary: [] };
    for (const node of this.nodes) {
      const stats = (await node.call('MEMORY', 'STATS')) as unknown[];
      const stat = (name: string) => Number(stats[stats.indexOf(name) + 1] ?? 0);
      // db.<n>: [overhead.hashtable.main, bytes, overhead.hashtable.expires, bytes, ...]
      let tables = 0;
      for (let i = 0; i < stats.length; i += 2) {
        const db = stats[i + 1];
        if (typeof stats[i] !== 'string' || !(stats[i] as string).startsWith('db.') || !Array.isArray(db)) continue;
        for (const f of ['overhead.hashtable.main', 'overhead.hashtable.expires']) tables += Number(db[db.indexOf(f) + 1] ?? 0);
      }
      out.tableMemory += tables;
      out.dataMemory += stat('total.allocated') - NOT_DATA.reduce((sum, f) => sum + stat(f), 0) - tables;
      const info = await node.info('memory', 'cpu', 'commandstats');
      const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
      out.usedMemory += field('used_memory');
      out.byPrimary.push({ usedMemory: field('used_memory'), calls: 0 });
      out.cpuUs += (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
      for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
        if (METER_COMMANDS.has(m[1])) continue;
        out.byPrimary[out.byPrimary.length - 1].calls += Number(m[2]);
        const had = out.commands.get(m[1]) ?? { calls: 0, usec: 0 };
        out.commands.set(m[1], { calls: had.calls + Number(m[2]), usec: had.usec + Number(m[3]) });
      }
    }
    return out;
  }

  /**
   * The bytes of every key family under `keyPrefix`: all keys listed by SCAN on each primary, then
   * MEMORY USAGE (SAMPLES 0: every element of a large set) of each key, or of an even sample of
   * SAMPLE_MAX keys in a family that has more (the same keys each time while the family does not
   * change, so two readings differ only by what changed).
   */
  async families(keyPrefix: string): Promise<Map<string, FamilySize>> {
    const out = new Map<string, FamilySize>();
    for (const node of this.nodes) {
      const byFamily = new Map<string, string[]>();
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', `${keyPrefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`, 'COUNT', 2000);
        cursor = next;
        for (const k of found) {
          const f = familyOf(k.slice(keyPrefix.length));
          (byFamily.get(f) ?? byFamily.set(f, []).get(f)!).push(k);
        }
      } while (cursor !== '0');
      for (const [family, all] of byFamily) {
        all.sort();
        const step = Math.max(1, all.length / SAMPLE_MAX);
        const sample = Array.from({ length: Math.min(all.length, SAMPLE_MAX) }, (_, i) => all[Math.floor(i * step)]);
        let bytes = 0;
        for (let i = 0; i < sample.length; i += 500) {
          const p = node.pipeline();
          for (const k of sample.slice(i, i + 500)) p.memory('USAGE', k, 'SAMPLES', 0);
          for (const [err, v] of (await p.exec()) ?? []) if (!err) bytes += Number(v ?? 0);
        }
        const had = out.get(family) ?? { keys: 0, bytes: 0, sampled: 0 };
        out.set(family, { keys: had.keys + all.length, bytes: had.bytes + (bytes * all.length) / sample.length, sampled: had.sampled + sample.length });
      }
    }
    return out;
  }

  close(): void {
    for (const n of this.nodes) n.disconnect();
  }
}

/** Calls and µs of each command between two readings. */
export function commandDelta(a: Reading, b: Reading): Map<string, { calls: number; usec: number }> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const [name, v] of b.commands) {
    const before = a.commands.get(name) ?? { calls: 0, usec: 0 };
    if (v.calls !== before.calls) out.set(name, { calls: v.calls - before.calls, usec: v.usec - before.usec });
  }
  return out;
}

/** Each family's change between two family readings (families that did not change left out). */
export function familyDelta(a: Map<string, FamilySize>, b: Map<string, FamilySize>): Map<string, { keys: number; bytes: number }> {
  const out = new Map<string, { keys: number; bytes: number }>();
  for (const f of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(f) ?? { keys: 0, bytes: 0 };
    const y = b.get(f) ?? { keys: 0, bytes: 0 };
    if (y.keys !== x.keys || Math.abs(y.bytes - x.bytes) >= 1) out.set(f, { keys: y.keys - x.keys, bytes: y.bytes - x.bytes });
  }
  return out;
}
