// What callers and sessions know of an admission (src/admission/pipeline.ts): the request a caller
// hands over with its session identity, the decision it gets back, and the step a session control
// runs inside the decision. Types only: no layer depends on the pipeline itself through them.
import type { AccessRequest, Decision, Reason } from './decision.js';
import type { ViewerSessionRef } from './viewer-credential.js';

export interface DecisionResult extends Decision {
  decisionId: string;
  /** An HTTP viewer session's credential (docs/callers.md#http-viewer-sessions): the Set-Cookie value, and the bare value when sessions.http.queryParam asks for it. */
  viewer?: { setCookie: string; credential?: string };
}

/**
 * What a caller is told when a step after the policy decided it (an admission refused, a running
 * session kept, a viewer credential's problem), and why: the decision log's `rule` and `detail`
 * (docs/api.md#decision-metrics-and-logs). Never a token value or secret.
 */
export interface Answer {
  decision: Decision;
  rule: string;
  detail: string;
}

/**
 * A step after an allow that may refuse it (src/sessions/control.ts); store calls through `timed`.
 * A refusal comes as an Answer naming why. 'token_changed': the token is no longer at the revision
 * decided on (Decision.tokenRev): nothing was registered, and the decision is made again on the
 * current record.
 */
export type Admitter = (d: Decision, timed: <T>(p: Promise<T>) => Promise<T>) => Promise<Decision | Answer | 'token_changed'>;

/** The check that refused a decision, as a step after the policy reads it (the policy's RuleOutcome has this shape). */
export interface FailedRule {
  rule: string;
  reason: Reason;
  detail?: string;
}

/** The admission step the pipeline runs after an allow (SessionControl.begin's AdmissionRun is one). */
export interface AdmissionStep {
  admit?: Admitter;
  /**
   * Whether `admit` would leave this decision as it is without a store step. When it would not,
   * its store step checks the token's revision (SessionLimits.tokenRev), which confirms a decision
   * made on a cached record the account version did not check. Absent: never assumed.
   */
  passes?(d: Decision): boolean;
  /**
   * What the caller is told of the final decision, when that is not the decision itself (a re-ask
   * that keeps a running session; a viewer credential's problem): given the decision and, for a
   * refusal, the rule that failed. Undefined: the decision as it is. Runs before the decision is
   * counted and logged, so the metrics and the log line say what the caller was told.
   */
  answer?(d: Decision, failed: FailedRule | undefined): Answer | undefined | Promise<Answer | undefined>;
}

/**
 * How a caller names one of its connections, in its own terms: `id` is the key the session
 * registry keeps (qualified so it is unique across the caller's servers), `native` the parts the
 * caller's own API takes to act on the connection (MediaMTX `id`; SRS `server_id` + `client_id`;
 * nginx-rtmp server address + `clientid`; OvenMediaEngine address, port and URL).
 */
export interface SessionIdentity {
  id: string;
  native: Readonly<Record<string, string>>;
}

/** An access request to decide, and what the caller's answer needs to know about it. */
export interface Admission {
  access: AccessRequest;
  session?: SessionIdentity;
  /** On allow, a session starts (false for a re-ask of an admitted connection). */
  starts: boolean;
  /** The caller asks again for a connection it admitted: enforcement.terminateOn decides whether a refusal ends it. */
  reask?: boolean;
  /**
   * A request on a session the caller started earlier (a WHIP/WHEP PATCH or DELETE on its session
   * URL): decided with its credential, but nothing starts and the token's session limits are not
   * counted again (docs/callers.md#whip-and-whep-behind-auth_request).
   */
  resource?: true;
  /** The request carried a credential of some kind (user, password or token): MediaMTX challenges only without one. */
  credentialsGiven: boolean;
  /**
   * An HTTP request that starts a viewer session on allow (sessions.http): `presented` is the
   * token or JWT it carries; the allow then carries the session's credential (setCookie).
   */
  viewer?: { presented: string; previous?: ViewerSessionRef };
  /**
   * The request's viewer credential did not hold and it carried no token: it is decided without
   * one (an open stream is still served), and a refusal names the credential's problem.
   */
  credentialProblem?: Reason;
}

/** A re-asked admission's decision (SessionControl.reask), and whether its session must be registered again. */
export interface Reasked {
  decision: DecisionResult;
  /** Allowed, and the registry no longer knows the running connection (its entry lapsed, or the store was replaced). */
  registerAgain: boolean;
}
