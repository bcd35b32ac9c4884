// Usage ingest and the bandwidth queries: reports are attributed to an account, tracking id, token
// and stream (via the session registry or the token), then added to per-UTC-day buckets and, for the
// hourly retention, per-UTC-hour ones, so a query costs O(periods × streams), not O(reports). The
// answers take the hosted platform's analytics shapes
// (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream).
import { ApiError } from '../errors.js';
import { SESSION_CALLERS } from '../callers/registry.js';
import type { Store, Session, UsageSelector } from '../store/store.js';
import type { TokenRecord } from '../domain/tokens.js';
import { copyWith } from '../domain/objects.js';
import type { UsageReport } from '../contracts/usage.js';

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
/** The UTC hour of an instant: YYYY-MM-DDTHH. */
export const utcHour = (ms: number): string => new Date(ms).toISOString().slice(0, 13);

const DAY_MS = 86400000;
/** Hourly usage kept by default: the current UTC day and the 31 days before it (analytics.hourlyRetentionDays). */
export const HOURLY_RETENTION_DAYS = 31;

export class UsageService {
  constructor(
    private readonly store: Store,
    private readonly tokenById: (id: number) => Promise<TokenRecord | null>,
    private readonly now: () => number = Date.now,
    /** Hourly usage is kept for the current UTC day and this many days before it (docs/operations.md#hourly-usage-retention). */
    private readonly hourlyRetentionDays = HOURLY_RETENTION_DAYS,
  ) {}

  /**
   * An hour of day d is kept until day d + retention + 1 starts; a report whose hour is already
   * past that counts per day only.
   */
  private hourly(at: number): { hour: string; keepUntilMs: number } | undefined {
    const keepUntilMs = Date.parse(`${utcDay(at)}T00:00:00Z`) + (this.hourlyRetentionDays + 1) * DAY_MS;
    return keepUntilMs > this.now() ? { hour: utcHour(at), keepUntilMs } : undefined;
  }

