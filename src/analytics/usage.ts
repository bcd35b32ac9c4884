// Usage ingest and the bandwidth queries: reports are attributed to an account, tracking id, token
// and stream (via the session registry or the token), then added to per-UTC-day buckets, so a query
// costs O(days × streams), not O(reports). The answers take the hosted platform's analytics shapes
// (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream).
import { ApiError } from '../errors.js';
import { SESSION_CALLERS } from '../callers/registry.js';
import type { Store, Session } from '../store/store.js';
import type { TokenRecord } from '../domain/tokens.js';
import { copyWith } from '../domain/objects.js';

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
    for (const c of caller ? [caller] : SESSION_CALLERS) {
      // an ended session is kept a while: late byte counts (SRS on_close after on_stop) still find it
      const s = await this.store.getSession(c, sessionId);
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

  /** tracking/total: per requested tracking id (in the order asked), its streams' sums. */
  async trackingTotal(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<Record<string, TrackingRow[]>> {
    const out = keyed(trackingIds, (): TrackingRow[] => []);
    for (const r of await this.store.usageByTracking(accountId, trackingIds, startDay, stopDay)) out[r.trackingId]?.push(trackingRow(r.streamName, r));
    for (const rows of Object.values(out)) rows.sort(byStreamName);
    return out;
  }

  /** tracking/series: per tracking id, every period of the range (oldest first) with its streams' sums ([] without usage). */
  async trackingSeries(
    accountId: string,
    trackingIds: string[],
    startDay: string,
    stopDay: string,
    resolution: Resolution,
  ): Promise<Record<string, Record<string, TrackingRow[]>>> {
    const periods = periodKeys(startDay, stopDay, resolution);
    const sums = keyed(trackingIds, () => new Map<string, Map<string, Bandwidth>>(periods.map((p) => [p, new Map()])));
    for (const r of await this.store.usageDaily(accountId, { trackingIds }, startDay, stopDay)) {
      const streams = sums[r.trackingId!]?.get(periodKey(r.day, resolution));
      if (!streams) continue;
      const b = streams.get(r.streamName) ?? { bytesOut: 0, bytesIn: 0 };
      streams.set(r.streamName, { bytesOut: b.bytesOut + r.bytesOut, bytesIn: b.bytesIn + r.bytesIn });
    }
    const out: Record<string, Record<string, TrackingRow[]>> = Object.create(null);
    for (const [id, byPeriod] of Object.entries(sums)) {
      out[id] = {};
      for (const [p, streams] of byPeriod) out[id][p] = [...streams].map(([name, b]) => trackingRow(name, b)).sort(byStreamName);
    }
    return out;
  }

  /** streams/total: per requested stream, every tracking id's and the untracked usage summed (zeros without usage). */
  async streamsTotal(accountId: string, streamNames: string[], startDay: string, stopDay: string): Promise<Record<string, StreamTotal>> {
    const sums = keyed(streamNames, (): Bandwidth => ({ bytesOut: 0, bytesIn: 0 }));
    for (const r of await this.store.usageDaily(accountId, { streamNames }, startDay, stopDay)) {
      const b = sums[r.streamName];
      if (!b) continue;
      b.bytesOut += r.bytesOut;
      b.bytesIn += r.bytesIn;
    }
    const out: Record<string, StreamTotal> = Object.create(null);
    for (const [name, b] of Object.entries(sums)) {
      out[name] = copyWith(b, { standardStream: { ...b }, restream: { bytesOut: 0, bytesIn: 0, secondsUsed: 0 }, geoCascade: { bytesOut: 0, bytesIn: 0 } });
    }
    return out;
  }

  /** streams/series: per requested stream, every period of the range (oldest first), zeros without usage. */
  async streamsSeries(accountId: string, streamNames: string[], startDay: string, stopDay: string, resolution: Resolution): Promise<Record<string, StreamSeries>> {
    const periods = periodKeys(startDay, stopDay, resolution);
    const sums = keyed(streamNames, () => new Map<string, Bandwidth>(periods.map((p) => [p, { bytesOut: 0, bytesIn: 0 }])));
    for (const r of await this.store.usageDaily(accountId, { streamNames }, startDay, stopDay)) {
      const b = sums[r.streamName]?.get(periodKey(r.day, resolution));
      if (!b) continue;
      b.bytesOut += r.bytesOut;
      b.bytesIn += r.bytesIn;
    }
    const out: Record<string, StreamSeries> = Object.create(null);
    for (const [name, byPeriod] of Object.entries(sums)) {
      const s: StreamSeries = { bandwidth: {}, standardStream: {}, restream: {}, geoCascade: {} };
      for (const [p, b] of byPeriod) {
        s.bandwidth[p] = { ...b };
        s.standardStream[p] = { ...b };
        s.restream[p] = { bytesOut: 0, bytesIn: 0, secondsUsed: 0 };
        s.geoCascade[p] = { bytesOut: 0, bytesIn: 0 };
      }
      out[name] = s;
    }
    return out;
  }
}

// ---- the query side's shapes (the hosted API's analytics models) ------------------------------

/** Series resolutions: usage is kept per UTC day, so there is no Hour. */
export const RESOLUTIONS = ['Day', 'Month'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

export interface Bandwidth {
  bytesOut: number;
  bytesIn: number;
}

/**
 * A stream's usage in the hosted platform's three classes. Streamgate neither restreams nor
 * geo-cascades: everything it counts is standard-stream usage, and the other two are always zero.
 */
export interface TrackingRow {
  streamName: string;
  standardStream: Bandwidth;
  restream: Bandwidth & { duration: number };
  geoCascade: Bandwidth;
}

/** bytesOut/bytesIn are the sums of the three classes (so the standard stream's here). */
export interface StreamTotal extends Bandwidth {
  standardStream: Bandwidth;
  restream: Bandwidth & { secondsUsed: number };
  geoCascade: Bandwidth;
}

/** Keyed by period (ISO date-time of its start); `bandwidth` is the sum of the three classes. */
export interface StreamSeries {
  bandwidth: Record<string, Bandwidth>;
  standardStream: Record<string, Bandwidth>;
  restream: Record<string, Bandwidth & { secondsUsed: number }>;
  geoCascade: Record<string, Bandwidth>;
}

const trackingRow = (streamName: string, b: Bandwidth): TrackingRow => ({
  streamName,
  standardStream: { bytesOut: b.bytesOut, bytesIn: b.bytesIn },
  restream: { bytesOut: 0, bytesIn: 0, duration: 0 },
  geoCascade: { bytesOut: 0, bytesIn: 0 },
});

const byStreamName = (a: { streamName: string }, b: { streamName: string }): number => (a.streamName < b.streamName ? -1 : a.streamName > b.streamName ? 1 : 0);

/** An entry per name, in the order asked (a repeated name once); a null prototype, as names are the caller's. */
function keyed<T>(names: string[], make: () => T): Record<string, T> {
  const out: Record<string, T> = Object.create(null);
  for (const n of names) if (!(n in out)) out[n] = make();
  return out;
}

/** The key of the period a UTC day (YYYY-MM-DD) falls in: the ISO date-time of the period's start. */
export function periodKey(day: string, resolution: Resolution): string {
  return resolution === 'Month' ? `${day.slice(0, 7)}-01T00:00:00Z` : `${day}T00:00:00Z`;
}

/** The keys of the periods that days in [startDay, stopDay) fall in, oldest first. */
export function periodKeys(startDay: string, stopDay: string, resolution: Resolution): string[] {
  const out: string[] = [];
  const stop = Date.parse(`${stopDay}T00:00:00Z`);
  for (let t = Date.parse(`${startDay}T00:00:00Z`); t < stop; t += 86400000) {
    const k = periodKey(utcDay(t), resolution);
    if (out[out.length - 1] !== k) out.push(k);
  }
  return out;
}
