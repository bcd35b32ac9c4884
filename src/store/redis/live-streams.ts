// Live streams on Redis: the account's live hash, entries expiring by their own time.
import type { LiveStream, LiveStreamStore } from '../live-streams.js';
import { keys } from './keys.js';
import { Reply, codeOf } from './codes.js';
import { copyWith } from '../../domain/objects.js';
import type { RedisConnection } from './connection.js';

export class RedisLiveStreams implements LiveStreamStore {
  constructor(private readonly c: RedisConnection) {}

  async startLiveStream(s: LiveStream, ttlSeconds: number): Promise<void> {
    const now = this.c.now();
    const entry = copyWith(s, { expiresMs: now + ttlSeconds * 1000 });
    // one script: the entry, and the account version when the stream's publishing token changed
    await this.c.run('liveStart', keys.live(s.accountId), keys.version(s.accountId), keys.securing(s.accountId), s.streamName, JSON.stringify(entry), s.tokenId, now);
  }

  async endLiveStream(accountId: string, streamName: string, feedId?: string): Promise<LiveStream | null> {
    const raw = await this.c.redis.hget(keys.live(accountId), streamName);
    if (!raw) return null;
    const { expiresMs: _e, ...s } = JSON.parse(raw) as LiveStream & { expiresMs: number };
    if (feedId !== undefined && s.feedId !== feedId) return null;
    // removed only if still the entry read above (a newer start of the stream stays live)
    const removed = await this.c.run('liveEnd', keys.live(accountId), keys.version(accountId), keys.securing(accountId), streamName, raw);
    return codeOf(removed) === Reply.DONE ? s : null;
  }

  async getLiveStream(accountId: string, streamName: string): Promise<LiveStream | null> {
    const raw = await this.c.redis.hget(keys.live(accountId), streamName);
    if (!raw) return null;
    const { expiresMs, ...s } = JSON.parse(raw) as LiveStream & { expiresMs: number };
    return expiresMs > this.c.now() ? s : null;
  }

  async activePublishTokenIds(accountId: string, streamName?: string): Promise<number[]> {
    const all = await this.c.redis.hgetall(keys.live(accountId));
    const now = this.c.now();
    const ids = new Set<number>();
    const expired: string[] = [];
    for (const [name, raw] of Object.entries(all)) {
      const e = JSON.parse(raw) as LiveStream & { expiresMs: number };
      if (e.expiresMs <= now) expired.push(name, raw);
      else if (streamName === undefined || name === streamName) ids.add(e.tokenId);
    }
    // Only entries still as read: a stream started again between the read and here keeps its entry.
    if (expired.length > 0) await this.c.run('livePrune', keys.live(accountId), ...expired);
    return [...ids].sort((a, b) => a - b);
  }
}
