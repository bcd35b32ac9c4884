// The one place that builds things from configuration: store, logger, management services.
import path from 'node:path';
import type { Config } from './config/schema.js';
import type { Store } from './store/store.js';
import { SqliteStore } from './store/sqlite/sqlite-store.js';
import { RedisStore } from './store/redis/redis-store.js';
import { createRedisClient, connectRedis } from './store/redis/connect.js';
import { createLogger, logSinkOf, type Logger } from './observability/logger.js';
import { AccountService, DEFAULT_ACCOUNT_META } from './management/accounts.js';
import { TokenService, type TokenChanged } from './management/tokens.js';
import { Metrics } from './observability/metrics.js';
import { Enforcer } from './admission/pipeline.js';
import { openGeo, type GeoLookup } from './enforce/geo.js';
import { KeyRing } from './director/keys.js';
import { Clusters } from './director/clusters.js';
import { Lifecycle } from './lifecycle/lifecycle.js';
import { tokenHash } from './domain/tokens.js';
import { WebhookClient } from './webhooks/client.js';
import { WebhookDispatcher, type Poster } from './webhooks/dispatcher.js';
import { WebhookService } from './management/webhooks.js';
import { IssuerService, issuerLimits } from './management/issuers.js';
import { UsageService } from './analytics/usage.js';
import { MediamtxPoller } from './analytics/mediamtx-poller.js';
import { PatternChecks } from './patterns/pattern-checks.js';
import { readFileSync } from 'node:fs';
import { SessionControl } from './sessions/control.js';
import { ViewerSessions } from './sessions/viewer-sessions.js';
import { CredentialKeys } from './sessions/credential-keys.js';
import { Cutter } from './sessions/drivers/cutter.js';
import { IssuerKeys } from './enforce/issuer-keys.js';
import { KeySources } from './enforce/key-sources.js';
import type { IssuerRecord } from './domain/issuers.js';
import { copyWith } from './domain/objects.js';
import { SignedMemo } from './policy/signed.js';
import { IssuerJwtMemo } from './policy/issuer-jwt.js';
import { openHistory } from './history/open.js';
import type { DecisionHistory } from './history/recorder.js';
import { AuditLog } from './audit/log.js';
import { auditKey } from './audit/key.js';
import { SYSTEM_ACTOR } from './audit/actor.js';
import { ApiError } from './errors.js';
import { SharingMonitor, tokenSharingEvent } from './sharing/monitor.js';
import { parseSubject, revocationListOf } from './domain/sharing.js';
import { bundledPlaces, type PlaceLookup } from './enforce/places.js';

export interface Services {
  config: Config;
  logger: Logger;
  store: Store;
  accounts: AccountService;
  tokens: TokenService;
  metrics: Metrics;
  geo: GeoLookup;
  /** The admission pipeline (src/admission/pipeline.ts): every decision goes through its admit(). */
  enforcer: Enforcer;
  keys: KeyRing;
  /** The director's URL sets (director.clusters, else the implicit `auto`; docs/api.md#clusters). */
  clusters: Clusters;
  lifecycle: Lifecycle;
  /** Running sessions: admission with limits, re-asks, stops, cuts, expiry (docs/api.md#running-sessions). */
  sessions: SessionControl;
  /** HTTP viewer sessions (sessions.http.enabled). */
  viewers?: ViewerSessions;
  webhooks: WebhookService;
  /** Credential issuers' management (docs/api.md#managing-issuers). */
  issuers: IssuerService;
  dispatcher: WebhookDispatcher;
  usage: UsageService;
  /** Validates the stream patterns of API writes: cost on the event loop, RE2 compiles on worker threads. */
  patterns: PatternChecks;
  /** Reads MediaMTX's byte counters when analytics.mediamtx.apiUrl is set. */
  poller?: MediamtxPoller;
  /** Decisions kept for /api/decisions and the dashboard (history.enabled; docs/api.md#decision-history). */
  history?: DecisionHistory;
  /** The audit log of management changes (docs/api.md#audit-log); `enabled` false without a key. */
  audit: AuditLog;
  /** Token-sharing detection (docs/api.md#token-sharing): fed by the decisions, written off their path. */
  sharing: SharingMonitor;
  /** The services' clock (tests move it). */
  now: () => number;
  /** Set on SIGTERM: readiness fails and responses close their connections. */
  draining: boolean;
  /** Stops background work and closes the store; queued webhooks are delivered until `deadline` (epoch ms; default now + server.shutdownGraceMs). */
  close(deadline?: number): Promise<void>;
}

