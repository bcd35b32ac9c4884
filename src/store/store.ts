// The persistence contract. Both backends (store/sqlite, store/redis) implement exactly this and
// pass the same suite (test/contract/store-contract.ts). Every method is scoped: a token or
// account of another account is invisible (null / false), never an error. Failures are typed
// (errors.ts): a backend that does not answer rejects with StoreUnavailable, a write that loses its
// compare-and-set race more often than the store retries with StoreConflict; both are retryable.
// Every write of several records is one atomic step (a transaction, a Lua script); keys outside an
// account's Redis Cluster slot are only hints, verified against the record on read. Rules both
// backends apply (recording merge, bind decision, deliveries kept) are in domain/store-rules.ts.
import type { TokenKind, TokenRecord, NewTokenRecord } from '../domain/tokens.js';
import type { SecuredStream } from '../domain/secured-streams.js';
import type { Session, SessionEndReason } from '../contracts/session.js';
import type { NewRecording, Recording, SessionLimits } from '../domain/store-rules.js';

export type { NewRecording, Recording, Session, SessionEndReason, SessionLimits };

export interface Account {
  id: string;
  name: string;
  createdOn: string;
  /** Viewing any stream of the account needs a subscribe token. */
  secureViewer: boolean;
  /** SHA-256 hex of the current API secret; absent when the secret was deleted. */
  secretHash?: string;
  /**
   * Viewer country defaults (`/api/geo/account`): apply to viewers that no token's lists cover.
   * ISO alpha-2, upper-case, at most one of the two non-empty; absent when empty.
   */
  allowedCountries?: string[];
  deniedCountries?: string[];
  /**
   * The cluster whose director URLs serve the account's tokens that name none (`PUT /api/cluster`,
   * docs/api.md#clusters); absent when never set.
   */
  defaultCluster?: string;
  /** The account-wide geo cascade setting (`/api/account/geo_cascade`); absent when never set. */
  geoCascade?: AccountGeoCascade;
  /**
   * false: RTMP, RTSP and SRT skip the tokens' address rules (allowedIpAddresses, bindIpsOnUsage),
   * as the hosted platform does (docs/api.md#rtmp). Absent when on (the default).
   */
  ipRulesOnRtmp?: false;
}

/** An account's geo cascade setting, as the hosted API shapes it. */
export interface AccountGeoCascade {
  isEnabled: boolean;
  clusters: string[];
}

/** What updateAccount may change; a country list given replaces the stored one ([] clears it). */
export interface AccountPatch {
  secureViewer?: boolean;
  name?: string;
  allowedCountries?: string[];
  deniedCountries?: string[];
  defaultCluster?: string;
  geoCascade?: AccountGeoCascade;
  ipRulesOnRtmp?: boolean;
}

export type SortBy = 'Name' | 'AddedOn';

export interface ListQuery {
  sortBy: SortBy;
  /** 1-based */
  page: number;
  itemsOnPage: number;
  descending: boolean;
}

/**
 * The change applied by updateToken. It receives the current record and returns the next one,
 * or throws (an ApiError) to abort with nothing stored. It must be pure: a backend with
 * optimistic concurrency may call it again with a newer record.
 */
export type TokenChange = (current: TokenRecord) => { next: TokenRecord; clearBound: boolean };

/** A stream being published (docs/api.md#hooks). */
export interface LiveStream {
  accountId: string;
  streamName: string;
  tokenId: number;
  feedId: string;
  startedOn: string;
  /** The adapter that reported it (nginx-rtmp, srs, ...). */
  caller: string;
}

export type AdmitResult =
  | { admitted: true; /** Publishers this admission replaced, already ended in the registry. */ replaced: Session[] }
  | { admitted: false; reason: 'session_limit' | 'uses_exhausted' | 'stream_taken' | 'token_changed' };

export interface SessionFilter {
  streamName?: string;
  tokenId?: number;
  action?: 'publish' | 'subscribe';
}