  /** The oldest UTC day whose hours are kept now (YYYY-MM-DD). */
  oldestHourlyDay(): string {
    return utcDay(this.now() - this.hourlyRetentionDays * DAY_MS);
  }

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
    const at = r.at ?? this.now();
    return this.store.addUsage(
      { accountId, trackingId, tokenId, streamName, day: utcDay(at), bytesOut: r.bytesOut, bytesIn: r.bytesIn ?? 0, hourly: this.hourly(at) },
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

  /**
   * The rows of a selector over a range, each with its period's key: per hour from the hourly
   * buckets (400 naming startDate when the range reaches before the hourly retention), else per day.
   */
  private async periodRows(
    accountId: string,
    selector: UsageSelector,
    range: UsageRange,
  ): Promise<Array<{ period: string; trackingId?: string; streamName: string; bytesOut: number; bytesIn: number }>> {
    if (range.resolution === 'Hour') {
      this.checkHourly(range);
      return (await this.store.usageHourly(accountId, selector, range.start, range.stop)).map(({ hour, ...r }) => Object.assign({ period: hourKey(hour) }, r));
    }
    const resolution = range.resolution;
    return (await this.store.usageDaily(accountId, selector, range.start, range.stop)).map(({ day, ...r }) => Object.assign({ period: periodKey(day, resolution) }, r));
  }

  private checkHourly(range: UsageRange): void {
    const oldest = this.oldestHourlyDay();
    if (range.start.slice(0, 10) < oldest) {
      throw ApiError.field(
        'startDate',
        `with resolution=Hour, must be on or after ${oldest}: hourly usage is kept for the current UTC day and the ${this.hourlyRetentionDays} days before it (use Day for older usage)`,
      );
    }
  }

  /** tracking/series: per tracking id, every period of the range (oldest first) with its streams' sums ([] without usage). */
  async trackingSeries(accountId: string, trackingIds: string[], range: UsageRange): Promise<Record<string, Record<string, TrackingRow[]>>> {
    const periods = rangeKeys(range);
    const sums = keyed(trackingIds, () => new Map<string, Map<string, Bandwidth>>(periods.map((p) => [p, new Map()])));
    for (const r of await this.periodRows(accountId, { trackingIds }, range)) {
      const streams = sums[r.trackingId!]?.get(r.period);
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
    for (const [name, b] of Object.entries(sums)) out[name] = streamTotal(b);
    return out;
  }

  /** streams/series: per requested stream, every period of the range (oldest first), zeros without usage. */
  async streamsSeries(accountId: string, streamNames: string[], range: UsageRange): Promise<Record<string, StreamSeries>> {
    const periods = rangeKeys(range);
    const sums = keyed(streamNames, () => new Map<string, Bandwidth>(periods.map((p) => [p, { bytesOut: 0, bytesIn: 0 }])));
    for (const r of await this.periodRows(accountId, { streamNames }, range)) {
      const b = sums[r.streamName]?.get(r.period);
      if (!b) continue;
      b.bytesOut += r.bytesOut;
      b.bytesIn += r.bytesIn;
    }
    const out: Record<string, StreamSeries> = Object.create(null);
    for (const [name, byPeriod] of Object.entries(sums)) out[name] = streamSeries(byPeriod);
    return out;
  }

  /** account/total: every stream, tracking id and the untracked usage of the account summed. */
  async accountTotal(accountId: string, startDay: string, stopDay: string): Promise<StreamTotal> {
    const b: Bandwidth = { bytesOut: 0, bytesIn: 0 };
    for (const r of await this.store.usageAccount(accountId, 'day', startDay, stopDay)) {
      b.bytesOut += r.bytesOut;
      b.bytesIn += r.bytesIn;
    }
    return streamTotal(b);
  }

  /** account/series: every period of the range (oldest first), zeros without usage. */
  async accountSeries(accountId: string, range: UsageRange): Promise<StreamSeries> {
    const sums = new Map<string, Bandwidth>(rangeKeys(range).map((p) => [p, { bytesOut: 0, bytesIn: 0 }]));
    let rows: Array<{ period: string; bytesOut: number; bytesIn: number }>;
    if (range.resolution === 'Hour') {
      this.checkHourly(range);
      rows = (await this.store.usageAccount(accountId, 'hour', range.start, range.stop)).map((r) => copyWith(r, { period: hourKey(r.period) }));
    } else {
      const resolution = range.resolution;
      rows = (await this.store.usageAccount(accountId, 'day', range.start, range.stop)).map((r) => copyWith(r, { period: periodKey(r.period, resolution) }));
    }
    for (const r of rows) {
      const b = sums.get(r.period);
      if (!b) continue;
      b.bytesOut += r.bytesOut;
      b.bytesIn += r.bytesIn;
    }
    return streamSeries(sums);
  }

  /**
   * tracking/streams/total: per requested stream, a row per tracking id with usage on it, the
   * untracked usage first (trackingId null); [] without usage.
   */
  async trackingStreamsTotal(accountId: string, streamNames: string[], startDay: string, stopDay: string): Promise<Record<string, StreamTrackingRow[]>> {
    const sums = keyed(streamNames, () => new Map<string, Bandwidth>());
    for (const r of await this.store.usageDaily(accountId, { streamTracking: streamNames }, startDay, stopDay)) addTo(sums[r.streamName], r.trackingId ?? '', r);
    const out: Record<string, StreamTrackingRow[]> = Object.create(null);
    for (const [name, byTracking] of Object.entries(sums)) out[name] = streamTrackingRows(byTracking);
    return out;
  }

  /** tracking/streams/series: per requested stream, every period of the range (oldest first) with its rows as in the total ([] without usage). */
  async trackingStreamsSeries(accountId: string, streamNames: string[], range: UsageRange): Promise<Record<string, Record<string, StreamTrackingRow[]>>> {
    const periods = rangeKeys(range);
    const sums = keyed(streamNames, () => new Map<string, Map<string, Bandwidth>>(periods.map((p) => [p, new Map()])));
    for (const r of await this.periodRows(accountId, { streamTracking: streamNames }, range)) addTo(sums[r.streamName]?.get(r.period), r.trackingId ?? '', r);
    const out: Record<string, Record<string, StreamTrackingRow[]>> = Object.create(null);
    for (const [name, byPeriod] of Object.entries(sums)) {
      out[name] = {};
      for (const [p, byTracking] of byPeriod) out[name][p] = streamTrackingRows(byTracking);
    }
    return out;
  }
}

// ---- the query side's shapes (the hosted API's analytics models) ------------------------------

/** Series resolutions: Hour reads the hourly buckets (kept for the hourly retention), Day and Month the daily ones. */
export const RESOLUTIONS = ['Hour', 'Day', 'Month'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

/** A series' periods: UTC days [start, stop) (YYYY-MM-DD) for Day and Month, UTC hours (YYYY-MM-DDTHH) for Hour. */
export interface UsageRange {
  resolution: Resolution;
  start: string;
  stop: string;
}

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

/** A tracking/streams row: one tracking id's usage of a stream (null: the usage without a tracking id). */
export interface StreamTrackingRow {
  trackingId: string | null;
  standardStream: Bandwidth;
  restream: Bandwidth & { duration: number };
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

const streamTotal = (b: Bandwidth): StreamTotal =>
  copyWith(b, { standardStream: { ...b }, restream: { bytesOut: 0, bytesIn: 0, secondsUsed: 0 }, geoCascade: { bytesOut: 0, bytesIn: 0 } });

function streamSeries(byPeriod: Map<string, Bandwidth>): StreamSeries {
  const s: StreamSeries = { bandwidth: {}, standardStream: {}, restream: {}, geoCascade: {} };
  for (const [p, b] of byPeriod) {
    s.bandwidth[p] = { ...b };
    s.standardStream[p] = { ...b };
    s.restream[p] = { bytesOut: 0, bytesIn: 0, secondsUsed: 0 };
    s.geoCascade[p] = { bytesOut: 0, bytesIn: 0 };
  }
  return s;
}

/** Adds a row's bytes to its tracking id's entry ('' = untracked); nothing when `into` is absent (a period or stream not asked). */
function addTo(into: Map<string, Bandwidth> | undefined, trackingId: string, r: Bandwidth): void {
  if (!into) return;
  const b = into.get(trackingId) ?? { bytesOut: 0, bytesIn: 0 };
  into.set(trackingId, { bytesOut: b.bytesOut + r.bytesOut, bytesIn: b.bytesIn + r.bytesIn });
}

/** The untracked row first (trackingId null), then the tracking ids in order. */
function streamTrackingRows(byTracking: Map<string, Bandwidth>): StreamTrackingRow[] {
  return [...byTracking]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, b]) => ({
      trackingId: id === '' ? null : id,
      standardStream: { bytesOut: b.bytesOut, bytesIn: b.bytesIn },
      restream: { bytesOut: 0, bytesIn: 0, duration: 0 },
      geoCascade: { bytesOut: 0, bytesIn: 0 },
    }));
}

const byStreamName = (a: { streamName: string }, b: { streamName: string }): number => (a.streamName < b.streamName ? -1 : a.streamName > b.streamName ? 1 : 0);

/** An entry per name, in the order asked (a repeated name once); a null prototype, as names are the caller's. */
function keyed<T>(names: string[], make: () => T): Record<string, T> {
  const out: Record<string, T> = Object.create(null);
  for (const n of names) if (!(n in out)) out[n] = make();
  return out;
}

/** The key of the period a UTC day (YYYY-MM-DD) falls in: the ISO date-time of the period's start. */
export function periodKey(day: string, resolution: Exclude<Resolution, 'Hour'>): string {
  return resolution === 'Month' ? `${day.slice(0, 7)}-01T00:00:00Z` : `${day}T00:00:00Z`;
}

/** The key of a UTC hour (YYYY-MM-DDTHH): the ISO date-time of its start. */
export const hourKey = (hour: string): string => `${hour}:00:00Z`;

/** The keys of a range's periods, oldest first. */
export function rangeKeys(range: UsageRange): string[] {
  if (range.resolution !== 'Hour') return periodKeys(range.start, range.stop, range.resolution);
  const out: string[] = [];
  for (let t = Date.parse(hourKey(range.start)); t < Date.parse(hourKey(range.stop)); t += 3600000) out.push(hourKey(utcHour(t)));
  return out;
}

/** The keys of the periods that days in [startDay, stopDay) fall in, oldest first. */
export function periodKeys(startDay: string, stopDay: string, resolution: Exclude<Resolution, 'Hour'>): string[] {
  const out: string[] = [];
  const stop = Date.parse(`${stopDay}T00:00:00Z`);
  for (let t = Date.parse(`${startDay}T00:00:00Z`); t < stop; t += 86400000) {
    const k = periodKey(utcDay(t), resolution);
    if (out[out.length - 1] !== k) out.push(k);
  }
  return out;
}
