// The one place that builds things from configuration: store, logger, management services.
import path from 'node:path';
import type { Config } from './config/schema.js';
import type { Store } from './store/store.js';
import { SqliteStore } from './store/sqlite/sqlite-store.js';
import { RedisStore } from './store/redis/redis-store.js';
import { createRedisClient, connectRedis } from './store/redis/connect.js';
import { createLogger, type Logger } from './observability/logger.js';
import { AccountService } from './management/accounts.js';
import { TokenService } from './management/tokens.js';

export interface Services {
  config: Config;
  logger: Logger;
  store: Store;
  accounts: AccountService;
  tokens: TokenService;
  close(): Promise<void>;
}

export const usesRedis = (c: Config): boolean =>
  c.redis.url !== '' || c.redis.clusterNodes.length > 0 || c.redis.sentinels.length > 0;

export async function createStore(config: Config, logger: Logger): Promise<Store> {
  if (!usesRedis(config)) {
    const file = path.resolve(config.dataDir, config.store.sqliteFile);
    logger.info({ store: 'sqlite', file }, 'store selected');
    return new SqliteStore({ file, synchronous: config.store.sqliteSynchronous });
  }
  const client = createRedisClient(config.redis);
  let lastError = '';
  client.on('error', (e: Error) => {
    // ioredis repeats connection errors on every retry: log each distinct one once.
    if (e.message !== lastError) logger.warn({ err: e.message }, 'redis error');
    lastError = e.message;
  });
  client.on('ready', () => {
    lastError = '';
  });
  await connectRedis(client, config.redis.connectTimeoutMs);
  const topology = config.redis.clusterNodes.length > 0 ? 'cluster' : config.redis.sentinels.length > 0 ? 'sentinel' : 'standalone';
  logger.info({ store: 'redis', topology, keyPrefix: config.redis.keyPrefix }, 'store selected');
  return new RedisStore(client);
}

export async function createServices(
  config: Config,
  opts: { logger?: Logger; store?: Store; now?: () => number } = {},
): Promise<Services> {
  const logger = opts.logger ?? createLogger(config.log.level);
  const store = opts.store ?? (await createStore(config, logger));
  const now = opts.now ?? Date.now;
  return {
    config,
    logger,
    store,
    accounts: new AccountService(store, now),
    tokens: new TokenService(store, now),
    close: () => store.close(),
  };
}
