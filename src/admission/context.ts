// The narrow set of services callers get (src/callers/caller.ts, CallerContext), made from the
// application's services in one place: the only reads of the store a caller needs happen here,
// behind the context's methods, never in a caller module. Every admission a caller reads goes to
// the admission pipeline (src/admission/pipeline.ts, Enforcer.admit).
import { presentSigned } from '../policy/signed.js';
import type { AccountIssuers } from '../enforce/lookup.js';
import type { Services } from '../services.js';
import type { TrustedProxies } from '../domain/addresses.js';
import { tokenHash } from '../domain/tokens.js';
import type { CallerContext, ViewerCredentials } from '../callers/caller.js';
import type { Admission, AdmissionStep, DecisionResult } from '../contracts/admission.js';
import { decision, type Reason } from '../contracts/decision.js';
import type { CredentialCheck, ViewerSessionRef } from '../contracts/viewer-credential.js';
import type { ViewerSessions } from '../sessions/viewer-sessions.js';
import { ENDED_SESSION_KEEP_S } from '../domain/store-rules.js';
import { andThen } from '../callers/shared.js';
import { copyWith } from '../domain/objects.js';
import { parse as parseCookie } from 'cookie';

/**
 * An HTTP viewer's full decision: on allow a viewer session starts (registered, counted by the
 * token's limits, living sessions.http.idleSeconds past its last presentation) and the answer
 * carries its credential.
 */
async function admitViewer(
  s: Services,
  viewers: ViewerSessions,
  caller: string,
  a: Admission,
  { presented, previous }: { presented: string; previous?: ViewerSessionRef },
  serverAddress?: string,
): Promise<DecisionResult> {
  if (previous !== undefined) {
    // the same viewer asking again: its old session stops counting against the token's limits
    viewers.replaced(previous.sessionId);
    const at = new Date().toISOString();
    await s.store.endSession(caller, previous.sessionId, { reason: 'done', at, keepSeconds: ENDED_SESSION_KEEP_S }, previous.accountId).catch(() => null);
  }
  const repeat = viewers.repeatOf(presented, a.access);
  if (repeat !== undefined) {
    // the same viewer without its cookie: decided in full, no second session
    const access = copyWith(a.access, { sessionId: repeat, admission: 'session' });
    const d = await s.enforcer.admit(access, 'soon', caller);
    const again = d.allowed ? viewers.issue(d, access, repeat, presented) : undefined;
    return again === undefined ? d : withCredential(s, viewers, d, again);
  }
  const sid = viewers.newSessionId();
  const access = copyWith(a.access, { sessionId: sid, admission: 'session' });
  const d = await s.enforcer.admit(access, 'store', caller, undefined, copyWith(a, { access, starts: true }), serverAddress, s.config.sessions.http.idleSeconds);
  const credential = d.allowed ? viewers.issue(d, access, sid, presented) : undefined;
  return credential === undefined ? d : withCredential(s, viewers, d, credential);
}

/**
 * A request whose viewer credential did not hold and that carried no token: decided without one
 * (an open stream is still served), and a refusal tells the credential's problem, so the decision
 * is counted and logged as that (docs/callers.md#http-viewer-sessions).
 */
function credentialRefusal(problem: Reason): AdmissionStep {
  return {
    answer: (d, failed) =>
      d.allowed
        ? undefined
        : {
            decision: decision(problem, { streamName: d.streamName, accountId: d.accountId, tokenId: d.tokenId, trackingId: d.trackingId }),
            rule: 'viewer session credential',
            detail: `the viewer session credential did not hold (${problem}), and without a token the request is refused: ${failed?.detail !== undefined ? `${failed.detail} (${d.reason})` : d.reason}`,
          },
  };
}

function withCredential(s: Services, viewers: ViewerSessions, d: DecisionResult, credential: string): DecisionResult {
  return copyWith(d, { viewer: { setCookie: viewers.setCookie(credential), credential: s.config.sessions.http.queryParam !== '' ? credential : undefined } });
}

function viewerCredentials(s: Services, viewers: ViewerSessions): ViewerCredentials {
  return {
    cookieName: viewers.cookieName,
    queryParam: s.config.sessions.http.queryParam,
    check: (value, req) => {
      const refused = (c: CredentialCheck) => {
        if (!c.ok && c.reason !== undefined) s.metrics.credentialRefusals.inc({ reason: c.reason });
        return c;
      };
      const c = viewers.check(value, req);
      return andThen(c, refused);
    },
    answered: (caller, action, reason) => s.metrics.credentialChecked(action, caller, reason === 'allowed' ? 'allow' : 'deny', reason),
    setCookie: (credential) => viewers.setCookie(credential),
  };
}

export function callerContext(s: Services, trusted: TrustedProxies): CallerContext {
  const lifetime = (d: DecisionResult) => s.sessions.withLifetime(d);
  return {
    config: s.config,
    logger: s.logger,
    trusted,
    admit: (caller, a, serverAddress) => {
      if (a.viewer !== undefined && s.viewers !== undefined) return admitViewer(s, s.viewers, caller, a, a.viewer, serverAddress);
      // a re-ask refreshes the running session and is decided with the store
      if (a.reask) return s.enforcer.admit(a.access, 'store', caller, undefined, a, serverAddress);
      // What an allow starts: a session the registry keeps, or (HTTP callers, no connection named) nothing it can count.
      // The access request is this request's own (read() made it): marked in place, not copied.
      const access = a.access;
      access.admission = a.starts && access.sessionId !== undefined ? 'session' : a.resource ? 'resource' : 'none';
      // nothing starts (an HTTP caller's request, a check): no session to begin or settle;
      // either way a cached token is decided from memory when it can be ('soon')
      if (!a.starts) {
        const told = a.credentialProblem !== undefined ? credentialRefusal(a.credentialProblem) : undefined;
        return andThen(s.enforcer.admit(access, 'soon', caller, told), lifetime);
      }
      return andThen(s.enforcer.admit(access, 'soon', caller, undefined, a, serverAddress), lifetime);
    },
    viewers: s.viewers && viewerCredentials(s, s.viewers),
    issuerCookie: (header, accountId) => {
      const account = accountId ?? s.enforcer.defaultAccount;
      if (account === undefined) return undefined;
      const pick = (names: readonly string[]): string | undefined => {
        if (names.length === 0 || !names.some((n) => header.includes(n))) return undefined;
        const cookies = parseCookie(header);
        for (const n of names) if (cookies[n]) return cookies[n];
        return undefined;
      };
      // a store that does not answer names no cookie: the request is decided on what else it carries
      const names = s.enforcer.lookup.issuerCookieNames(account);
      return names instanceof Promise ? names.then(pick, () => undefined) : pick(names);
    },
    signedCredential: (facts, accountId) => {
      const account = accountId ?? s.enforcer.defaultAccount;
      if (account === undefined) return undefined;
      const pick = (a: AccountIssuers) => presentSigned(account, a.signed, facts);
      const set = s.enforcer.lookup.accountIssuers(account);
      return set instanceof Promise ? set.then(pick, () => undefined) : pick(set);
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
