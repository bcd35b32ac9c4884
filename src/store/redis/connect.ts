// Builds the ioredis client for the configured topology (standalone URL, Sentinel or Cluster)
// and waits for it to be ready, so start-up fails clearly instead of queueing commands.
import { Redis, Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../../config/schema.js';
import { copyWith } from '../../domain/objects.js';
import { hostPort, parseSentinelUrl } from './sentinel-url.js';

export { parseSentinelUrl };

export type RedisClient = Redis | Cluster;

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

/**
 * Start-up could not reach Redis, or Redis refused it: the message names the cause in words, the
 * address (any password masked) and the setting that changes it. Not a configuration error: the
 * same settings may work once Redis is up (exit code 1; docs/operations.md#start-up-errors-and-exit-codes).
 */
export class RedisStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RedisStartError';
  }
}

/**
 * A Redis URL as it may be shown: everything before the last `@` after the scheme (the user-info,
 * whatever characters the password holds) becomes `user:***`, or `***` without a colon.
 */
export function maskRedisUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0];
  const at = url.lastIndexOf('@');
  if (!scheme || at < scheme.length) return url;
  const auth = url.slice(scheme.length, at);
  const colon = auth.indexOf(':');
  return `${scheme}${colon >= 0 ? `${auth.slice(0, colon)}:***` : '***'}@${url.slice(at + 1)}`;
}

/** What start-up connects to, in words, and the settings that change its address and its password. */
interface Target {
  what: string;
  /** The setting of its address. */
  address: string;
  /** How to give a password, and where to check a wrong one. */
  setPassword: string;
  checkPassword: string;
  sentinels?: string;
  name?: string;
}

function target(cfg: Config['redis']): Target {
  const passwordSetting = { setPassword: 'set it with redis.password / STREAMGATE_REDIS_PASSWORD', checkPassword: 'check redis.password / STREAMGATE_REDIS_PASSWORD' };
  if (cfg.clusterNodes.length > 0) {
    return {
      what: `Redis Cluster at ${cfg.clusterNodes.join(', ')}`,
      address: 'redis.clusterNodes / STREAMGATE_REDIS_CLUSTERNODES',
      ...passwordSetting,
    };
  }
  if (cfg.sentinels.length > 0) {
    return {
      what: `Redis primary '${cfg.sentinelName}' of the Sentinels at ${cfg.sentinels.join(', ')}`,
      address: 'redis.sentinels / STREAMGATE_REDIS_SENTINELS',
      ...passwordSetting,
      sentinels: `the Redis Sentinels at ${cfg.sentinels.join(', ')}`,
      name: `'${cfg.sentinelName}' (redis.sentinelName / STREAMGATE_REDIS_SENTINELNAME)`,
    };
  }
  const shown = maskRedisUrl(cfg.url);
  if (cfg.url.startsWith('redis-sentinel://')) {
    const sen = parseSentinelUrl(cfg.url);
    return {
      what: `Redis primary '${sen.name}' of the Sentinels at ${shown}`,
      address: 'redis.url / REDIS_URL',
      setPassword: 'set it in the URL, redis-sentinel://:PASSWORD@host:port,.../name (redis.url / REDIS_URL)',
      checkPassword: "check the URL's password (redis.url / REDIS_URL)",
      sentinels: `the Redis Sentinels at ${shown}`,
      name: `'${sen.name}' (redis.url / REDIS_URL)`,
    };
  }
  return {
    what: `Redis at ${shown}`,
    address: 'redis.url / REDIS_URL',
    setPassword: 'set it in the URL, redis://:PASSWORD@host:port (redis.url / REDIS_URL)',
    checkPassword: "check the URL's user and password (redis.url / REDIS_URL)",
  };
}

type Seen = Error & { code?: string; errors?: Array<{ code?: string }>; lastNodeError?: Error };

const codeOf = (e: Seen): string | undefined => e.code ?? e.errors?.find((x) => x.code)?.code;

/**
 * Why connecting failed, from what the client reported on the way (its 'error' and 'node error'
 * events, the most telling first) and what connect() threw.
 */
export function explainRedisFailure(cfg: Config['redis'], seen: Seen[], thrown: Seen): string {
  const t = target(cfg);
  const all = [...seen, thrown].flatMap((e) => (e.lastNodeError ? [e, e.lastNodeError as Seen] : [e]));
  // Sentinel reports the last answer of a Sentinel inside its own message.
  const messages = all.map((e) => /Last error: (.*)$/.exec(e.message)?.[1] ?? e.message);
  const said = (re: RegExp) => messages.some((m) => re.test(m));
  if (said(/^NOAUTH\b/)) return `${t.what} requires a password (NOAUTH) and none is configured; ${t.setPassword}`;
  if (said(/^WRONGPASS\b|^ERR invalid password\b/)) {
    return `${t.what} refused the credentials (WRONGPASS): the password (or user) is wrong; ${t.checkPassword}`;
  }
  if (said(/^NOPERM\b/)) {
    const m = messages.find((x) => /^NOPERM\b/.test(x))!;
    return `${t.what} refused a command Streamgate needs, as the configured user may not run it (${m}); grant it in Redis's ACL or use another user (${t.address})`;
  }
  if (t.sentinels && said(/No such master with that name/)) return `${t.sentinels} know no primary named ${t.name}`;
  const errno = all.map(codeOf).find((c) => c !== undefined);
  if (errno === 'ECONNREFUSED') {
    return `${t.what} refused the connection (ECONNREFUSED); is it running? (${t.address})`;
  }
  if (errno === 'ENOTFOUND' || errno === 'EAI_AGAIN') {
    return `${t.what}: no such host (${errno}); check the address (${t.address})`;
  }
  if (errno === 'ETIMEDOUT' || /not ready after/.test(thrown.message)) {
    const who = t.sentinels ?? t.what;
    return `${who} did not answer within ${cfg.connectTimeoutMs} ms (redis.connectTimeoutMs); ${t.sentinels ? 'are they' : 'is it'} running and reachable? (${t.address})`;
  }
  if (cfg.clusterNodes.length > 0 && /None of startup nodes/.test(thrown.message)) {
    return `${t.what}: no node answered; are they running? (${t.address})`;
  }
  const last = all.filter((e) => !/^Connection is closed\.?$/.test(e.message)).at(-1) ?? thrown;
  const code = codeOf(last);
  return `${t.what}: ${last.message}${code && !last.message.includes(code) ? ` (${code})` : ''} (${t.address})`;
}

/**
 * Connects and waits until the client is ready, at most redis.connectTimeoutMs. A failure throws
 * RedisStartError saying why (explainRedisFailure), never with a password.
 */
export async function connectRedis(client: RedisClient, cfg: Config['redis']): Promise<void> {
  const seen: Seen[] = [];
  const onError = (e: Seen) => {
    if (seen.length < 50) seen.push(e);
  };
  client.on('error', onError);
  client.on('node error', onError);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis not ready after ${cfg.connectTimeoutMs} ms`)), cfg.connectTimeoutMs);
  });
  try {
    await Promise.race([client.connect(), deadline]);
  } catch (e) {
    client.disconnect();
    throw new RedisStartError(explainRedisFailure(cfg, seen, e as Seen), { cause: e });
  } finally {
    clearTimeout(timer);
    client.off('error', onError);
    client.off('node error', onError);
  }
}
