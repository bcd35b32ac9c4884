// The configuration schema: the single definition of every setting's type and range.
// config/default.yaml supplies the defaults; this file decides what is valid.
import { z } from 'zod';
import ipaddr from 'ipaddr.js';
import RE2 from 're2';
import { mediamtxPathProblem } from '../domain/paths.js';
import { srtTokenKeyProblem } from '../domain/srt-stream-id.js';
import { iceServerSchema, rtmpUrlTemplate } from '../director/settings.js';
import { clustersSchema } from '../director/clusters.js';
import { CALLER_NAMES } from '../callers/names.js';
import { parseSentinelUrl } from '../store/redis/sentinel-url.js';

const parsesAsSentinelUrl = (url: string): boolean => {
  try {
    parseSentinelUrl(url);
    return true;
  } catch {
    return false;
  }
};

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, 'expected host:port');
/**
 * One media-server instance Streamgate can act on: its API (or nginx-rtmp control module) base URL,
 * the credentials it expects, and which hook requests are its sessions.
 */
const mediaServerBase = {
  name: z.string().min(1).max(64).optional(),
  url: z.url({ protocol: /^https?$/ }),
  // Hook requests from these addresses are this server's; empty: every session of its caller (one server).
  from: z.array(z.lazy(() => addressOrCidr)).default([]),
};
const basicOrBearer = { username: z.string().optional(), password: z.string().optional(), bearer: z.string().optional() };
const mediaServer = z.discriminatedUnion('caller', [
  z.strictObject({ caller: z.literal('nginx-rtmp'), ...mediaServerBase }),
  z.strictObject({ caller: z.literal('mediamtx'), ...mediaServerBase, ...basicOrBearer }),
  // serverId: the SRS server_id its hooks carry (matches sessions when several SRS share one address).
  z.strictObject({ caller: z.literal('srs'), ...mediaServerBase, ...basicOrBearer, serverId: z.string().optional() }),
  z.strictObject({ caller: z.literal('ome'), ...mediaServerBase, accessToken: z.string().min(1), vhost: z.string().min(1).default('default') }),
]);
export type MediaServerConfig = z.infer<typeof mediaServer>;

/** A host a private JWKS URL may be at: an IP address, a CIDR block or a DNS name (matched on the URL's host). */
const jwksHost = z.string().refine((s) => {
  const e = s.trim();
  if (ipaddr.isValid(e) || ipaddr.isValidCIDR(e)) return true;
  return /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(e);
}, 'expected a host name, IP address or CIDR block');

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

/** Methods an auth_request pattern may name (OPTIONS never: a CORS preflight is answered without a decision). */
export const PATTERN_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * A stream pattern of hooks.authRequest.streamPatterns: a pattern string (the action of
 * hooks.authRequest.action, any method), or an object giving the pattern its own action, the
 * methods it is for, and whether the path is a session resource (a WHIP/WHEP session URL: checked
 * with the same credential, never starting a session or counting a use). docs/callers.md#whip-and-whep-behind-auth_request
 */
const streamPatternEntry = z.preprocess(
  (v) => (typeof v === 'string' ? { pattern: v } : v),
  z.strictObject({
    pattern: streamPattern,
    action: z.enum(['subscribe', 'publish']).optional(),
    methods: z.array(z.enum(PATTERN_METHODS)).min(1).optional(),
    resource: z.boolean().optional(),
  }).superRefine((p, ctx) => {
    if (p.resource !== true) return;
    // A session resource counts no use: its methods must be named (and OPTIONS then answered as a
    // preflight), and never POST, which is how a WHIP/WHEP session starts (a POST there would be an
    // admission nothing counts).
    if (p.methods === undefined) {
      ctx.addIssue({ code: 'custom', path: ['methods'], message: 'a session resource (resource: true) must name its methods, e.g. [PATCH, DELETE]' });
    } else if (p.methods.includes('POST')) {
      ctx.addIssue({ code: 'custom', path: ['methods'], message: 'a session resource (resource: true) cannot be for POST: a POST starts a WHIP/WHEP session and is decided with its uses counted; give the endpoint its own pattern' });
    }
  }),
);
export type StreamPatternEntry = z.infer<typeof streamPatternEntry>;

/**
 * Which token changes end a running media-server session (enforcement.terminateOn; src/sessions/termination.ts
 * maps a re-ask refusal to one). secretDeleted: the account's API secret deleted (every session of the account ends).
 */
export const TERMINATION_TRIGGERS = ['delete', 'disable', 'refresh', 'expire', 'secretDeleted'] as const;

export const MIN_SECRET_LENGTH = 32;

