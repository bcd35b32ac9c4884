// Usage ingest and the tracking-id bandwidth query (CONTRACT 7): reports are attributed to an
// account, tracking id, token and stream (via the session registry or the token), then added to
// per-UTC-day buckets, so a query costs O(days × streams), not O(reports).
import { ApiError } from '../errors.js';
import type { Store, Session } from '../store/store.js';
import type { TokenRecord } from '../domain/tokens.js';

export const ENDED_PREFIX = 'ended:';
/** An ended session stays findable this long: SRS sends on_close (with the byte counts) after on_stop. */
export const ENDED_SESSION_TTL_S = 600;
const CALLERS = ['mediamtx', 'srs', 'nginx-rtmp', 'ome', 'events'];

export interface UsageReport {
  reportId?: string;
  sessionId?: string;
  caller?: string;
  tokenId?: number;
  trackingId?: string;
  accountId?: string;
  streamName?: string;
  bytesOut: number;
  bytesIn?: number;
  /** epoch ms */
  at?: number;
}

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export class UsageService {
  constructor(
    private readonly store: Store,
    private readonly tokenById: (id: number) => Promise<TokenRecord | null>,
    private readonly now: () => number = Date.now,
  ) {}

  private async session(caller: string | undefined, sessionId: string): Promise<Session | null> {
    for (const c of caller ? [caller] : CALLERS) {
      const s = (await this.store.getSession(c, sessionId)) ?? (await this.store.getSession(`${ENDED_PREFIX}${c}`, sessionId));
      if (s) return s;
    }
    return null;
  }

  /** Counts a report; false when its reportId was counted before. 404 when it names nothing known. */
  async ingest(r: UsageReport, scopeAccountId?: string): Promise<boolean> {
    let accountId: string | undefined;
    let trackingId = r.trackingId;
    let tokenId = r.tokenId;
    let streamName = r.streamName;
    if (r.sessionId !== undefined) {
      const s = await this.session(r.caller, r.sessionId);
      if (!s) throw new ApiError(404, `No session with id: ${r.sessionId}`, { sessionId: 'unknown session' });
      accountId = s.accountId;
      trackingId ??= s.trackingId;
      tokenId ??= s.tokenId;
      streamName ??= s.streamName;
    } else if (r.tokenId !== undefined) {
      const t = await this.tokenById(r.tokenId);
      if (!t) throw new ApiError(404, `No token with id: ${r.tokenId}`, { tokenId: 'unknown token' });
      accountId = t.accountId;
      trackingId ??= t.tracking?.trackingId;
    } else {
      accountId = r.accountId;
    }
    if (!accountId || (scopeAccountId !== undefined && accountId !== scopeAccountId)) {
      throw new ApiError(404, 'No account for this report', { accountId: 'unknown account' });
    }
    if (!streamName) throw ApiError.field('streamName', 'required when the report names no session');
    return this.store.addUsage(
      { accountId, trackingId, tokenId, streamName, day: utcDay(r.at ?? this.now()), bytesOut: r.bytesOut, bytesIn: r.bytesIn ?? 0 },
      r.reportId,
    );
  }

  /** Byte deltas a caller reports for one of its sessions (SRS on_close, the MediaMTX poller). */
  async ingestSession(caller: string, sessionId: string, bytesOut: number, bytesIn: number, at?: number): Promise<boolean> {
    if (bytesOut <= 0 && bytesIn <= 0) return false;
    try {
      return await this.ingest({ caller, sessionId, bytesOut: Math.max(0, bytesOut), bytesIn: Math.max(0, bytesIn), at });
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return false; // not admitted here (or long gone)
      throw e;
    }
  }

  query(accountId: string, trackingIds: string[], startDay: string, stopDay: string) {
    return this.store.usageByTracking(accountId, trackingIds, startDay, stopDay);
  }
}
