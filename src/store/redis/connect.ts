// Builds the ioredis client for the configured topology (standalone URL, Sentinel or Cluster)
// and waits for it to be ready, so start-up fails clearly instead of queueing commands.
import { Redis, Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../../config/schema.js';
import { copyWith } from '../../domain/objects.js';

export type RedisClient = Redis | Cluster;

const hostPort = (s: string) => {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
};

/**
 * redis-sentinel://[:password@]host:port,host:port/mastername[/db] → Sentinel settings, so one URL
 * can select Sentinel as REDIS_URL does for standalone.
 */
export function parseSentinelUrl(url: string): { sentinels: Array<{ host: string; port: number }>; name: string; password?: string; db?: number } {
  const m = /^redis-sentinel:\/\/(?:(?:[^:@/]*):([^@/]*)@)?([^/]+)\/([^/]+)(?:\/(\d+))?\/?$/.exec(url);
  if (!m) throw new Error('redis-sentinel URL must be redis-sentinel://[:password@]host:port,host:port/mastername[/db]');
  return {
    sentinels: m[2].split(',').map(hostPort),
    name: decodeURIComponent(m[3]),
    password: m[1] ? decodeURIComponent(m[1]) : undefined,
    db: m[4] !== undefined ? Number(m[4]) : undefined,
  };
}

export function createRedisClient(cfg: Config['redis']): RedisClient {
  const common: RedisOptions = {
    keyPrefix: cfg.keyPrefix,
    commandTimeout: cfg.commandTimeoutMs,
    connectTimeout: cfg.connectTimeoutMs,
    // No unbounded queue: while disconnected, commands fail at once (the caller decides).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  };
  if (cfg.clusterNodes.length > 0) {
    return new Cluster(cfg.clusterNodes.map(hostPort), {
      keyPrefix: cfg.keyPrefix,
      enableOfflineQueue: false,
      lazyConnect: true,
      redisOptions: copyWith(common, { keyPrefix: undefined, password: cfg.password || undefined }),
    });
  }
  if (cfg.sentinels.length > 0) {
    return new Redis(copyWith(common, {
      sentinels: cfg.sentinels.map(hostPort),
      name: cfg.sentinelName,
      password: cfg.password || undefined,
      sentinelPassword: cfg.password || undefined,
    }));
  }
  if (cfg.url.startsWith('redis-sentinel://')) {
    const sen = parseSentinelUrl(cfg.url);
    return new Redis(copyWith(common, { sentinels: sen.sentinels, name: sen.name, password: sen.password, sentinelPassword: sen.password, db: sen.db }));
  }
  return new Redis(cfg.url, common);
}

export async function connectRedis(client: RedisClient, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis not ready after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), deadline]);
  } catch (e) {
    client.disconnect();
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
