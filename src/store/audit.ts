// The audit aggregate: each account's chain of management changes (docs/api.md#audit-log). Entries
// are appended by the management writes themselves, in the same atomic step as the change (a
// SQLite transaction, one Redis script): every write method of the other aggregates that changes
// what an account manages takes an optional trailing AuditSealer, which the backend calls with the
// record before and after the change and the account's head read in that step, and stores the
// sealed entry it answers beside the change, or nothing at all (docs/architecture.md#the-audit-chain).
// This interface holds the rest: an entry of its own (a change the store does not hold), the reads,
// retention and the removal of an account's chain. The HMAC key never reaches the store.
import type { AuditAnchor, AuditEntry, AuditHead, AuditSealer } from '../domain/audit.js';

export type { AuditAnchor, AuditEntry, AuditHead, AuditSealer } from '../domain/audit.js';

/**
 * How far apart the clocks of the instances writing one chain may be: entries are numbered in the
 * order they were made, and their times may step back by this much from one entry to the next.
 */
export const AUDIT_CLOCK_ALLOWANCE_MS = 300_000;

/** A page of an account's entries. */
export interface AuditQuery {
  /** Only entries of this resource (account, publishToken, ...). */
  resource?: string;
  /** Only entries of this actor. */
  actor?: string;
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** Newest first: entries below this seq; oldest first: above it. */
  cursor?: number;
  limit: number;
  /** Oldest first (exports) instead of newest first. */
  ascending?: boolean;
}

/** An entry as stored: its place in the store's order and its text, exactly as kept (verify reads these). */
export interface StoredAudit {
  /** The seq the store files it under (SQLite's column, Redis's score). */
  pos: number;
  text: string;
}

/** The ends of an account's chain: its last entry, and the last one retention removed. */
export interface AuditEnds {
  head: AuditHead | null;
  anchor: AuditAnchor | null;
}

export interface AuditStore {
  /**
   * Appends one entry sealed on the account's current head, alone (a change the store does not
   * hold, such as a session cut), atomically: concurrent appends and sealed writes of the account
   * never share a seq or leave a gap. Answers the entry stored.
   */
  appendAudit(accountId: string, seal: AuditSealer<null>): Promise<AuditEntry>;
  /**
   * A page of the account's entries matching the query, newest first (or oldest first), parsed
   * from what is stored; an entry whose text does not parse is left out (verify names it).
   */
  listAudit(accountId: string, q: AuditQuery): Promise<AuditEntry[]>;
  /** Up to `limit` stored entries after position `after` (0: from the start), in the store's order: what verify walks. */
  auditEntries(accountId: string, after: number, limit: number): Promise<StoredAudit[]>;
  /** The account's head and anchor (null when the account has no chain, or nothing was pruned). */
  auditEnds(accountId: string): Promise<AuditEnds>;
  /**
   * Removes the account's oldest entries, up to (not including) the first entry made at or after
   * `before` (epoch ms), and keeps the last removed one (its seq, MAC and text, and the MAC of the
   * entry before it) as the anchor the rest verifies from; atomically. Answers how many were removed.
   */
  pruneAudit(accountId: string, before: number): Promise<number>;
  /** Removes the account's whole chain: entries, head and anchor. */
  deleteAccountAudit(accountId: string): Promise<void>;
  /** Whether any account has a chain: a deployment whose store holds one records every management write. */
  hasAuditChains(): Promise<boolean>;
  /**
   * The accounts that have a chain, each with the time (epoch ms) of its newest entry (null when
   * none is left) and whether the account still exists: what retention and head logging walk.
   */
  auditAccounts(): Promise<Array<{ accountId: string; lastAt: number | null; exists: boolean }>>;
}
