// The connection every aggregate of the Redis store shares (redis-store.ts composes them): the
// client with the scripts defined on it, the clock, the replicas a management write waits for, the
// account versions' watch and the version reads in flight.
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connect.js';
import { StoreUnavailable } from '../../errors.js';
import { loadScript } from './lua-loader.js';
import { SCRIPTS, type ScriptName, type ScriptSpec } from './scripts.js';
import { VersionWatch } from './version-watch.js';

/** Attempts of one compare-and-set write before it gives up with StoreConflict. */
export const MAX_CAS_ATTEMPTS = 100;

export interface RedisStoreOptions {
  now?: () => number;
  /** Management writes wait for this many replicas (WAIT) before they are acknowledged. */
  waitReplicas?: number;
  waitTimeoutMs?: number;
  /**
   * Above 0: hold account versions in memory while a subscription proves them current
   * (version-watch.ts), so a version moved elsewhere is seen within this many ms at most
   * (redis.versionLagMs). Not on a Cluster, whose published messages cross the cluster bus out of
   * step with the subscriber's pings: there every decision reads the version.
   */
  versionLagMs?: number;
}

export class RedisConnection {
  readonly now: () => number;
  private closed = false;
  /** Account-version reads in flight, by account (shared by concurrent decisions). */
  readonly versionReads = new Map<string, Promise<number>>();
  private readonly waitReplicas: number;
  private readonly waitTimeoutMs: number;
  readonly watch: VersionWatch | undefined;

  constructor(
    readonly redis: RedisClient,
    opts: RedisStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.waitReplicas = opts.waitReplicas ?? 0;
    this.waitTimeoutMs = opts.waitTimeoutMs ?? 1000;
    const lag = opts.versionLagMs ?? 0;
    this.watch = lag > 0 && !(redis instanceof Cluster) ? new VersionWatch(redis.duplicate(), { keyPrefix: redis.options.keyPrefix ?? '', maxLagMs: lag }) : undefined;
    for (const [name, s] of Object.entries(SCRIPTS) as Array<[ScriptName, ScriptSpec]>) {
      redis.defineCommand(name, { numberOfKeys: s.varying ? undefined : s.keys, lua: loadScript(s.file) });
    }
  }

  /**
   * With waitReplicas, a management write is acknowledged only when that many replicas have it, so
   * a Sentinel failover cannot lose it. WAIT covers every earlier write of this connection.
   */
  async replicated(): Promise<void> {
    if (this.waitReplicas === 0 || this.redis instanceof Cluster) return;
    const n = await (this.redis as Redis).wait(this.waitReplicas, this.waitTimeoutMs);
    if (n < this.waitReplicas) {
      const message = `Write not confirmed by ${this.waitReplicas} replica(s) within ${this.waitTimeoutMs} ms; retry`;
      throw new StoreUnavailable(new Error(message), message);
    }
  }

  run(name: ScriptName, ...args: Array<string | number | Buffer>): Promise<unknown> {
    return (this.redis as unknown as Record<string, (...a: Array<string | number | Buffer>) => Promise<unknown>>)[name](...args);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watch?.close();
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
