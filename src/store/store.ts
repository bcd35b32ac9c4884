// The persistence contract: one interface per aggregate (each in its own file beside this one,
// each implemented by a file per backend under store/sqlite and store/redis), and Store, their
// intersection, which a backend answers as a whole. Every backend passes the same suite, one part
// per aggregate, published as `streamgate/store-contract` (src/store-contract,
// docs/architecture.md#the-contract-suite); these types and the errors it throws are published as
// `streamgate/store` (index.ts). Every method is scoped: a token or account of another account is
// invisible (null / false), never an error. Failures are typed (errors.ts): a backend that does not
// answer rejects with StoreUnavailable, a write that loses its compare-and-set race more often than
// the store retries with StoreConflict; both are retryable. Every write of several records is one
// atomic step (a transaction, a Lua script); keys outside an account's Redis Cluster slot are only
// hints, verified against the record on read. Rules both backends apply (recording merge, bind
// decision, deliveries kept, admission order) are in domain/store-rules.ts.
import type { AccountStore } from './accounts.js';
import type { AuditStore } from './audit.js';
import type { BindStore } from './binds.js';
import type { IssuerStore } from './issuers.js';
import type { LiveStreamStore } from './live-streams.js';
import type { MarkStore } from './marks.js';
import type { MetaStore } from './meta.js';
import type { RecordingStore } from './recordings.js';
import type { SessionStore } from './sessions.js';
import type { SharingStore } from './sharing.js';
import type { TokenStore } from './tokens.js';
import type { UsageStore } from './usage.js';
import type { WebhookStore } from './webhooks.js';

export type { Account, AccountGeoCascade, AccountPatch, AccountStore } from './accounts.js';
export type { AuditEnds, AuditEntry, AuditHead, AuditQuery, AuditSealer, AuditStore, StoredAudit } from './audit.js';
export type { BindResult, BindStore } from './binds.js';
export type { IssuerPatch, IssuerStore, NewIssuer } from './issuers.js';
export type { LiveStream, LiveStreamStore } from './live-streams.js';
export type { MarkStore } from './marks.js';
export type { MetaStore } from './meta.js';
export type { NewRecording, Recording, RecordingStore } from './recordings.js';
export type { AdmitResult, Session, SessionEndReason, SessionFilter, SessionLimits, SessionStore, SessionTouch } from './sessions.js';
export { touchSessions } from './sessions.js';
export type { SharingStore, SharingUse } from './sharing.js';
export { SHARING_MAX_ADDRESSES } from './sharing.js';
export type { ListQuery, SortBy, TokenChange, TokenStore } from './tokens.js';
export type { UsageDay, UsageHour, UsageRecord, UsageSelector, UsageSum, UsageTotal, UsageStore } from './usage.js';
export type { Delivery, Webhook, WebhookStore } from './webhooks.js';

/** What every backend is besides its aggregates: its name, readiness, shutdown and upgrade. */
export interface StoreLifecycle {
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
}

/** The whole persistence contract: every aggregate, and the backend's lifecycle. */
export type Store = StoreLifecycle &
  AccountStore &
  TokenStore &
  IssuerStore &
  BindStore &
  WebhookStore &
  RecordingStore &
  UsageStore &
  MetaStore &
  LiveStreamStore &
  SessionStore &
  MarkStore &
  SharingStore &
  AuditStore;
