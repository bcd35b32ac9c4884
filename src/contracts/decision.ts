// The vocabulary of a decision that callers and the policy share: what is asked (AccessRequest),
// what is answered (Decision), and the stable reason codes used in responses, logs and metrics
// (docs/api.md#reasons).
export type Action = 'publish' | 'subscribe';

/**
 * The action a MediaMTX action word asks a decision for (its auth hook's `action`, an entry of a
 * MediaMTX-style permissions claim): undefined for `api`, `metrics`, `pprof` and any other word. A
 * Map, not an object: a word like `toString` must find nothing.
 */
const MEDIAMTX_ACTIONS: ReadonlyMap<string, Action> = new Map([
  ['publish', 'publish'],
  ['read', 'subscribe'],
  ['playback', 'subscribe'],
]);
export const mediamtxAction = (word: string): Action | undefined => MEDIAMTX_ACTIONS.get(word);

export interface AccessRequest {
  action: Action;
  /** A token value or a self-signed JWT, as presented. */
  token?: string;
  /**
   * The request's signed URL, cookies or CAT, as its caller packed them for the account's signed-URL
   * issuers (docs/api.md#signed-url-issuers; src/policy/signed.ts encodeSigned); only when no token
   * was presented. Never taken from a presented value.
   */
  signed?: string;
  streamName: string;
  /** The stream's account when no token decides it (path prefix, streamAccountId, default). */
  accountId?: string;
  /** Normalised: IPv4-mapped IPv6 already turned into IPv4. */
  clientIp?: string;
  /** Lower-case host of the Origin (else Referer) header. */
  origin?: string;
  /** ISO country when a trusted source (CDN header, probe) says so; else looked up from clientIp. */
  country?: string;
  /** rtmp, rtsp, srt, webrtc, hls, ... as the caller says. */
  protocol: string;
  sessionId?: string;
  /**
   * What an allow starts (docs/api.md#session-limits): 'session' — a session the registry keeps
   * (media-server callers: limits are counted at admission); 'none' — nothing the registry can
   * keep (auth_request and other HTTP callers: a token with limits is refused); absent — not an
   * admission (the director, the check endpoint); 'resource' — a request on a session the caller
   * admitted before (a WHIP/WHEP PATCH or DELETE): nothing starts, and limits were counted then.
   */
  admission?: 'session' | 'none' | 'resource';
}

export const REASONS = {
  allowed: { status: 200, message: 'Allowed' },
  token_required: { status: 401, message: 'Unauthorized: Token required' },
  token_invalid: { status: 401, message: 'Unauthorized: Invalid token' },
  token_disabled: { status: 401, message: 'Unauthorized: Token disabled' },
  token_expired: { status: 401, message: 'Unauthorized: Token expired' },
  stream_not_allowed: { status: 403, message: 'Unauthorized: Stream name not allowed' },
  origin_not_allowed: { status: 403, message: 'Unauthorized: Origin not allowed' },
  ip_not_allowed: { status: 403, message: 'Unauthorized: IP Address not allowed' },
  country_not_allowed: { status: 403, message: 'Unauthorized: Country not allowed' },
  session_limit: { status: 403, message: 'Unauthorized: Too many sessions for this token' },
  uses_exhausted: { status: 403, message: 'Unauthorized: Token already used' },
  stream_taken: { status: 403, message: 'Unauthorized: Stream already being published' },
  session_terminated: { status: 403, message: 'Unauthorized: Session terminated' },
  session_ended: { status: 401, message: 'Unauthorized: Viewer session ended, ask again with the token' },
  credential_invalid: { status: 401, message: 'Unauthorized: Invalid session credential' },
  credential_expired: { status: 401, message: 'Unauthorized: Session credential expired' },
  credential_address: { status: 403, message: 'Unauthorized: Session credential presented from another address' },
  signature_invalid: { status: 403, message: 'Unauthorized: Invalid signature' },
  signature_expired: { status: 403, message: 'Unauthorized: Signature expired' },
  store_unavailable: { status: 503, message: 'Service Unavailable: token store unreachable' },
} as const;

export type Reason = keyof typeof REASONS;

export interface Decision {
  allowed: boolean;
  status: 200 | 401 | 403 | 503;
  reason: Reason;
  message: string;
  /** The account the stream belongs to, when known. */
  accountId?: string;
  streamName: string;
  tokenId?: number;
  trackingId?: string;
  /** The token was a self-signed JWT (tokenId is its parent's). */
  selfSigned?: boolean;
  /** The credential was a JWT of this credential issuer (tokenId is its policy token's: docs/api.md#credential-issuers). */
  issuerId?: number;
  /**
   * The issuer credential's subject, `<claim>:<value>` (`sub:alice`, `id:abc`): what token sharing
   * counts its uses under and its live sessions carry (docs/api.md#token-sharing).
   */
  subject?: string;
  /** The credential was a signed URL, cookie set or CAT of that issuer (docs/api.md#signed-url-issuers), not a JWT. */
  signedUrl?: boolean;
  /**
   * That credential must come with every request: it signs one object or restricts what a viewer
   * session cannot carry (methods, a query), or it may be used once. No session credential stands for it.
   */
  signedEach?: boolean;
  /** The token's originCluster (a self-signed token's parent's), when set: the director's pick of cluster (docs/api.md#clusters). */
  originCluster?: string;
  /** Publish token flags the director passes on to media servers. */
  record?: boolean;
  subscribeRequiresAuth?: boolean;
  /** The token's expiry (a self-signed token's parent's), for a caller that bounds a session's lifetime. */
  expiresOn?: string;
  /** Milliseconds a session admitted now may run: the token's time left, when expiry ends sessions (enforcement.terminateOn expire). */
  lifetimeMs?: number;
  /** The token's session limits, for the admission that follows an allow (docs/api.md#session-limits). */
  limits?: { maxConcurrent?: number; maxUses?: number };
  /** The revision of the token record decided on (a self-signed token's parent's): the admission that follows checks it is still current. */
  tokenRev?: number;
  /**
   * The token (a self-signed token's parent) has rules a connection's own admission applies: session
   * limits (counted), bind on usage (the connecting address), a held address (a cut session's hold).
   * Only a media server that asks Streamgate applies them, so without director.admits the director's
   * JWT carries no MediaMTX permission for it (docs/api.md#director-api-browser-sdks).
   */
  admissionRules?: true;
}

export function decision(reason: Reason, fields: Omit<Decision, 'allowed' | 'status' | 'reason' | 'message'>): Decision {
  const r = REASONS[reason];
  return { allowed: reason === 'allowed', status: r.status, reason, message: r.message, ...fields };
}
