// Live streams on SQLite: the live_streams table, its entries expiring by expires_ms.
import type { LiveStream, LiveStreamStore } from '../live-streams.js';
import type { SqliteConnection } from './connection.js';

export class SqliteLiveStreams implements LiveStreamStore {
  constructor(private readonly c: SqliteConnection) {}

  async startLiveStream(s: LiveStream, ttlSeconds: number): Promise<void> {
    this.c.tx(() => {
      const now = this.c.now();
      this.c.stmt('DELETE FROM live_streams WHERE expires_ms <= ?').run(now);
      const was = this.c.stmt('SELECT token_id FROM live_streams WHERE account_id = ? AND stream_name = ?').pluck().get(s.accountId, s.streamName) as
        | number
        | undefined;
      this.c.stmt(
        `INSERT OR REPLACE INTO live_streams (account_id, stream_name, token_id, feed_id, expires_ms, data)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
        .run(s.accountId, s.streamName, s.tokenId, s.feedId, now + ttlSeconds * 1000, JSON.stringify(s));
      // viewers' country lists follow the publishing token (see Store.startLiveStream)
      if (was !== s.tokenId && this.c.hasViewerRules(s.accountId)) this.c.bumpVersion(s.accountId);
    });
  }

  async endLiveStream(accountId: string, streamName: string, feedId?: string): Promise<LiveStream | null> {
    return this.c.tx(() => {
      const r = this.c.stmt('SELECT data, feed_id FROM live_streams WHERE account_id = ? AND stream_name = ?')
        .get(accountId, streamName) as { data: string; feed_id: string } | undefined;
      if (!r || (feedId !== undefined && r.feed_id !== feedId)) return null;
      this.c.stmt('DELETE FROM live_streams WHERE account_id = ? AND stream_name = ?').run(accountId, streamName);
      if (this.c.hasViewerRules(accountId)) this.c.bumpVersion(accountId);
      return JSON.parse(r.data) as LiveStream;
    });
  }

  async getLiveStream(accountId: string, streamName: string): Promise<LiveStream | null> {
    const r = this.c.stmt('SELECT data FROM live_streams WHERE account_id = ? AND stream_name = ? AND expires_ms > ?')
      .get(accountId, streamName, this.c.now()) as { data: string } | undefined;
    return r ? (JSON.parse(r.data) as LiveStream) : null;
  }

  async activePublishTokenIds(accountId: string, streamName?: string): Promise<number[]> {
    const now = this.c.now();
    const rows = (
      streamName === undefined
        ? this.c.stmt('SELECT DISTINCT token_id FROM live_streams WHERE account_id = ? AND expires_ms > ? ORDER BY token_id').all(accountId, now)
        : this.c.stmt('SELECT DISTINCT token_id FROM live_streams WHERE account_id = ? AND stream_name = ? AND expires_ms > ? ORDER BY token_id')
            .all(accountId, streamName, now)
    ) as Array<{ token_id: number }>;
    return rows.map((r) => r.token_id);
  }
}
