// The codes the Lua scripts in ./lua answer, by name: the one table of their values. The loader
// (lua-loader.ts) gives each script the codes it names as a prelude `local Reply = {...}` built from
// this table, so a number is written here only. A script answers a code alone, or a table whose
// first element is a code and whose rest is the payload its header describes
// (docs/architecture.md#redis-scripts). Every reading of a code is below.
import type { AdmitResult, BindResult } from '../store.js';

export const Reply = {
  /** The script did its work. */
  DONE: 1,
  /** What the caller read has changed since (a compare-and-set lost): read again and retry. */
  MOVED: 0,
  /** The record does not exist. */
  GONE: -1,
  /** What the script would add exists already (a record, a counted report, a bound address): nothing written. */
  EXISTS: -2,
  /**
   * The script needs keys it was not given: nothing written; the payload names what to build them
   * from, and the caller calls again with them added (the session admission's protocol).
   */
  NEEDS_KEYS: -3,
  /** The session has ended already. */
  ENDED: -4,
  /** A bind on usage: the token's bound addresses are at its limit. */
  FULL: -5,
  /** An admission: the token is no longer at the revision the decision read. */
  TOKEN_CHANGED: -6,
  /** An admission: the token's maxUses admissions are used up. */
  USES_EXHAUSTED: -7,
  /** An admission: another connection publishes the stream (publish conflict reject). */
  STREAM_TAKEN: -8,
  /** An admission: the token's maxConcurrentSessions are live. */
  SESSION_LIMIT: -9,
  /**
   * A sealed write: the account's audit head moved since the caller read it (another change was
   * recorded first): nothing written; seal again on the new head and retry (docs/api.md#audit-log).
   */
  AUDIT_MOVED: -10,
} as const;

export type ReplyName = keyof typeof Reply;
export type ReplyCode = (typeof Reply)[ReplyName];

/** Whether a sealed write's script refused because the audit head moved (seal again and retry). */
export const auditMoved = (reply: unknown): boolean => codeOf(reply) === Reply.AUDIT_MOVED;

/** The code of a script's answer: the answer itself, or the first element of a table. */
export function codeOf(reply: unknown): number {
  return Number(Array.isArray(reply) ? reply[0] : reply);
}

/** A script's answer that no reading below expects: a fault of the script or of its caller. */
export function unexpectedReply(script: string, reply: unknown): Error {
  return new Error(`${script}: unexpected reply ${JSON.stringify(reply)}`);
}

/** One compare-and-set step's outcome: settled with a value, or to be tried again on a fresh read. */
export type CasStep<T> = { done: T } | 'retry';

/**
 * Reads a compare-and-set script's answer: DONE settles with `onDone` (given the new revision when
 * the payload has one), GONE with `onGone`, MOVED asks for another attempt.
 */
export function casReply<T>(reply: unknown, onDone: (rev: number) => T, onGone: () => T): CasStep<T> {
  const code = codeOf(reply);
  if (code === Reply.DONE) return { done: onDone(Array.isArray(reply) ? Number(reply[1]) : Number.NaN) };
  if (code === Reply.GONE) return { done: onGone() };
  if (code === Reply.MOVED) return 'retry';
  throw unexpectedReply('compare-and-set', reply);
}

/** bind-address.lua's answer: the token gone or at another revision is 'stale' alike. */
export function bindResult(reply: unknown): BindResult {
  switch (codeOf(reply)) {
    case Reply.DONE:
      return 'bound';
    case Reply.EXISTS:
      return 'already';
    case Reply.FULL:
      return 'full';
    case Reply.GONE:
    case Reply.MOVED:
      return 'stale';
    default:
      throw unexpectedReply('bind-address', reply);
  }
}

type Refusal = Extract<AdmitResult, { admitted: false }>['reason'];

/** session-admit.lua's refusals, by code. */
const REFUSALS = new Map<number, Refusal>([
  [Reply.TOKEN_CHANGED, 'token_changed'],
  [Reply.USES_EXHAUSTED, 'uses_exhausted'],
  [Reply.STREAM_TAKEN, 'stream_taken'],
  [Reply.SESSION_LIMIT, 'session_limit'],
]);

/** The refusal an admission's code means, else undefined (DONE, NEEDS_KEYS). */
export function admissionRefusal(code: number): Refusal | undefined {
  return REFUSALS.get(code);
}