/** An account's webhook (docs/api.md#webhooks). */
export interface Webhook {
  id: number;
  accountId: string;
  url: string;
  /** base64 of 32 random bytes; the HMAC key is its decoded bytes */
  secret: string;
  isFeedHooks: boolean;
  isRecordingHooks: boolean;
  isThumbnailHooks: boolean;
  /** Stored and returned (absent = false); only test sends produce transcoder and media events. */
  isTranscoderHooks?: boolean;
  isMediaHooks?: boolean;
  isViewerConnectionHooks?: boolean;
  /** RE2 pattern, full match on the stream name (the transcoder name for transcoder events) */
  filter?: string;
  /** Set after webhooks.disableAfterFailures consecutive failed deliveries; no events while set. */
  disabled?: { until: string | null; reason: string };
  /** Consecutive failed deliveries (absent = 0), counted while webhooks.disableAfterFailures > 0. */
  failures?: number;
  createdOn: string;
  updatedOn: string;
  rev: number;
}

/** One delivery attempt, as the deliveries log shows it. */
export interface Delivery {
  deliveryId: string;
  at: string;
  /** feeds.started, recording.completed, thumbnail, ... */
  event: string;
  attempt: number;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

/** Bytes of one report, already attributed (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream). */
export interface UsageRecord {
  accountId: string;
  /** Absent: kept per token and stream (not lost) */
  trackingId?: string;
  tokenId?: number;
  streamName: string;
  /** UTC day, YYYY-MM-DD */
  day: string;
  bytesOut: number;
  bytesIn: number;
  /**
   * Also counted in the UTC hour (YYYY-MM-DDTHH) when set, that hour's buckets kept until
   * keepUntilMs (epoch ms; docs/operations.md#hourly-usage-retention). Unset: per day only.
   */
  hourly?: { hour: string; keepUntilMs: number };
}

export interface UsageTotal {
  trackingId: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

/**
 * What a usage read covers: some tracking ids (a row per tracking id, period and stream), some
 * streams (a row per stream and period, every tracking id and the untracked usage summed), or some
 * streams per tracking id (`streamTracking`: a row per stream, period and tracking id, `''` for the
 * usage without one, which has a row only when it is not zero).
 */
export type UsageSelector = { trackingIds: string[] } | { streamNames: string[] } | { streamTracking: string[] };

/** One UTC day's bytes of one stream: of one tracking id, or of every report on the stream. */
export interface UsageDay {
  /** YYYY-MM-DD */
  day: string;
  /** Set when the read selected tracking ids or streamTracking. */
  trackingId?: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

/** One UTC hour's bytes, as UsageDay. */
export interface UsageHour {
  /** YYYY-MM-DDTHH */
  hour: string;
  trackingId?: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

/** The whole account's bytes in one period (a UTC day YYYY-MM-DD or hour YYYY-MM-DDTHH). */
export interface UsageSum {
  period: string;
  bytesOut: number;
  bytesIn: number;
}

export type BindResult = 'bound' | 'already' | 'full' | 'stale';

export interface Store {
  readonly kind: 'sqlite' | 'redis';
  /**
   * True when every call does its work synchronously in this process before its promise exists
   * (a deadline timer could not interrupt it, so the decision path arms none).
   */
  readonly inProcess: boolean;

  /** Resolves when the backend answers; rejects otherwise (readiness). */
  ping(): Promise<void>;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
  /**
   * Brings data written by an earlier build up to this one's indexes, once per store (later calls
   * find it done). Called at start before any decision; a backend that migrates on open has none.
   */
  upgrade?(): Promise<void>;

  // ---- accounts and API secrets -------------------------------------------------------------

  /** Creates an account. Rejects when the id exists. */
  createAccount(account: Account): Promise<Account>;
  /**
   * Creates `account` only when the store holds no account at all, atomically across instances
   * sharing the store. Returns true when it was created.
   */
  createFirstAccount(account: Account): Promise<boolean>;
  getAccount(id: string): Promise<Account | null>;
  /** All accounts, ordered by creation. */
  listAccounts(): Promise<Account[]>;
  /**
   * Sets account settings (moving the account version) and answers the account as this change left
   * it, atomically; null when the account does not exist.
   */
  updateAccount(id: string, patch: AccountPatch): Promise<Account | null>;
  /**
   * Replaces (hash) or deletes (null) the account's API secret. From the moment this resolves the
   * old secret resolves to no account. False when the account does not exist, or when `expected`
   * is given and the current secret's hash is no longer it (a concurrent rotation won).
   */
  setAccountSecret(id: string, secretHash: string | null, expected?: string): Promise<boolean>;
  /** The account whose current secret has this SHA-256 hash, else null. */
  findAccountBySecretHash(secretHash: string): Promise<Account | null>;

