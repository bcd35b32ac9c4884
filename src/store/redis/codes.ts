// The numbers the Lua scripts in ./lua answer besides data, by name (each script's header says
// which it can answer). A compare-and-set script answers a positive revision, MOVED or GONE.
export const Reply = {
  /** The script did its work. */
  DONE: 1,
  /** What the caller read has changed since: read again and retry (compare-and-set). */
  MOVED: 0,
  /** The record does not exist. */
  GONE: -1,
  /** A record with that key exists already: nothing written. */
  EXISTS: -2,
} as const;

/** One compare-and-set step's outcome: settled with a value, or to be tried again on a fresh read. */
export type CasStep<T> = { done: T } | 'retry';

/**
 * Reads a compare-and-set script's answer: a revision (> 0) settles with `onRev`, GONE with
 * `onGone`, MOVED asks for another attempt. Anything else is a script fault.
 */
export function casReply<T>(reply: unknown, onRev: (rev: number) => T, onGone: () => T): CasStep<T> {
  const n = Number(reply);
  if (n > 0) return { done: onRev(n) };
  if (n === Reply.GONE) return { done: onGone() };
  if (n === Reply.MOVED) return 'retry';
  throw new Error(`unexpected compare-and-set reply ${String(reply)}`);
}
