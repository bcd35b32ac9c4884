// Lifecycle signals from the callers (publish/play started and ended, recordings, thumbnails),
// and the public events they become (the shapes webhooks deliver, docs/api.md#events).
import type { Session, SessionEndReason } from '../contracts/session.js';

/**
 * An admission's store step found the session's token at the revision the decision was made on
 * (SessionLimits.tokenRev): no change slipped in before the session was registered. The token's
 * expiry, as the decision read it.
 */
export interface TokenChecked {
  expiresOn: string | undefined;
}

/** What an adapter reports. Processed after the caller has its answer (never on the decision path). */
export type LifecycleSignal =
  | {
      kind: 'session_started';
      caller: string;
      sessionId?: string;
      action: 'publish' | 'subscribe';
      accountId: string;
      streamName: string;
      tokenId?: number;
      trackingId?: string;
      /** The registry's record of the session (absent: the caller names no connection). */
      record?: Session;
      /** The record was registered at admission (a token with limits): only the rest is left to do. */
      registered?: boolean;
      /** That admission checked the token's revision (no registry check needs to read the token). */
      tokenChecked?: TokenChecked;
      /** How long the record lives without a touch, when not enforcement.liveTtlSeconds (HTTP viewers: sessions.http.idleSeconds). */
      ttlSeconds?: number;
    }
  | {
      kind: 'session_ended';
      caller: string;
      sessionId?: string;
      /** When the caller says which; else the session registry does. */
      action?: 'publish' | 'subscribe';
      accountId?: string;
      streamName?: string;
      /** The token the caller repeated on its done call: names the account when no session does. */
      token?: string;
      /** Streamgate ended it (a cut): the record as ended in the registry; its events are still to send. */
      ended?: Session;
    }
  | {
      kind: 'recording';
      event: 'started' | 'completed' | 'deleted';
      caller: string;
      sessionId?: string;
      accountId?: string;
      streamName: string;
      tokenId?: number;
      path?: string;
      metadata?: Record<string, unknown>;
      /** The publisher's token, when the caller repeats it: names account and token. */
      token?: string;
      /** For 'deleted': the recording removed (already removed when it came from the API). */
      recordingId?: number;
      alreadyDeleted?: boolean;
      /** For 'deleted' when already removed: when the recording was made (ISO 8601). */
      recordedOn?: string;
    }
  | {
      kind: 'usage';
      caller: string;
      sessionId: string;
      bytesOut: number;
      bytesIn: number;
    }
  | {
      /** Sixty seconds have passed since a stream's last viewer left (queued by the lifecycle itself). */
      kind: 'no_viewers';
      accountId: string;
      streamName: string;
      /** The departure's mark: NoActiveViewers goes out only while the stream's viewers mark still holds it. */
      departure: string;
    }
  | {
      kind: 'thumbnail';
      accountId: string;
      streamName: string;
      tokenId?: number;
      feedId?: string;
      contentType: string;
      image: Buffer;
    };

export interface FeedEvent {
  type: 'feeds';
  event: 'started' | 'ended';
  timestamp: number;
  data: {
    feedId: string;
    accountId: string;
    name: string;
    streamId: string;
    started?: number;
    active: boolean;
    ended?: number;
    tokenId?: number;
    /** Streamgate's: why the feed ended (`ended` only): done, expired, stopped, token_revoked, token_expired, replaced, secret_deleted, shared. */
    reason?: SessionEndReason;
  };
}

export interface RecordingEvent {
  type: 'recording';
  event: 'started' | 'completed' | 'deleted';
  timestamp: number;
  data: {
    recordingId: number;
    tokenId?: number;
    streamName: string;
    streamId: string;
    recordedOn: number;
    removedOn?: number;
    path?: string;
    metadata?: Record<string, unknown>;
  };
  accountId: string;
}

export interface ThumbnailEvent {
  type: 'thumbnail';
  timestamp: number;
  accountId: string;
  streamName: string;
  streamId: string;
  feedId?: string;
  tokenId?: number;
  contentType: string;
  image: Buffer;
  /** A test send: delivered to thumbnail webhooks without the enableThumbnails check. */
  test?: boolean;
}

export interface SessionEvent {
  type: 'session';
  event: 'started' | 'ended';
  timestamp: number;
  caller: string;
  sessionId?: string;
  /** The registry's id (docs/api.md#running-sessions), when the caller names its connections. */
  id?: string;
  clientIp?: string;
  /** Why it ended (`ended` only). */
  reason?: SessionEndReason;
  action: 'publish' | 'subscribe';
  accountId?: string;
  streamName: string;
  tokenId?: number;
  trackingId?: string;
}

/**
 * The hosted viewerConnection webhook events, from viewer sessions: ViewerAttempt for a stream not
 * live, FirstViewerConnection when a watch of a live stream begins, NoActiveViewers 60 s after its
 * last viewer left (docs/api.md#viewer-connection-events).
 */
export interface ViewerConnectionEvent {
  type: 'viewerConnection';
  event: 'ViewerAttempt' | 'FirstViewerConnection' | 'NoActiveViewers';
  timestamp: number;
  accountId: string;
  /** The stream name (what a webhook's filter is matched against). */
  filterName: string;
  data: { name: string; accountId: string; streamId: string };
}

/**
 * Streamgate's tokenSharing webhook event (docs/api.md#token-sharing): a credential flagged as
 * shared, once per credential and window, with what the window held and the action taken.
 */
export interface TokenSharingEvent {
  type: 'tokenSharing';
  event: 'Flagged';
  timestamp: number;
  accountId: string;
  /** What a webhook's filter is matched against: the token's label. */
  filterName: string;
  data: {
    accountId: string;
    tokenId: number;
    tokenType: 'publish' | 'subscribe';
    label: string;
    /** The signals over the policy's limits: addresses, networks, asns, countries, travel. */
    flags: string[];
    action: 'notify' | 'limit' | 'disable';
    windowSeconds: number;
    addresses: number;
    networks: number;
    asns: number;
    countries: number;
    /** The countries seen in the window. */
    countryCodes: string[];
    travel?: { fromCountry?: string; toCountry?: string; km: number; kmh: number };
    /** A credential issuer's subject: its issuer, the subject and the claim it was read from (tokenId is the policy token's). */
    issuerId?: number;
    subject?: string;
    subjectClaim?: 'sub' | 'jti' | 'id' | 'viewer';
  };
}

export type PublicEvent = FeedEvent | RecordingEvent | ThumbnailEvent | SessionEvent | ViewerConnectionEvent | TokenSharingEvent;