/** A shared secret that is either unset ("") or long enough not to be guessed (32+ characters). */
const optionalSecret = z
  .string()
  .refine((s) => s === '' || s.length >= MIN_SECRET_LENGTH, `must be empty (off) or at least ${MIN_SECRET_LENGTH} characters`)
  // An HTTP header value loses surrounding white space and cannot carry control characters: such a
  // secret could never be presented as configured (and 32 spaces are no secret).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this refuses
  .refine((s) => !/^\s|\s$|[\x00-\x1f\x7f]/.test(s), 'must not start or end with white space or hold control characters');

/** Whether a listen address accepts connections from this machine only. */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  try {
    return ipaddr.process(host.replace(/^\[|\]$/g, '')).range() === 'loopback';
  } catch {
    return false; // a host name other than localhost may resolve anywhere
  }
}

export const configSchema = z.strictObject({
  server: z.strictObject({
    port: z.number().int().min(0).max(65535),
    host: z.string().min(1),
    bodyLimitBytes: z.number().int().min(1024).max(16 * 1024 * 1024),
    trustProxy: z.boolean(),
    shutdownDelayMs: z.number().int().min(0).max(600000),
    shutdownGraceMs: z.number().int().min(0),
    tls: z.strictObject({ certFile: z.string(), keyFile: z.string() }),
  }),
  dataDir: z.string().min(1),
  adminKey: optionalSecret,
  api: z.strictObject({
    unknownFields: z.enum(['ignore', 'reject']),
  }),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  store: z.strictObject({
    sqliteFile: z.string().min(1),
    sqliteSynchronous: z.enum(['FULL', 'NORMAL']),
  }),
  redis: z.strictObject({
    url: z
      .string()
      .refine((s) => s === '' || /^(rediss?|redis-sentinel):\/\//.test(s), 'expected a redis://, rediss:// or redis-sentinel:// URL')
      .refine((s) => !s.startsWith('redis-sentinel://') || parsesAsSentinelUrl(s), 'expected redis-sentinel://[:password@]host:port,host:port/mastername[/db]'),
    clusterNodes: z.array(hostPort),
    sentinels: z.array(hostPort),
    sentinelName: z.string(),
    password: z.string(),
    keyPrefix: z.string().max(64),
    commandTimeoutMs: z.number().int().min(1),
    connectTimeoutMs: z.number().int().min(1),
    waitReplicas: z.number().int().min(0).max(16),
    waitTimeoutMs: z.number().int().min(1),
    versionLagMs: z.number().int().min(0).max(60_000),
  }),
  enforcement: z.strictObject({
    defaultAccountId: z.string(),
    rtmpIpFilters: z.enum(['enforce', 'ignore']),
    onStoreError: z.enum(['deny', 'allow-cached']),
    storeTimeoutMs: z.number().int().min(1),
    liveTtlSeconds: z.number().int().min(1),
    terminateOn: z.array(z.enum(TERMINATION_TRIGGERS)),
    terminatedHoldSeconds: z.number().int().min(0).max(86400),
    publishConflict: z.enum(['allow', 'reject', 'replace']),
    cacheMaxEntries: z.number().int().min(1),
    cacheTtlMs: z.number().int().min(0),
  }),
  limits: z.strictObject({
    tokensPerAccount: z.number().int().min(1),
    regexStreamsPerAccount: z.number().int().min(0),
    patternWorkers: z.number().int().min(1).max(16),
    patternQueue: z.number().int().min(1),
  }),
  hooks: z.strictObject({
    secret: optionalSecret,
    allowUnauthenticated: z.boolean(),
    trustedProxies: z.array(addressOrCidr),
    realIpHeader: z
      .string()
      .regex(/^$|^[A-Za-z0-9-]+$/, 'expected a header name (e.g. X-Real-IP) or empty')
      // Read as one address, a list a client can add entries to is unreadable and the client passes as the proxy.
      .refine(
        (h) => !['x-forwarded-for', 'forwarded'].includes(h.toLowerCase()),
        'X-Forwarded-For and Forwarded are lists, already read by the right-most rule; name a single-address header such as X-Real-IP, or leave it empty',
      ),
    omeSecret: z.string(),
    accountInPath: z.boolean(),
    mediamtx: z.strictObject({ allowApiFrom: z.array(addressOrCidr), pathPrefix: z.string().max(128) }),
    authRequest: z.strictObject({
      streamPatterns: z.array(streamPatternEntry),
      action: z.enum(['subscribe', 'publish']),
      // Where the original request's method is read (docs/callers.md#whip-and-whep-behind-auth_request):
      // none (unknown: patterns cannot name methods), a header the proxy sets, or the check request's own (Envoy).
      methodFrom: z.enum(['none', 'x-original-method', 'x-forwarded-method', 'request']),
    }),
    // SRT stream ids in the standard syntax (docs/callers.md#srt-stream-ids): the custom key carrying the credential.
    srt: z.strictObject({
      tokenKey: z.string().superRefine((k, ctx) => {
        const problem = srtTokenKeyProblem(k);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      }),
    }),
    thumbnailMaxBytes: z.number().int().min(1024).max(16 * 1024 * 1024),
    // Per caller (the names of src/callers/registry.ts): socket addresses whose hook requests need no secret.
    allowFrom: z.record(z.string(), z.array(addressOrCidr)),
  }),
  lifecycle: z.strictObject({ queueSize: z.number().int().min(1) }),
  sessions: z.strictObject({
    // The media-server instances Streamgate can cut sessions on (docs/callers.md#cutting-sessions).
    servers: z.array(mediaServer),
    driverTimeoutMs: z.number().int().min(1).max(60000),
    driverRetries: z.number().int().min(0).max(10),
    // HTTP viewer sessions (docs/callers.md#http-viewer-sessions).
    http: z.strictObject({
      enabled: z.boolean(),
      secret: optionalSecret,
      credentialSeconds: z.number().int().min(2).max(86400),
      revalidateSeconds: z.number().int().min(1).max(3600),
      idleSeconds: z.number().int().min(2).max(86400),
      bindAddress: z.enum(['always', 'limited', 'never']),
      cookieName: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and - only (1 to 64)'),
      cookiePath: z.string().regex(/^\/[\x21-\x3a\x3c-\x7e]*$/, 'a path starting with / (no ; or white space)'),
      cookieSecure: z.boolean(),
      cookieSameSite: z.enum(['Lax', 'Strict', 'None']),
      queryParam: z.string().regex(/^$|^[A-Za-z0-9_-]{1,64}$/, 'empty (off), or letters, digits, _ and - only'),
      renditionSeparators: z.array(z.string().min(1).max(4).regex(/^[^/]+$/, 'must not hold /')).max(8),
      // What a rendition's suffix must be (RE2, whole suffix) for a credential to open it.
      renditionPattern: z.string().min(1).max(256).superRefine((s, ctx) => {
        try {
          void new RE2(s, 'u');
        } catch (e) {
          ctx.addIssue({ code: 'custom', message: `not an RE2 pattern: ${(e as Error).message}` });
        }
      }),
      // The longest life a credential check accepts; 0: credentialSeconds plus 30 s of clock slack.
      maxCredentialSeconds: z.number().int().min(0).max(86400),
    }),
  }),
  director: z.strictObject({
    publishUrls: z.array(z.string().min(1)),
    subscribeUrls: z.array(z.string().min(1)),
    // RTMP ingest URLs answered for streamType Rtmp; empty = Rtmp is a 400 naming streamType.
    rtmpPublishUrls: z.array(rtmpUrlTemplate),
    // Named sets of the three URL lists (docs/api.md#clusters); empty = one implicit cluster `auto` of the lists above.
    clusters: clustersSchema,
    // Any key casing in, RTCPeerConnection's members out; a URL a browser would refuse stops start-up.
    iceServers: z.array(iceServerSchema),
    serverId: z.string().min(1).max(128),
    jwtTtlSeconds: z.number().int().min(1).max(86400),
    // A director call admits a session (MediaMTX authMethod: jwt, where no callback comes): limits count it.
    admits: z.boolean(),
    // Starts every MediaMTX permission path the director signs: it must keep that path exact.
    mediamtxPathPrefix: z
      .string()
      .max(128)
      .refine((p) => p === '' || mediamtxPathProblem(`${p}x`) === null, "letters, digits and _ . - / only, not starting with '/' or '~', no '.', '..' or empty segment (e.g. live/)"),
  }),
  geo: z.strictObject({ databasePath: z.string(), trustedHeader: z.string() }),
  webhooks: z.strictObject({
    allowPrivateTargets: z.boolean(),
    caFile: z.string(),
    timeoutMs: z.number().int().min(1),
    retries: z.number().int().min(0).max(10),
    queueSize: z.number().int().min(1),
    concurrency: z.number().int().min(1),
    accountQueueSize: z.number().int().min(1),
    accountConcurrency: z.number().int().min(1),
    // Deliveries look an event's webhooks up 100 at a time, so more could never all be served.
    maxPerAccount: z.number().int().min(1).max(100),
    headerNames: z.array(z.enum(['service', 'millicast'])).min(1, 'name at least one of service, millicast'),
    testSendsPerMinute: z.number().int().min(1),
    disableAfterFailures: z.number().int().min(0),
    // Recording events: Streamgate's `recording` shape, or the hosted recording hooks' `recordings` (docs/api.md#recording-events).
    recordingShape: z.enum(['streamgate', 'hosted-legacy']),
  }),
  // Credential issuers' keys (docs/api.md#credential-issuers): JWKS URLs are fetched through the webhooks' SSRF guard.
  issuers: z.strictObject({
    // Host names, addresses and CIDR blocks a JWKS URL may be at although private or loopback.
    allowPrivateJwksHosts: z.array(jwksHost),
    jwksCaFile: z.string(),
    jwksTimeoutMs: z.number().int().min(100).max(60000),
    jwksMaxBytes: z.number().int().min(1024).max(1048576),
    jwksMaxKeys: z.number().int().min(1).max(100),
    jwksMinCacheSeconds: z.number().int().min(1),
    jwksMaxCacheSeconds: z.number().int().min(1),
    jwksRefetchCooldownSeconds: z.number().int().min(1),
    memoEntries: z.number().int().min(1),
    maxPerAccount: z.number().int().min(1).max(1000),
    // Keys a signed-URL issuer reads from outside the store (docs/api.md#keys-from-files-and-the-environment).
    keyDir: z.string(),
    keyEnvPrefix: z
      .string()
      .regex(/^([A-Za-z0-9_]*_)?$/, 'letters, digits and _, ending in _ (or empty)')
      .refine((v) => !v.toUpperCase().startsWith('STREAMGATE_'), 'must not start with STREAMGATE_ (those variables are settings, and an unknown one stops start-up)'),
    keyReloadSeconds: z.number().int().min(1).max(86400),
  }),
  analytics: z.strictObject({
    mediamtx: z.strictObject({ apiUrl: z.string(), intervalMs: z.number().int().min(100) }),
    /** Hourly usage kept: the current UTC day and this many days before it (docs/operations.md#hourly-usage-retention). */
    hourlyRetentionDays: z.number().int().min(1).max(366),
  }),
  dashboard: z.strictObject({ enabled: z.boolean() }),
  /** The audit log of management changes (docs/api.md#audit-log, docs/operations.md#audit-log). */
  audit: z.strictObject({
    enabled: z.boolean(),
    /** The chain's HMAC key (32+ characters); never stored in the store. */
    key: optionalSecret,
    /** A file whose first line is the key, instead of `key`. */
    keyFile: z.string(),
    /** Entries older than this many days are removed (an anchor keeps the rest verifiable); 0: kept. */
    retentionDays: z.number().int().min(0).max(36500),
    /** An account's chain outlives the account by this many days (counted from its newest entry); 0: goes with it. */
    keepAfterAccountDeleteDays: z.number().int().min(0).max(36500),
    /** Each account's head whose chain moved is logged this often. */
    headLogSeconds: z.number().int().min(1).max(86400),
  }),
  /** Token-sharing detection (docs/api.md#token-sharing): each account turns it on with its policy; this is the deployment's switch. */
  sharing: z.strictObject({
    enabled: z.boolean(),
    flushMs: z.number().int().min(10).max(60_000),
    queueSize: z.number().int().min(10).max(1_000_000),
  }),
  /** Decision history (docs/api.md#decision-history): what is kept, for how long, and how it is written. */
  history: z.strictObject({
    enabled: z.boolean(),
    maxPerAccount: z.number().int().min(100).max(10_000_000),
    maxAgeSeconds: z.number().int().min(60).max(366 * 86400),
    refusalsPerSecond: z.number().min(0).max(100_000),
    allowSampleRate: z.number().min(0).max(1),
    allowsPerSecond: z.number().min(0).max(100_000),
    addressSeconds: z.number().int().min(0).max(366 * 86400),
    ipv4Prefix: z.number().int().min(0).max(32),
    ipv6Prefix: z.number().int().min(0).max(128),
    sqliteFile: z.string(),
    queueMax: z.number().int().min(10).max(1_000_000),
    batchSize: z.number().int().min(1).max(10_000),
    flushMs: z.number().int().min(10).max(60_000),
  }),
}).superRefine((c, ctx) => {
  if ((c.server.tls.certFile === '') !== (c.server.tls.keyFile === '')) {
    const missing = c.server.tls.certFile === '' ? 'certFile' : 'keyFile';
    const given = missing === 'certFile' ? 'keyFile' : 'certFile';
    ctx.addIssue({ code: 'custom', path: ['server', 'tls', missing], message: `required when server.tls.${given} is set (both, or neither for plain HTTP)` });
  }
  if (c.redis.sentinels.length > 0 && c.redis.sentinelName === '') {
    ctx.addIssue({ code: 'custom', path: ['redis', 'sentinelName'], message: 'required when redis.sentinels is set' });
  }
  if (c.redis.waitReplicas > 0 && c.redis.waitTimeoutMs >= c.redis.commandTimeoutMs) {
    ctx.addIssue({ code: 'custom', path: ['redis', 'waitTimeoutMs'], message: 'must be below redis.commandTimeoutMs (WAIT is a command)' });
  }
  if (c.hooks.secret === '' && !c.hooks.allowUnauthenticated && !isLoopbackHost(c.server.host)) {
    ctx.addIssue({
      code: 'custom',
      path: ['hooks', 'secret'],
      message: `required when listening on ${c.server.host} (reachable from other machines): set STREAMGATE_HOOK_SECRET (32+ characters), listen on 127.0.0.1, or set hooks.allowUnauthenticated: true to leave /hooks/* open`,
    });
  }
  if (c.hooks.accountInPath) {
    // A pattern without an account would decide every tenant's path on the default account.
    c.hooks.authRequest.streamPatterns.forEach((p, i) => {
      if (!/\(\?P?<account>/.test(p.pattern)) {
        ctx.addIssue({
          code: 'custom',
          path: ['hooks', 'authRequest', 'streamPatterns', i],
          message: 'needs a named group account with hooks.accountInPath: true (e.g. ^/hls/(?<account>[^/]+)/(?<stream>[^/]+)/), or leave streamPatterns empty for the built-in ones',
        });
      }
    });
  }
  if (c.hooks.authRequest.methodFrom === 'none') {
    // A method read from nowhere the operator named could be the client's own header: never believed.
    c.hooks.authRequest.streamPatterns.forEach((p, i) => {
      if (p.methods !== undefined || p.resource === true) {
        ctx.addIssue({
          code: 'custom',
          path: ['hooks', 'authRequest', 'streamPatterns', i],
          message: 'names methods or a session resource, so hooks.authRequest.methodFrom must say where the method is read: x-original-method (nginx: proxy_set_header X-Original-Method $request_method), x-forwarded-method (Traefik) or request (Envoy)',
        });
      }
    });
  }
  const allowFrom = Object.entries(c.hooks.allowFrom).filter(([, list]) => list.length > 0);
  for (const [name] of Object.entries(c.hooks.allowFrom)) {
    if (!(CALLER_NAMES as readonly string[]).includes(name)) {
      ctx.addIssue({ code: 'custom', path: ['hooks', 'allowFrom', name], message: `not a caller: expected one of ${CALLER_NAMES.join(', ')}` });
    }
  }
  if (allowFrom.length > 0 && c.hooks.secret === '') {
    ctx.addIssue({ code: 'custom', path: ['hooks', 'allowFrom'], message: 'needs hooks.secret: without one every hook request is accepted from anywhere, and the list would narrow nothing' });
  }
  const http = c.sessions.http;
  if (http.maxCredentialSeconds > 0 && http.maxCredentialSeconds < http.credentialSeconds) {
    ctx.addIssue({ code: 'custom', path: ['sessions', 'http', 'maxCredentialSeconds'], message: `must be 0 or at least sessions.http.credentialSeconds (${http.credentialSeconds})` });
  }
  if (c.sessions.http.cookieSameSite === 'None' && !c.sessions.http.cookieSecure) {
    ctx.addIssue({ code: 'custom', path: ['sessions', 'http', 'cookieSameSite'], message: 'None needs sessions.http.cookieSecure: true (browsers drop such a cookie otherwise)' });
  }
  if (c.issuers.jwksMinCacheSeconds > c.issuers.jwksMaxCacheSeconds) {
    ctx.addIssue({ code: 'custom', path: ['issuers', 'jwksMinCacheSeconds'], message: `must be at most issuers.jwksMaxCacheSeconds (${c.issuers.jwksMaxCacheSeconds})` });
  }
  if (c.audit.key !== '' && c.audit.keyFile !== '') {
    ctx.addIssue({ code: 'custom', path: ['audit', 'keyFile'], message: 'give audit.key or audit.keyFile, not both' });
  }
  const chosen = [c.redis.url !== '', c.redis.clusterNodes.length > 0, c.redis.sentinels.length > 0].filter(Boolean);
  if (chosen.length > 1) {
    ctx.addIssue({ code: 'custom', path: ['redis'], message: 'choose one of redis.url, redis.clusterNodes, redis.sentinels' });
  }
});

export type Config = z.infer<typeof configSchema>;
