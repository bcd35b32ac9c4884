// A session of the registry as callers, lifecycle events and the store see it (docs/api.md#running-sessions).
/** Why a session ended (docs/api.md#running-sessions): the `endedReason` of the registry and of feeds `ended`. */
export type SessionEndReason = 'done' | 'expired' | 'stopped' | 'token_revoked' | 'token_expired' | 'replaced' | 'secret_deleted' | 'shared';

/** A publish or play session admitted through a caller: the session registry's record (docs/api.md#running-sessions). */
export interface Session {
  /** The registry's id (what /api/sessions names): unique, random, never reused. */
  id: string;
  /** The adapter that admitted it (nginx-rtmp, mediamtx, srs, ome, ...). */
  caller: string;
  /** The caller's own id for the connection (MediaMTX id, SRS client_id, ...), qualified by server where ids repeat. */
  sessionId: string;
  action: 'publish' | 'subscribe';
  accountId: string;
  streamName: string;
  tokenId?: number;
  trackingId?: string;
  /** A credential issuer's subject, as the decision named it (docs/api.md#token-sharing). */
  subject?: string;
  /** For publish sessions: the feed this session started. */
  feedId?: string;
  clientIp?: string;
  /** rtmp, rtsp, srt, webrtc, ... as the caller said. */
  protocol?: string;
  /** The address the admitting hook request came from: which media server holds the connection. */
  serverAddress?: string;
  /** The parts the caller's API takes to act on the connection (src/sessions/drivers). */
  native?: Record<string, string>;
  startedOn: string;
  /** Last admission or re-ask (nginx-rtmp on_update): the session expires liveTtlSeconds after it. */
  lastSeenOn: string;
  /** Set once ended: the record is kept a while (see endSession) so late reports and re-asks find it. */
  endedReason?: SessionEndReason;
  endedOn?: string;
}
