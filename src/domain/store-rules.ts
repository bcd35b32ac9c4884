// Rules every store backend applies the same way, as pure functions: both stores call them (the
// Redis bind script mirrors bindDecision inside Redis, where it must run to stay atomic).
import { copyWith } from './objects.js';
import { overlapping, type IssuerRecord } from './issuers.js';

/** A recording Streamgate knows of (from the callers' recording hooks). */
export interface Recording {
  id: number;
  accountId: string;
  streamName: string;
  tokenId?: number;
  path?: string;
  status: 'recording' | 'completed';
  recordedOn: string;
  completedOn?: string;
  metadata?: Record<string, unknown>;
}

export type NewRecording = Omit<Recording, 'id' | 'status' | 'completedOn'>;

/** What admitSession checks, atomically with registering the session (docs/api.md#session-limits). */
export interface SessionLimits {
  /** Live sessions of the token, this one included, may not exceed it. */
  maxConcurrent?: number;
  /** Admissions of the token ever, this one included, may not exceed it. */
  maxUses?: number;
  /** A publish session on a stream that has a live publisher: refused, or the other publishers end ('replaced'). */
  publishConflict?: 'reject' | 'replace';
  /**
   * The revision of the session's token the decision was made on: when the stored token is gone or
   * at another revision, nothing is registered ('token_changed') and the decision is made again.
   * It makes the admission exact against a token change made meanwhile on any instance, so the
   * decision before it may take a cached record unchecked (docs/api.md#caching-and-revocation).
   */
  tokenRev?: number;
}

/**
 * What makes two account names the same (docs/api.md#account-names): the name without the white space
 * around it, in Unicode normalization form C, lower-cased (locale-independent). No two accounts may
 * have names of one key; a store keeps the key beside the name and refuses a create or rename to a
 * key another account holds (AccountNameTaken).
 */
export const accountNameKey = (name: string): string => name.trim().normalize('NFC').toLowerCase();

/**
 * What a store indexes an issuer's `iss` by, deployment-wide: the value itself, kept apart from
 * JWTs without one (null), which no string's key equals.
 */
export const issuerIndexKey = (iss: string | null): string => (iss === null ? '-' : `=${iss}`);

/**
 * The index key of an issuer record: its `iss`'s for a JWT issuer; for a signed-URL issuer, which
 * is selected within its account by format and key id, a key of its format and account that no
 * `iss` key equals (those start with `-` or `=`).
 */
export const issuerRecordKey = (i: Pick<IssuerRecord, 'issuer' | 'type' | 'accountId'>): string => (i.type === 'jwt' ? issuerIndexKey(i.issuer) : `~${i.type}~${i.accountId}`);

type IssuerSelector = Pick<IssuerRecord, 'id' | 'accountId' | 'issuer' | 'keyIds'> & Partial<Pick<IssuerRecord, 'type'>>;

/**
 * The first of `others` (another issuer than `mine`: another account or id) that `mine` would
 * overlap, with the key ids of it that `mine` would share (empty: it answers for any key id); else
 * undefined. What a store refuses a write for (IssuerConflict).
 */
export function issuerOverlap<T extends IssuerSelector>(mine: IssuerSelector, others: readonly T[]): { other: T; keyIds: string[] } | undefined {
  for (const other of others) {
    if ((other.accountId === mine.accountId && other.id === mine.id) || !overlapping(mine, other)) continue;
    const keyIds = other.keyIds.length === 0 ? [] : mine.keyIds.length === 0 ? [...other.keyIds] : other.keyIds.filter((k) => mine.keyIds.includes(k));
    return { other, keyIds };
  }
  return undefined;
}

/**
 * An issuer after updateIssuer's patch at `at`: the fields the patch gives (one set to undefined is
 * not given), the others kept; id, account and addedOn never change; rev + 1.
 */
export function patchedIssuer(current: IssuerRecord, patch: Partial<IssuerRecord>, at: string): IssuerRecord {
  const next = copyWith(current, { rev: current.rev + 1, updatedOn: at });
  for (const [k, v] of Object.entries(patch)) {
    if (v !== undefined && k !== 'id' && k !== 'accountId' && k !== 'rev' && k !== 'addedOn' && k !== 'updatedOn') (next as Record<string, unknown>)[k] = v;
  }
  return next;
}

/** How many delivery attempts a webhook's log keeps (the newest). */
export const DELIVERIES_KEPT = 100;

/** What binding `address` to a token that binds up to `limit` addresses does (or would do). */
export type BindStep = 'already' | 'bound' | 'full';

/**
 * The bind-on-usage rule: an address already bound passes; a new one is bound while fewer than
 * `limit` are; otherwise the token is full. `bound` is what is bound now (any order).
 */
export function bindDecision(bound: { has(address: string): boolean; readonly size: number }, address: string, limit: number): BindStep {
  if (bound.has(address)) return 'already';
  return bound.size < limit ? 'bound' : 'full';
}

