// What the suite's tests build their records from (the clock they start at, an account, a token, a
// session record) and how they match a store's rejection.
import { newTokenRecord, type TokenKind } from '../domain/tokens.js';
import { newSecret } from '../domain/secrets.js';
import type { Account, Session } from '../store/store.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');

export const account = (id: string, extra: Partial<Account> = {}): Account => ({
  id,
  name: `acct ${id}`,
  createdOn: new Date(T0).toISOString(),
  secureViewer: false,
  ...extra,
});

export function tok(accountId: string, kind: TokenKind, label: string, addedMs = T0, extra: Record<string, unknown> = {}) {
  return newTokenRecord(kind, accountId, { label, streams: [{ streamName: 'cam1' }], ...extra }, newSecret(), addedMs);
}

/**
 * A registry session record: a MediaMTX subscriber of cam1 unless `over` says otherwise, started and
 * last seen at `at` (ms), its id derived from the caller and connection id.
 */
export function sessionRecord(over: Partial<Session> & { sessionId: string }, at = Date.now()): Session {
  return {
    id: `id-${over.caller ?? 'mediamtx'}-${over.sessionId}`,
    caller: 'mediamtx',
    action: 'subscribe',
    accountId: 'acc',
    streamName: 'cam1',
    startedOn: new Date(at).toISOString(),
    lastSeenOn: new Date(at).toISOString(),
    ...over,
  };
}

/** The names of the errors a store rejects with (src/errors.ts). */
export type StoreErrorName = 'AccountExists' | 'AccountNameTaken' | 'IssuerConflict' | 'IssuerChanged' | 'StoreConflict' | 'StoreUnavailable';

/**
 * What `assert.rejects` matches a store's error by: its name, never its class. The backend may load
 * another copy of this package than the suite does (its sources, its build, another install), or
 * throw an error class of its own with the same name; `instanceof` would tell those apart.
 */
export const named = (name: StoreErrorName) => ({ name });
