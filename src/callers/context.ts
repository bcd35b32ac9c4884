// The narrow set of services callers get (src/callers/caller.ts, CallerContext), made from the
// application's services in one place: the only reads of the store a caller needs happen here,
// behind the context's methods, never in a caller module.
import type { Services } from '../services.js';
import type { TrustedProxies } from '../http/client.js';
import { tokenHash } from '../domain/tokens.js';
import type { CallerContext } from './caller.js';
import { decision } from '../policy/types.js';
import { terminationTrigger } from '../sessions/termination.js';

export function callerContext(s: Services, trusted: TrustedProxies): CallerContext {
  return {
    config: s.config,
    logger: s.logger,
    trusted,
    decide: (access, caller) => s.enforcer.decide(access, caller),
    decideReask: async (access, caller) => {
      const d = await s.enforcer.decide(access, caller);
      if (d.allowed) return d;
      // A store that does not answer must not cut every running stream: the session keeps going.
      if (d.reason !== 'store_unavailable') {
        const session = access.sessionId ? await s.store.getSession(caller, access.sessionId).catch(() => null) : null;
        const trigger = await terminationTrigger(d.reason, async () =>
          session?.tokenId !== undefined ? (await s.store.findTokenById(session.tokenId).catch(() => null)) !== null : false,
        );
        if (trigger !== undefined && s.config.enforcement.terminateOn.includes(trigger)) return d;
      }
      return { ...d, ...decision('allowed', { streamName: d.streamName, accountId: d.accountId, tokenId: d.tokenId }) };
    },
    signal: (sig) => s.lifecycle.signal(sig),
    sessionOf: (caller, sessionId) => s.store.getSession(caller, sessionId).catch(() => null),
    // Read fresh (not from the decision cache): a publisher that started elsewhere is rare, and must be current.
    publishTokenOf: (value) =>
      s.enforcer.lookup.byHashFresh(tokenHash(value)).then(
        (t) => (t !== null && t.kind === 'publish' ? t : null),
        () => null,
      ),
    ingestUsage: (r) => s.usage.ingest(r),
    pollUsage: () => void s.poller?.pollOnce(),
  };
}