/** A completion report: the recording's fields and when it completed. */
export type CompletedRecording = NewRecording & { completedOn: string };

/**
 * The record a completion leaves: the open recording of the same stream and path (`open`)
 * completed with what the report says (keeping its start time, and its token unless the report
 * names one), or, when none was open, a new completed record (without an id: the store assigns it).
 */
export function completedRecording(open: Recording | null, done: CompletedRecording): Omit<Recording, 'id'> & { id?: number } {
  if (open === null) return copyWith(done, { status: 'completed' });
  return Object.assign({}, open, done, { recordedOn: open.recordedOn, tokenId: done.tokenId ?? open.tokenId, status: 'completed' as const, id: open.id });
}

/** What admitting a session does: refuses it (a limit reached), or admits it, replacing the stream's publishers or not. */
export type AdmissionStep = { admit: true; replace: boolean } | { admit: false; reason: 'session_limit' | 'uses_exhausted' | 'stream_taken' };

/**
 * The first step of an admission, before anything is written: when the decision named the token
 * revision it was made on (`limits.tokenRev`), the stored token (`storedRev`, null when it is gone)
 * must still be at it; otherwise the admission registers nothing ('token_changed') and the
 * decision is made again on the current record.
 */
export function tokenUnchanged(limits: SessionLimits, storedRev: number | null): boolean {
  return limits.tokenRev === undefined || storedRev === limits.tokenRev;
}

/**
 * The session limits rule (docs/api.md#session-limits), in this order: a token whose admissions
 * reached maxUses is exhausted; a publish on a stream with a live publisher is refused (reject) or
 * replaces it (replace); the token's live sessions, less those this admission replaces, must stay
 * below maxConcurrent. `uses` counts the token's admissions so far, `liveOfToken` its live sessions,
 * `publishers` the token ids of the stream's live publishers. It runs once the token is known
 * current (tokenUnchanged).
 */
export function admissionStep(
  state: { uses: number; liveOfToken: number; publishers: ReadonlyArray<number | undefined> },
  session: { action: 'publish' | 'subscribe'; tokenId?: number },
  limits: SessionLimits,
): AdmissionStep {
  if (limits.maxUses !== undefined && state.uses >= limits.maxUses) return { admit: false, reason: 'uses_exhausted' };
  const conflict = session.action === 'publish' && state.publishers.length > 0 ? limits.publishConflict : undefined;
  if (conflict === 'reject') return { admit: false, reason: 'stream_taken' };
  const replace = conflict === 'replace';
  const freed = replace ? state.publishers.filter((t) => t !== undefined && t === session.tokenId).length : 0;
  if (limits.maxConcurrent !== undefined && state.liveOfToken - freed >= limits.maxConcurrent) return { admit: false, reason: 'session_limit' };
  return { admit: true, replace };
}

/** How long an ended session's record is kept for late reports (SRS on_close after on_stop) and re-asks. */
export const ENDED_SESSION_KEEP_S = 600;

/**
 * The caller name of HTTP viewer sessions (src/sessions/viewer-sessions.ts): their ids are made by
 * Streamgate, and every lookup of one knows its account (the viewer's credential names it).
 */
export const HTTP_VIEWER_CALLER = 'auth-request';

/**
 * Whether a session registered for `caller` in `sessionAccountId` is the one a lookup by caller id
 * naming `accountId` (or none) finds: a lookup naming an account finds only that account's
 * session; an HTTP viewer session is found only with its account named, so a store need keep no
 * deployment-wide index of those (docs/operations.md#what-a-viewer-session-costs-on-redis).
 */
export const sessionLookupFinds = (caller: string, sessionAccountId: string, accountId: string | undefined): boolean =>
  accountId === undefined ? foundByCallerIdAlone(caller) : accountId === sessionAccountId;

/** Whether a session of `caller` is found by its caller id alone, without its account (sessionLookupFinds): any but an HTTP viewer's. */
export const foundByCallerIdAlone = (caller: string): boolean => caller !== HTTP_VIEWER_CALLER;

/**
 * Whether new sessions of `caller` are registered under their caller id: an HTTP viewer's, whose id
 * Streamgate makes as it makes registry ids (domain/session-ids.ts). A store then needs no pointer
 * from the caller id to the registry id.
 */
export const callerIdIsRegistryId = (caller: string): boolean => caller === HTTP_VIEWER_CALLER;

/** The registry id of a new session of `caller` named `sessionId`: its caller id (callerIdIsRegistryId), else `fresh()`. */
export const registryIdFor = (caller: string, sessionId: string, fresh: () => string): string => (callerIdIsRegistryId(caller) ? sessionId : fresh());

/** Whether this session is registered under its caller id (registryIdFor), so no pointer names it. */
export const registryIdIsCallerId = (s: { caller: string; id: string; sessionId: string }): boolean => callerIdIsRegistryId(s.caller) && s.id === s.sessionId;
