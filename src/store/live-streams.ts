// Live streams: the streams being published, as the caller adapters report them.

/** A stream being published (docs/api.md#hooks). */
export interface LiveStream {
  accountId: string;
  streamName: string;
  tokenId: number;
  feedId: string;
  startedOn: string;
  /** The adapter that reported it (nginx-rtmp, srs, ...). */
  caller: string;
}

export interface LiveStreamStore {
  /**
   * Records that a stream is being published; replaces an entry for the same stream. The entry
   * disappears after `ttlSeconds` unless started again (a lost "done" cannot keep it live).
   * Viewers' country lists follow the publishing token, so when the account has viewer-rule tokens
   * (see viewerRuleTokens) and the stream's publishing token changes (it was not live, its entry
   * had expired, or another token published it), the account version moves in the same step.
   */
  startLiveStream(stream: LiveStream, ttlSeconds: number): Promise<void>;
  /**
   * Ends the stream's entry (only the feed `feedId` when given); returns what was removed. Moves
   * the account version when it removed an entry and the account has viewer-rule tokens.
   */
  endLiveStream(accountId: string, streamName: string, feedId?: string): Promise<LiveStream | null>;
  /** The stream's live entry (not expired), else null. */
  getLiveStream(accountId: string, streamName: string): Promise<LiveStream | null>;
  /** Ids of publish tokens now publishing `streamName` (or any stream) of the account. */
  activePublishTokenIds(accountId: string, streamName?: string): Promise<number[]>;
}
