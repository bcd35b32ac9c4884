// What an HTTP caller asks of the viewer sessions about a credential (cookie) it read, and the answer
// (src/sessions/viewer-sessions.ts checks it).
import type { Reason } from './decision.js';

/** A credential check: allowed (maybe with a refreshed credential), or why not. */
export type CredentialCheck =
  | { ok: true; tokenId: number; accountId: string; trackingId?: string; refresh?: string }
  /** `reason` undefined: the credential does not speak for this request (another stream or token): decide in full. */
  | {
      ok: false;
      reason?: Reason;
      /**
       * The viewer session this credential was for, when the request also carries the token it was
       * granted on: the same viewer asking again (a new address, an expired credential), whose
       * old session ends before the new one is counted.
       */
      previous?: ViewerSessionRef;
    };

/** A viewer session, as its credential names it: its id (the registry's callerSessionId) and its account. */
export interface ViewerSessionRef {
  sessionId: string;
  accountId: string;
}

/** What a check knows of the request. */
export interface CredentialRequest {
  action: 'publish' | 'subscribe';
  streamName: string;
  accountId?: string;
  clientIp?: string;
  /** The country a trusted proxy reports for the client (geo.trustedHeader), read only when a rule needs it. */
  country?: () => string | undefined;
  /** The request's origin (host of Origin, else Referer), read only when an origin rule applies. */
  origin?: () => string | undefined;
  /** The token (or JWT) the request also carries, if any. */
  presented?: string;
}
