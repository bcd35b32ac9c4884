// Marks: short-lived values every instance sees (the viewerConnection webhooks' timing).

export interface MarkStore {
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
