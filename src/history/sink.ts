// Where the decision history is kept (docs/api.md#decision-history): apart from the serving data, a
// SQLite file of its own (sqlite-history.ts) or a capped Redis stream per account (redis-history.ts).
import type { DecisionEntry, DecisionPage, DecisionQuery } from './entry.js';

/** What a sink keeps, from history.*: applied by prune(). */
export interface Retention {
  maxPerAccount: number;
  maxAgeSeconds: number;
  /** A client address is removed from its entry once the entry is this old (0: never stored). */
  addressSeconds: number;
}

/**
 * How long an erasure holds back entries made before it that instances still had queued (far
 * longer than any instance holds a queue): a sink writes none of them after the erasure.
 */
export const ERASURE_HELD_MS = 3_600_000;

export interface HistorySink {
  /**
   * Appends a batch (any accounts, oldest first), leaving out an account's entries made at or
   * before its erasure (deleteAccount) within ERASURE_HELD_MS. Rejects when the backend does not
   * answer: the batch is dropped and counted.
   */
  append(batch: readonly DecisionEntry[]): Promise<void>;
  /** One account's entries matching `q`, newest first. */
  query(accountId: string, q: DecisionQuery): Promise<DecisionPage>;
  /** Drops what its retention says is past (age, count per account, addresses), at `now` (ms). */
  prune(now: number): Promise<void>;
  /** The accounts the history holds entries of. */
  accounts(): Promise<string[]>;
  /** Everything kept of an account (its deletion), at `now` (ms); entries made until then and appended later are left out. */
  deleteAccount(accountId: string, now: number): Promise<void>;
  close(): Promise<void>;
}