  // ---- tokens -------------------------------------------------------------------------------

  /** Stores a new token and assigns its id (a positive integer unique across kinds and accounts). */
  createToken(token: NewTokenRecord): Promise<TokenRecord>;
  /** The token of this account and kind with this id, else null. */
  getToken(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord | null>;
  /** A page of the account's tokens of one kind. Name order is case-insensitive, ties by id. */
  listTokens(accountId: string, kind: TokenKind, q: ListQuery): Promise<TokenRecord[]>;
  /**
   * Atomic read-modify-write of one token: no concurrent update is lost. When the change asks for
   * it, the bound addresses are cleared in the same atomic step. Null when the token is not found.
   */
  updateToken(accountId: string, kind: TokenKind, id: number, change: TokenChange): Promise<TokenRecord | null>;
  /**
   * Deletes the token and its bound addresses. A publish token that secures viewing leaves its
   * stream rules on the account's secured streams (`securedAfterDelete` in domain/secured-streams.ts),
   * in the same atomic step. False when not found.
   */
  deleteToken(accountId: string, kind: TokenKind, id: number): Promise<boolean>;
  /**
   * The account's secured streams kept after their tokens were deleted (docs/api.md#secured-streams),
   * in `bySecuredName` order. A decision reads them with the securing tokens.
   */
  securedStreams(accountId: string): Promise<SecuredStream[]>;
  /**
   * Removes the account's secured-stream entries named `streamName` (exact and regex alike) and
   * moves the account version when any was removed, in one atomic step. Answers the removed entries.
   */
  removeSecuredStream(accountId: string, streamName: string): Promise<SecuredStream[]>;
  /** The token whose current value has this SHA-256 hash (any account, any kind), else null. */
  findTokenByHash(tokenHash: string): Promise<TokenRecord | null>;
  /** The token with this id in any account (enforcement of self-signed JWTs), else null. */
  findTokenById(id: number): Promise<TokenRecord | null>;
  /**
   * The account's publish tokens that make viewing need a subscribe token: with
   * subscribeRequiresAuth, active or not (domain rule `securesViewing`). Ordered by id.
   */
  securingTokens(accountId: string): Promise<TokenRecord[]>;
  /**
   * In one read, the account's publish tokens that set rules for its viewers: the securing ones and
   * those with country lists, active or not (`setsViewerRules` in domain/viewer-rules.ts). Ordered by id.
   */
  viewerRuleTokens(accountId: string): Promise<TokenRecord[]>;
  /**
   * A number that changes whenever anything of the account that a decision reads changes: any of
   * its tokens (create/update/delete) or its settings. Caches compare it to know they are current.
   * 0 for an account never written.
   */
  accountVersion(accountId: string): Promise<number>;
  /**
   * The account version when this process already holds it current without any I/O, else
   * undefined (then accountVersion() reads it). Lets a decision on a cached token finish without
   * an await (docs/performance.md): SQLite from the versions it keeps, Redis while its version
   * watch vouches for the account (docs/performance.md#watched-account-versions).
   */
  accountVersionKnown?(accountId: string): number | undefined;

  // ---- bind on usage ------------------------------------------------------------------------

  /** The addresses bound to a token so far, in binding order. */
  boundAddresses(accountId: string, tokenId: number): Promise<string[]>;
  /**
   * Atomically, against the stored token: if its `rev` is no longer `token.rev` → 'stale' (the
   * caller decided on an old copy: re-read and decide again); else if `address` is bound →
   * 'already'; else if fewer than `token.bindIpsOnUsage` are bound → bind it, 'bound'; else
   * 'full'. Concurrent calls from any instance never bind more than the limit.
   */
  bindAddress(token: TokenRecord, address: string): Promise<BindResult>;

  // ---- webhooks ------------------------------------------------------------------------------

  /** Stores a webhook and assigns its id (unique per deployment). */
  createWebhook(w: Omit<Webhook, 'id' | 'rev'>): Promise<Webhook>;
  getWebhook(accountId: string, id: number): Promise<Webhook | null>;
  /** Atomic read-modify-write (the change may run again on a newer version). Null: not found. */
  updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook): Promise<Webhook | null>;
  /** Deletes the webhook and its deliveries log. */
  deleteWebhook(accountId: string, id: number): Promise<boolean>;
  /** The account's webhooks by id: from `startingId` (inclusive) in the given direction. */
  listWebhooks(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Webhook[]>;
  /** Appends a delivery attempt to the webhook's log (while it exists), keeping the newest 100 (DELIVERIES_KEPT). */
  addDelivery(accountId: string, webhookId: number, d: Delivery): Promise<void>;
  /** The webhook's delivery attempts, newest first (at most 100). */
  listDeliveries(accountId: string, webhookId: number): Promise<Delivery[]>;

  // ---- recordings ----------------------------------------------------------------------------

  /** A recording began (status 'recording'). */
  startRecording(r: NewRecording): Promise<Recording>;
  /**
   * A recording is complete: completes the open recording of the same stream and path if there is
   * one, else stores a new completed recording (domain rule `completedRecording`). Of concurrent
   * completions of one open recording exactly one completes it.
   */
  completeRecording(r: NewRecording & { completedOn: string }): Promise<Recording>;
  /** The account's recordings (of one stream, when given), newest first. */
  listRecordings(accountId: string, streamName?: string): Promise<Recording[]>;
  /** Removes a recording (and, if it is still open, its open mark); returns it, null when not found. */
  deleteRecording(accountId: string, id: number): Promise<Recording | null>;

  // ---- usage (analytics) ----------------------------------------------------------------------

  /**
   * Adds a report's bytes to its (account, trackingId | token, stream, day) bucket atomically, and
   * with `hourly` to its (account, trackingId, stream, hour) bucket in the same step.
   * With a reportId, a report the account already sent is not counted again: false.
   */
  addUsage(u: UsageRecord, reportId?: string): Promise<boolean>;
  /** Per tracking id and stream, the sums over the days in [startDay, stopDay). */
  usageByTracking(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<UsageTotal[]>;
  /**
   * Per UTC day in [startDay, stopDay), in no particular order, only days with usage:
   * `{trackingIds}` → a row per tracking id, day and stream; `{streamNames}` → a row per stream and
   * day summing every tracking id and the untracked usage. Costs O(days × streams), not O(reports).
   */
  usageDaily(accountId: string, selector: UsageSelector, startDay: string, stopDay: string): Promise<UsageDay[]>;
  /**
   * As usageDaily, per UTC hour in [startHour, stopHour) (YYYY-MM-DDTHH), from the reports added
   * with `hourly`, while their keepUntilMs has not passed. Costs O(hours × streams).
   */
  usageHourly(accountId: string, selector: UsageSelector, startHour: string, stopHour: string): Promise<UsageHour[]>;
  /**
   * The account's bytes per day (`unit` 'day', YYYY-MM-DD bounds) or hour ('hour', YYYY-MM-DDTHH
   * bounds) in [start, stop), only periods with usage, in no particular order. Costs O(periods × streams).
   */
  usageAccount(accountId: string, unit: 'day' | 'hour', start: string, stop: string): Promise<UsageSum[]>;

  // ---- deployment metadata (signing keys, ...) ----------------------------------------------

  getMeta(key: string): Promise<string | null>;
  /** Sets a value; with onlyIfAbsent, only when the key has none (atomic). True when written. */
  setMeta(key: string, value: string, onlyIfAbsent?: boolean): Promise<boolean>;

  // ---- live streams (filled by the caller adapters) ------------------------------------------

  /**
   * Records that a stream is being published; replaces an entry for the same stream. The entry
   * disappears after `ttlSeconds` unless started again (a lost "done" cannot keep it live).
   * Viewers' country lists follow the publishing token, so when the account has viewer-rule tokens
   * (see viewerRuleTokens) and the stream's publishing token changes (it was not live, its entry
   * had expired, or another token published it), the account version moves in the same step.
   */
  startLiveStream(stream: LiveStream, ttlSeconds: number): Promise<void>;
  /**
   * Ends the stream's entry (only the feed `feedId` when given); returns what was removed. Moves
   * the account version when it removed an entry and the account has viewer-rule tokens.
   */
  endLiveStream(accountId: string, streamName: string, feedId?: string): Promise<LiveStream | null>;
  // ---- the session registry (docs/api.md#running-sessions) ----------------------------------

  /**
   * Registers an admitted session, indexed by account, token and stream (a session of the same
   * caller and caller id is replaced), and counts a use of its token. Live until `ttlSeconds` after
   * its lastSeenOn unless touched or ended.
   */
  startSession(session: Session, ttlSeconds: number): Promise<void>;
  /**
   * startSession, but only if `limits` allow it, decided in the same atomic step as the write
   * (exact under concurrency on every instance); rule order in domain/store-rules.ts admissionStep.
   */
  admitSession(session: Session, ttlSeconds: number, limits: SessionLimits): Promise<AdmitResult>;
  /** The session (live, or ended and still kept: endedReason set), else null. */
  getSession(caller: string, sessionId: string): Promise<Session | null>;
  /** By registry id, in this account only (live, or ended and still kept), else null. */
  getSessionById(accountId: string, id: string): Promise<Session | null>;
  /**
   * A re-ask: a live session's lastSeenOn becomes `at` and it lives `ttlSeconds` more; an ended
   * one is answered as it is (endedReason set); null when unknown.
   */
  touchSession(caller: string, sessionId: string, ttlSeconds: number, at: string): Promise<Session | null>;
  /**
   * Ends a live session atomically: exactly one concurrent caller (on any instance) gets it back,
   * with endedReason and endedOn set; the others get null. The ended record is kept `keepSeconds`.
   */
  endSession(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }): Promise<Session | null>;
  /** The account's live sessions matching `filter`, oldest first (then by id): a page and the total. */
  listSessions(accountId: string, filter: SessionFilter, page: { offset: number; limit: number }): Promise<{ total: number; items: Session[] }>;
  /** Live sessions of every account, counted by caller and action (the metrics' gauge). */
  sessionCounts(): Promise<Array<{ caller: string; action: 'publish' | 'subscribe'; count: number }>>;
  /**
   * Expiry cuts (enforcement.terminateOn expire): remembers that the token's sessions are due to
   * end at `atMs` (a later call for the same token replaces the time).
   */
  scheduleExpiry(accountId: string, tokenId: number, atMs: number): Promise<void>;
  /** The tokens whose time has come, each handed to exactly one caller on any instance, at most `limit`. */
  takeDueExpiries(nowMs: number, limit: number): Promise<Array<{ accountId: string; tokenId: number }>>;
  /** The stream's live entry (not expired), else null. */
  getLiveStream(accountId: string, streamName: string): Promise<LiveStream | null>;
  /** Ids of publish tokens now publishing `streamName` (or any stream) of the account. */
  activePublishTokenIds(accountId: string, streamName?: string): Promise<number[]>;

  // ---- marks: short-lived values every instance sees (the viewerConnection webhooks' timing) ---

  /**
   * Sets the account's mark `name` to `value` (non-empty) for `ttlMs` and answers the value it held
   * (null: none, or expired), in one atomic step. `when: 'absent'` sets it only when it held none,
   * so exactly one of concurrent callers on any instance gets null; `'present'` only when it held
   * one (null: nothing set).
   */
  swapMark(accountId: string, name: string, value: string, ttlMs: number, when?: 'always' | 'absent' | 'present'): Promise<string | null>;
  /** Removes the mark when it holds `value`: true for exactly one of concurrent callers on any instance. */
  takeMark(accountId: string, name: string, value: string): Promise<boolean>;
}
