// Rules every store backend applies the same way, as pure functions: both stores call them (the
// Redis bind script mirrors bindDecision inside Redis, where it must run to stay atomic).
import type { Recording, NewRecording } from '../store/store.js';

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
  if (open === null) return { ...done, status: 'completed' };
  return { ...open, ...done, recordedOn: open.recordedOn, tokenId: done.tokenId ?? open.tokenId, status: 'completed', id: open.id };
}
