// Store failures as types: each backend names which of its driver's errors mean "the store did not
// answer", and every Store method rethrows those as StoreUnavailable (the HTTP layer maps types).
import { StoreConflict, StoreUnavailable } from '../errors.js';
import type { Store } from './store.js';

type Method = Exclude<keyof Store, 'kind' | 'inProcess' | 'accountVersionKnown' | 'upgrade'>;

/** Every method of the Store interface (a missing or extra name is a compile error). */
const STORE_METHODS = Object.keys({
  ping: 1, close: 1,
  createAccount: 1, createFirstAccount: 1, getAccount: 1, listAccounts: 1, updateAccount: 1, setAccountSecret: 1, findAccountBySecretHash: 1,
  createToken: 1, getToken: 1, listTokens: 1, updateToken: 1, deleteToken: 1, findTokenByHash: 1, findTokenById: 1,
  securingTokens: 1, viewerRuleTokens: 1, accountVersion: 1, securedStreams: 1, removeSecuredStream: 1,
  boundAddresses: 1, bindAddress: 1,
  createIssuer: 1, getIssuer: 1, listIssuers: 1, updateIssuer: 1, deleteIssuer: 1, issuersOf: 1,
  createWebhook: 1, getWebhook: 1, updateWebhook: 1, deleteWebhook: 1, listWebhooks: 1, addDelivery: 1, listDeliveries: 1,
  startRecording: 1, completeRecording: 1, listRecordings: 1, deleteRecording: 1,
  addUsage: 1, usageByTracking: 1, usageDaily: 1, usageHourly: 1, usageAccount: 1,
  getMeta: 1, setMeta: 1,
  startLiveStream: 1, endLiveStream: 1, getLiveStream: 1, activePublishTokenIds: 1,
  startSession: 1, admitSession: 1, getSession: 1, getSessionById: 1, touchSession: 1, touchSessions: 1, endSession: 1, listSessions: 1, sessionCounts: 1,
  scheduleExpiry: 1, takeDueExpiries: 1,
  swapMark: 1, takeMark: 1,
  appendAudit: 1, listAudit: 1, auditEntries: 1, auditEnds: 1, pruneAudit: 1, deleteAccountAudit: 1, auditAccounts: 1, hasAuditChains: 1,
  recordSharing: 1, sharingUses: 1,
} satisfies Record<Method, 1>) as Method[];

/** The error a store method rejects with: typed failures pass, an unavailable driver becomes StoreUnavailable. */
function typed(e: unknown, isUnavailable: (e: unknown) => boolean): unknown {
  if (e instanceof StoreUnavailable || e instanceof StoreConflict) return e;
  return isUnavailable(e) ? new StoreUnavailable(e) : e;
}

/**
 * Wraps each Store method of `store` (own properties shadowing the prototype's) so that a driver
 * failure `isUnavailable` recognises rejects as StoreUnavailable. Costs one promise reaction per
 * call: for a backend whose calls cross the network.
 */
export function typeStoreFailures(store: Store, isUnavailable: (e: unknown) => boolean): void {
  const target = store as unknown as Record<Method, (...args: unknown[]) => Promise<unknown>>;
  const onError = (e: unknown): never => {
    throw typed(e, isUnavailable);
  };
  for (const name of STORE_METHODS) {
    const method = target[name];
    // an optional method the backend does not have stays absent
    if (typeof method !== 'function') continue;
    target[name] = (...args: unknown[]) => {
      try {
        return method.apply(store, args).then(undefined, onError);
      } catch (e) {
        return Promise.reject(typed(e, isUnavailable));
      }
    };
  }
}

/** Runs one compare-and-set step until it settles, at most `attempts` times; then StoreConflict. */
export async function compareAndSet<T>(what: string, attempts: number, step: () => Promise<{ done: T } | 'retry'>): Promise<T> {
  // bounded: many writers on one record give up with a retryable StoreConflict, never spin forever
  for (let i = 0; i < attempts; i++) {
    const r = await step();
    if (r !== 'retry') return r.done;
  }
  throw new StoreConflict(what, attempts);
}
