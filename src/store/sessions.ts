// The session registry (docs/api.md#running-sessions) and the expiry cuts scheduled on it.
import type { Session, SessionEndReason } from '../contracts/session.js';
import type { SessionLimits } from '../domain/store-rules.js';

export type { Session, SessionEndReason, SessionLimits };

export type AdmitResult =
  | { admitted: true; /** Publishers this admission replaced, already ended in the registry. */ replaced: Session[] }
  | { admitted: false; reason: 'session_limit' | 'uses_exhausted' | 'stream_taken' | 'token_changed' };

export interface SessionFilter {
  streamName?: string;
  tokenId?: number;
  action?: 'publish' | 'subscribe';
}

/** One session of a touchSessions call: its caller id, the time it was seen, and its account where known. */
export interface SessionTouch {
  sessionId: string;
  at: string;
  accountId?: string;
}

export interface SessionStore {
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
  /**
   * The session (live, or ended and still kept: endedReason set), else null. A lookup by caller id
   * that names `accountId` finds only that account's session; an HTTP viewer session is found only
   * with its account named (sessionLookupFinds in domain/store-rules.ts). The same holds for
   * touchSession, touchSessions and endSession.
   */
  getSession(caller: string, sessionId: string, accountId?: string): Promise<Session | null>;
  /** By registry id, in this account only (live, or ended and still kept), else null. */
  getSessionById(accountId: string, id: string): Promise<Session | null>;
  /**
   * A re-ask: a live session's lastSeenOn becomes `at` and it lives `ttlSeconds` more; an ended
   * one is answered as it is (endedReason set); null when unknown.
   */
  touchSession(caller: string, sessionId: string, ttlSeconds: number, at: string, accountId?: string): Promise<Session | null>;
  /**
   * touchSession for many sessions of one caller (a viewer-session round), each with its own `at`:
   * the answers in the order asked, each as touchSession would give it. Not one atomic step: each
   * session's touch is, as touchSession's. Optional: a backend without it is touched one session at
   * a time (touchSessions below).
   */
  touchSessions?(caller: string, touches: ReadonlyArray<SessionTouch>, ttlSeconds: number): Promise<Array<Session | null>>;
  /**
   * Ends a live session atomically: exactly one concurrent caller (on any instance) gets it back,
   * with endedReason and endedOn set; the others get null. The ended record is kept `keepSeconds`.
   */
  endSession(caller: string, sessionId: string, end: { reason: SessionEndReason; at: string; keepSeconds: number }, accountId?: string): Promise<Session | null>;
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
}

/**
 * Touches many sessions of one caller: the backend's touchSessions where it has one, else
 * touchSession for each, side by side. The answers in the order asked.
 */
export function touchSessions(store: SessionStore, caller: string, touches: ReadonlyArray<SessionTouch>, ttlSeconds: number): Promise<Array<Session | null>> {
  if (store.touchSessions) return store.touchSessions(caller, touches, ttlSeconds);
  return Promise.all(touches.map((t) => store.touchSession(caller, t.sessionId, ttlSeconds, t.at, t.accountId)));
}
