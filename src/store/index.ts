// The package entry `streamgate/store`: what a store backend outside this repository implements (the
// interfaces of store.ts and the records they take), throws (the errors of src/errors.ts, which the
// server maps to its answers) and applies (the rules both backends share, domain/store-rules.ts).
// Nothing in src/ imports it; docs/architecture.md#a-backend-outside-the-repository.
export type {
  Account,
  AccountGeoCascade,
  AccountPatch,
  AccountStore,
  AdmitResult,
  AuditEnds,
  AuditEntry,
  AuditHead,
  AuditQuery,
  AuditSealer,
  AuditStore,
  BindResult,
  BindStore,
  Delivery,
  IssuerPatch,
  IssuerStore,
  ListQuery,
  LiveStream,
  LiveStreamStore,
  MarkStore,
  MetaStore,
  NewIssuer,
  NewRecording,
  Recording,
  RecordingStore,
  Session,
  SessionEndReason,
  SessionFilter,
  SessionLimits,
  SessionStore,
  SessionTouch,
  SortBy,
  Store,
  StoreLifecycle,
  StoredAudit,
  TokenChange,
  TokenStore,
  UsageDay,
  UsageHour,
  UsageRecord,
  UsageSelector,
  UsageStore,
  UsageSum,
  UsageTotal,
  Webhook,
  WebhookStore,
} from './store.js';
export type { NewTokenRecord, TokenKind, TokenRecord } from '../domain/tokens.js';
export type { SecuredStream } from '../domain/secured-streams.js';
export type { AuditAction, AuditChange, AuditFields, AuditResource } from '../domain/audit.js';
export { canonicalJson, chainMac, ChainWalk, sealEntry } from '../domain/audit.js';
export type { IssuerAlgorithm, IssuerClaimMap, IssuerRecord, RevokedIds } from '../domain/issuers.js';
export { AccountExists, AccountNameTaken, IssuerChanged, IssuerConflict, StoreConflict, StoreUnavailable } from '../errors.js';
export {
  accountNameKey,
  admissionStep,
  bindDecision,
  completedRecording,
  DELIVERIES_KEPT,
  ENDED_SESSION_KEEP_S,
  HTTP_VIEWER_CALLER,
  issuerIndexKey,
  issuerOverlap,
  patchedIssuer,
  sessionLookupFinds,
  tokenUnchanged,
} from '../domain/store-rules.js';
