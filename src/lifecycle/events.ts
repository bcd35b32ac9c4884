// Lifecycle signals from the callers (publish/play started and ended, recordings, thumbnails),
// and the public events they become (the shapes webhooks deliver, docs/api.md#events).

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
    }
  | {
      kind: 'usage';
      caller: string;
      sessionId: string;
      bytesOut: number;
      bytesIn: number;
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
  action: 'publish' | 'subscribe';
  accountId?: string;
  streamName: string;
  tokenId?: number;
  trackingId?: string;
}

export type PublicEvent = FeedEvent | RecordingEvent | ThumbnailEvent | SessionEvent;
