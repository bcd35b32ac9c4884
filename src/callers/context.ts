// The narrow set of services callers get (src/callers/caller.ts, CallerContext), made from the
// application's services in one place: the only reads of the store a caller needs happen here,
// behind the context's methods, never in a caller module.
import type { Services } from '../services.js';
import type { TrustedProxies } from '../http/client.js';
import { tokenHash } from '../domain/tokens.js';
import type { CallerContext } from './caller.js';

export function callerContext(s: Services, trusted: TrustedProxies): CallerContext {
  return {
    config: s.config,
    logger: s.logger,
    trusted,
    admit: (caller, a, serverAddress) => {
      if (a.reask) return s.sessions.reask(caller, a, (admit) => s.enforcer.decide(a.access, caller, admit), serverAddress);
      // What an allow starts: a session the registry keeps, or (HTTP callers, no connection named) nothing it can count.
      const access = { ...a.access, admission: a.starts && a.access.sessionId !== undefined ? 'session' : 'none' } as const;
      const run = s.sessions.begin(caller, { ...a, access }, serverAddress);
      return s.enforcer.decide(access, caller, run.admit).then((d) => {
        run.settle(d);
        return s.sessions.withLifetime(d);
      });
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
