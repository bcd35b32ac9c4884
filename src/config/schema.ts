// The configuration schema: the single definition of every setting's type and range.
// config/default.yaml supplies the defaults; this file decides what is valid.
import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import RE2 from 're2';

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port');
const addressOrCidr = z.string().refine((s) => {
  try {
    if (s.includes('/')) ipaddr.parseCIDR(s);
    else ipaddr.parse(s);
    return true;
  } catch {
    return false;
  }
}, 'expected an IP address or CIDR block');

/** An RE2 pattern with a named group `stream` (and optionally `account`). */
const streamPattern = z.string().superRefine((s, ctx) => {
  try {
    const re = new RE2(s, 'u');
    if (!/\(\?P?<stream>/.test(s)) ctx.addIssue({ code: 'custom', message: 'needs a named group (?<stream>...)' });
    void re;
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `not an RE2 pattern: ${(e as Error).message}` });
  }
});

export const configSchema = z.strictObject({
  server: z.strictObject({
    port: z.number().int().min(0).max(65535),
    host: z.string().min(1),
    bodyLimitBytes: z.number().int().min(1024).max(16 * 1024 * 1024),
    trustProxy: z.boolean(),
    shutdownDelayMs: z.number().int().min(0).max(600000),
    shutdownGraceMs: z.number().int().min(0),
  }),
  dataDir: z.string().min(1),
  adminKey: z.string(),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  store: z.strictObject({
    sqliteFile: z.string().min(1),
    sqliteSynchronous: z.enum(['FULL', 'NORMAL']),
  }),
  redis: z.strictObject({
    url: z.string().refine((s) => s === '' || /^(rediss?|redis-sentinel):\/\//.test(s), 'expected a redis://, rediss:// or redis-sentinel:// URL'),
    clusterNodes: z.array(hostPort),
    sentinels: z.array(hostPort),
    sentinelName: z.string(),
    password: z.string(),
    keyPrefix: z.string().max(64),
    commandTimeoutMs: z.number().int().min(1),
    connectTimeoutMs: z.number().int().min(1),
    waitReplicas: z.number().int().min(0).max(16),
    waitTimeoutMs: z.number().int().min(1),
  }),
  enforcement: z.strictObject({
    defaultAccountId: z.string(),
    rtmpIpFilters: z.enum(['enforce', 'ignore']),
    onStoreError: z.enum(['deny', 'allow-cached']),
    storeTimeoutMs: z.number().int().min(1),
    liveTtlSeconds: z.number().int().min(1),
    cacheMaxEntries: z.number().int().min(1),
    cacheTtlMs: z.number().int().min(0),
  }),
  hooks: z.strictObject({
    secret: z.string(),
    trustedProxies: z.array(addressOrCidr),
    omeSecret: z.string(),
    accountInPath: z.boolean(),
    mediamtx: z.strictObject({ allowApiFrom: z.array(addressOrCidr), pathPrefix: z.string().max(128) }),
    authRequest: z.strictObject({
      streamPatterns: z.array(streamPattern).min(1),
      action: z.enum(['subscribe', 'publish']),
    }),
    thumbnailMaxBytes: z.number().int().min(1024).max(16 * 1024 * 1024),
  }),
  lifecycle: z.strictObject({ queueSize: z.number().int().min(1) }),
  director: z.strictObject({
    publishUrls: z.array(z.string().min(1)),
    subscribeUrls: z.array(z.string().min(1)),
    iceServers: z.array(
      z.strictObject({
        urls: z.union([z.string(), z.array(z.string())]),
        username: z.string().optional(),
        credential: z.string().optional(),
      }),
    ),
    jwtTtlSeconds: z.number().int().min(1).max(86400),
    mediamtxPathPrefix: z.string().max(128),
  }),
  geo: z.strictObject({ databasePath: z.string(), trustedHeader: z.string() }),
  webhooks: z.strictObject({
    allowPrivateTargets: z.boolean(),
    caFile: z.string(),
    timeoutMs: z.number().int().min(1),
    retries: z.number().int().min(0).max(10),
    queueSize: z.number().int().min(1),
    concurrency: z.number().int().min(1),
  }),
  analytics: z.strictObject({
    mediamtx: z.strictObject({ apiUrl: z.string(), intervalMs: z.number().int().min(100) }),
  }),
  dashboard: z.strictObject({ enabled: z.boolean() }),
}).superRefine((c, ctx) => {
  if (c.redis.sentinels.length > 0 && c.redis.sentinelName === '') {
    ctx.addIssue({ code: 'custom', path: ['redis', 'sentinelName'], message: 'required when redis.sentinels is set' });
  }
  if (c.redis.waitReplicas > 0 && c.redis.waitTimeoutMs >= c.redis.commandTimeoutMs) {
    ctx.addIssue({ code: 'custom', path: ['redis', 'waitTimeoutMs'], message: 'must be below redis.commandTimeoutMs (WAIT is a command)' });
  }
  const chosen = [c.redis.url !== '', c.redis.clusterNodes.length > 0, c.redis.sentinels.length > 0].filter(Boolean);
  if (chosen.length > 1) {
    ctx.addIssue({ code: 'custom', path: ['redis'], message: 'choose one of redis.url, redis.clusterNodes, redis.sentinels' });
  }
});

export type Config = z.infer<typeof configSchema>;
