// Builds the ioredis client for the configured topology (standalone URL, Sentinel or Cluster)
// and waits for it to be ready, so start-up fails clearly instead of queueing commands.
import { Redis, Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../../config/schema.js';

export type RedisClient = Redis | Cluster;

const hostPort = (s: string) => {
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
};

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
      redisOptions: { ...common, keyPrefix: undefined, password: cfg.password || undefined },
    });
  }
  if (cfg.sentinels.length > 0) {
    return new Redis({
      ...common,
      sentinels: cfg.sentinels.map(hostPort),
      name: cfg.sentinelName,
      password: cfg.password || undefined,
      sentinelPassword: cfg.password || undefined,
    });
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