/** The geo database is read once per process and path, however many apps a test builds. */
const geoByPath = new Map<string, Promise<GeoLookup>>();
function sharedGeo(databasePath: string): Promise<GeoLookup> {
  let g = geoByPath.get(databasePath);
  if (!g) {
    g = openGeo({ databasePath });
    geoByPath.set(databasePath, g);
    g.catch(() => geoByPath.delete(databasePath));
  }
  return g;
}

export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** How often an instance re-reads the signing keys (another instance or the CLI may rotate them). */
const KEY_RELOAD_MS = 60_000;

export const usesRedis = (c: Config): boolean =>
  c.redis.url !== '' || c.redis.clusterNodes.length > 0 || c.redis.sentinels.length > 0;

export async function createStore(config: Config, logger: Logger): Promise<Store> {
  if (!usesRedis(config)) {
    const file = path.resolve(config.dataDir, config.store.sqliteFile);
    logger.info({ store: 'sqlite', file }, 'store selected');
    return new SqliteStore({
      file,
      synchronous: config.store.sqliteSynchronous,
      onCheckpointFailure: (err) => logger.warn({ err }, 'sqlite: background checkpoints stopped; the serving connection checkpoints for itself again'),
    });
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
  await connectRedis(client, config.redis);
  const topology = config.redis.clusterNodes.length > 0 ? 'cluster' : config.redis.sentinels.length > 0 ? 'sentinel' : 'standalone';
  logger.info({ store: 'redis', topology, keyPrefix: config.redis.keyPrefix }, 'store selected');
  return new RedisStore(client, {
    waitReplicas: config.redis.waitReplicas,
    waitTimeoutMs: config.redis.waitTimeoutMs,
    versionLagMs: config.redis.versionLagMs,
  });
}

/**
 * The token service on `store` with the configured limits and clusters: the server's, and the CLI's
 * (which has no running sessions to end, so it passes no `changed`).
 */
export function createTokenService(
  config: Config,
  store: Store,
  opts: { now?: () => number; clusters?: Clusters; changed?: TokenChanged; audit?: AuditLog } = {},
): TokenService {
  const clusters = opts.clusters ?? new Clusters(config.director);
  return new TokenService(store, opts.now ?? Date.now, config.limits, opts.changed, (stored) => clusters.defaultOf(stored).id, opts.audit);
}

export async function createServices(
  config: Config,
  opts: {
    logger?: Logger;
    store?: Store;
    now?: () => number;
    geo?: GeoLookup;
    /** Where token-sharing places addresses (default: the bundled ASN and city databases). */
    places?: PlaceLookup;
    poster?: Poster;
    /** The server's start: when the store holds no account, create "default" (its secret in <dataDir>/default-api-secret). */
    firstStart?: boolean;
  } = {},
): Promise<Services> {
  const logger = opts.logger ?? createLogger(config.log.level);
  const store = opts.store ?? (await createStore(config, logger));
  // Data of an earlier build brought up to this one's indexes before any decision reads them.
  await store.upgrade?.();
  const now = opts.now ?? Date.now;
  const geo = opts.geo ?? (await sharedGeo(config.geo.databasePath));
  const metrics = new Metrics({ logLinesDropped: () => logSinkOf(logger)?.dropped ?? 0 });
  // The audit log's key (docs/operations.md#audit-log): configured, or the embedded store's own
  // <dataDir>/audit-key (made on the first start); a store handed in is not assumed to live in dataDir.
  const { key, source } = auditKey(config, { embedded: opts.store === undefined && store.kind === 'sqlite', create: opts.firstStart === true });
  if (source === 'generated') logger.info({ keyFile: path.resolve(config.dataDir, 'audit-key') }, 'first start: made the audit log key (keep it with the data; never in the store)');
  const audit = new AuditLog(store, key, config.audit, logger, now);
  // without a key, a store that keeps chains refuses this instance's writes from the first one
  await audit.checkKey();
  audit.start();
  const accounts = new AccountService(store, now, audit);
  // The default account exists before the enforcer that reads it is built (first start creates it).
  const first = opts.firstStart ? await accounts.ensureDefaultAccount(config.dataDir) : null;
  if (first) {
    logger.info(
      { accountId: first.account.id, secretFile: first.secretFile },
      'first start: created account "default"; its API secret is in secretFile (shown nowhere else)',
    );
  }
  const shared = await accounts.sharedNames();
  if (shared.length > 0) {
    logger.warn(
      { accountIds: shared },
      'accounts share names (given before names were unique): they keep them, and no other account may take them; rename all but one to end it',
    );
  }
  const defaultAccountId = (await store.getMeta(DEFAULT_ACCOUNT_META)) ?? undefined;
  const keys = await KeyRing.load(store, now);
  const clusters = new Clusters(config.director);
  // Viewer credentials: signed with sessions.http.secret, else a key kept in the store; never anything a caller holds.
  const credentialKeys = config.sessions.http.enabled
    ? await CredentialKeys.load(store, { secret: config.sessions.http.secret, previousForMs: ViewerSessions.previousKeyMs(config.sessions.http) }, now)
    : undefined;
  const usage = new UsageService(store, (id) => store.findTokenById(id), now, config.analytics.hourlyRetentionDays);
  const lifecycle = new Lifecycle(
    store,
    { queueSize: config.lifecycle.queueSize, liveTtlSeconds: config.enforcement.liveTtlSeconds, defaultAccountId: config.enforcement.defaultAccountId },
    metrics,
    logger,
    (value) => enforcer.lookup.byHashFresh(tokenHash(value)),
    usage,
    now,
    { registered: (s, checked) => sessions.registered(s, checked) },
  );
  const cutter = new Cutter(
    config.sessions.servers,
    { timeoutMs: config.sessions.driverTimeoutMs, retries: config.sessions.driverRetries },
    { logger, onOutcome: (caller, outcome) => metrics.sessionCuts.inc({ caller, outcome }) },
  );
  const sessions: SessionControl = new SessionControl(store, config, metrics, logger, lifecycle, cutter, now);
  sessions.start();
  // The admission pipeline: every decision, and the sessions admissions start (docs/architecture.md#the-decision-flow).
  // Credential issuers' JWTs (docs/api.md#credential-issuers): their JWKS URLs fetched through the SSRF guard, verified JWTs remembered.
  const { memoEntries, maxPerAccount: _max, keyDir: _dir, keyEnvPrefix: _prefix, keyReloadSeconds: _reload, ...keyOptions } = config.issuers;
  const issuerKeys = new IssuerKeys(copyWith(keyOptions, { now }));
  const issuers = { keys: issuerKeys, memo: new IssuerJwtMemo(memoEntries) };
  // Signed URLs, cookies and CATs (docs/api.md#signed-url-issuers): verified grants remembered; a CAT admitted once through the store's marks.
  // Keys read from files or the environment: a key that changed forgets what the old one verified.
  const keySources = new KeySources(copyWith(config.issuers, { now }));
  const issuerService = new IssuerService(store, issuerLimits(config), now, keySources, audit);
  const signedMemo = new SignedMemo(memoEntries);
  keySources.onChange(() => signedMemo.clear());
  const signed = {
    memo: signedMemo,
    keyed: (i: IssuerRecord) => keySources.resolve(i),
    keysGeneration: () => keySources.generation,
    useOnce: async (accountId: string, name: string, ttlMs: number) => (await store.swapMark(accountId, name, '1', ttlMs, 'absent')) === null,
  };
  // Decisions kept, written off the decision path (docs/api.md#decision-history).
  const history = openHistory(config, store, logger, now);
  if (history) metrics.watchHistory(() => history.tallies);
  // Token sharing (docs/api.md#token-sharing): its actions reach services built below, called only after the first flush.
  const sharing = new SharingMonitor(
    store,
    opts.places ?? bundledPlaces(geo),
    {
      notify: async (flag) => {
        const t = await store.getToken(flag.accountId, flag.kind, flag.tokenId);
        await dispatcher.onEvent(tokenSharingEvent(flag, t?.label ?? ''));
      },
      limit: (flag) => sessions.keepNewest(flag.accountId, flag.tokenId, { ip: flag.newestIp, at: flag.newestAt }, flag.subject),
      disable: async (flag) => {
        if (flag.subject !== undefined && flag.issuerId !== undefined) {
          // a subject is revoked at its issuer (the monitor hands over only subjects a list names)
          const s = parseSubject(flag.subject);
          const list = s === null ? null : revocationListOf(s.claim);
          return s !== null && list !== null && (await issuerService.revoke(flag.accountId, flag.issuerId, list, s.value, SYSTEM_ACTOR));
        }
        await tokens.update(flag.accountId, flag.kind, flag.tokenId, { isActive: false }, SYSTEM_ACTOR).catch((e: Error) => {
          // a token deleted since is nothing to disable
          if (!(e instanceof ApiError && e.status === 404)) throw e;
        });
        return true;
      },
    },
    metrics,
    logger,
    now,
    { flushMs: config.sharing.flushMs, queueSize: config.sharing.queueSize },
  );
  if (config.sharing.enabled) sharing.start();
  const enforcer = new Enforcer(store, config.enforcement, geo, metrics, logger, { now, defaultAccountId, sessions, issuers, signed, history, sharing: config.sharing.enabled ? sharing : undefined });
  const viewers = credentialKeys
    ? new ViewerSessions(
        config.sessions.http,
        credentialKeys,
        store,
        enforcer.lookup,
        logger,
        now,
        (ip) => geo.countryOf(ip),
      )
    : undefined;
  if (viewers) {
    sessions.onEnded((s) => viewers.sessionEnded(s));
    viewers.start();
  }
  metrics.watchSessions(() => store.sessionCounts());
  const poller = config.analytics.mediamtx.apiUrl
    ? new MediamtxPoller(
        { apiUrl: config.analytics.mediamtx.apiUrl, intervalMs: config.analytics.mediamtx.intervalMs, baselineFirstPoll: true, logger, now },
        async (deltas) => {
          for (const d of deltas) await usage.ingestSession('mediamtx', d.sessionId, d.bytesOut, d.bytesIn, d.at);
        },
      )
    : undefined;
  poller?.start();
  const client = new WebhookClient({
    timeoutMs: config.webhooks.timeoutMs,
    allowPrivateTargets: config.webhooks.allowPrivateTargets,
    caFile: config.webhooks.caFile || undefined,
  });
  const dispatcher = new WebhookDispatcher(store, opts.poster ?? client, config.webhooks, metrics, logger, `Streamgate-Webhooks/${VERSION}`, now);
  lifecycle.subscribe(dispatcher.onEvent);
  const webhooks = new WebhookService(store, config.webhooks, (e) => dispatcher.send(e), now, audit);
  const patterns = new PatternChecks({ workers: config.limits.patternWorkers, queue: config.limits.patternQueue }, logger);
  const reload = setInterval(() => {
    keys.reload().catch((e: Error) => logger.warn({ err: e.message }, 'signing keys: reload failed'));
  }, KEY_RELOAD_MS);
  reload.unref();
  const tokens = createTokenService(config, store, {
    now,
    clusters,
    audit,
    changed: (accountId, id, before, after) => {
      viewers?.tokenChanged(id, after, accountId);
      return sessions.tokenChanged(accountId, id, before, after).catch((e: Error) => logger.warn({ accountId, tokenId: id, err: e.message }, 'sessions of a changed token: not ended'));
    },
  });
  return {
    config,
    logger,
    store,
    accounts,
    tokens,
    metrics,
    geo,
    enforcer,
    keys,
    clusters,
    lifecycle,
    sessions,
    viewers,
    webhooks,
    issuers: issuerService,
    dispatcher,
    usage,
    patterns,
    poller,
    history,
    audit,
    sharing,
    now,
    draining: false,
    close: async (deadline?: number) => {
      clearInterval(reload);
      sessions.stop();
      viewers?.stop();
      // The HTTP server has stopped: no write is left to validate.
      await patterns.close();
      await poller?.stop();
      // the uses still queued are written and acted on while webhooks and the store still take them
      await sharing.stop().catch((e: Error) => logger.warn({ err: e.message }, 'token sharing: uses not written at shutdown'));
      lifecycle.close();
      await lifecycle.idle();
      // Queued webhooks get until the shutdown deadline; the HTTP client closes only once nothing
      // can start another delivery on it.
      await dispatcher.shutdown(deadline ?? now() + config.server.shutdownGraceMs);
      await client.close();
      await cutter.close();
      await issuerKeys.close();
      // the decisions still queued are written before the store's connection closes
      await history?.close().catch((e: Error) => logger.warn({ err: e.message }, 'decision history: not closed cleanly'));
      // the heads moved since the last log are logged once more
      await audit.stop().catch((e: Error) => logger.warn({ err: e.message }, 'audit log: heads not logged at shutdown'));
      await store.close();
    },
  };
}
