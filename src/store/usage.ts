// The usage aggregate: bandwidth reports, summed per day and hour (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream).

/** Bytes of one report, already attributed (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream). */
export interface UsageRecord {
  accountId: string;
  /** Absent: kept per token and stream (not lost) */
  trackingId?: string;
  tokenId?: number;
  streamName: string;
  /** UTC day, YYYY-MM-DD */
  day: string;
  bytesOut: number;
  bytesIn: number;
  /**
   * Also counted in the UTC hour (YYYY-MM-DDTHH) when set, that hour's buckets kept until
   * keepUntilMs (epoch ms; docs/operations.md#hourly-usage-retention). Unset: per day only.
   */
  hourly?: { hour: string; keepUntilMs: number };
}

export interface UsageTotal {
  trackingId: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

/**
 * What a usage read covers: some tracking ids (a row per tracking id, period and stream), some
 * streams (a row per stream and period, every tracking id and the untracked usage summed), or some
 * streams per tracking id (`streamTracking`: a row per stream, period and tracking id, `''` for the
 * usage without one, which has a row only when it is not zero).
 */
export type UsageSelector = { trackingIds: string[] } | { streamNames: string[] } | { streamTracking: string[] };

/** One UTC day's bytes of one stream: of one tracking id, or of every report on the stream. */
export interface UsageDay {
  /** YYYY-MM-DD */
  day: string;
  /** Set when the read selected tracking ids or streamTracking. */
  trackingId?: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

/** One UTC hour's bytes, as UsageDay. */
export interface UsageHour {
  /** YYYY-MM-DDTHH */
  hour: string;
  trackingId?: string;
  streamName: string;
  bytesOut: number;
  bytesIn: number;
}

/** The whole account's bytes in one period (a UTC day YYYY-MM-DD or hour YYYY-MM-DDTHH). */
export interface UsageSum {
  period: string;
  bytesOut: number;
  bytesIn: number;
}

export interface UsageStore {
  /**
   * Adds a report's bytes to its (account, trackingId | token, stream, day) bucket atomically, and
   * with `hourly` to its (account, trackingId, stream, hour) bucket in the same step.
   * With a reportId, a report the account already sent is not counted again: false.
   */
  addUsage(u: UsageRecord, reportId?: string): Promise<boolean>;
  /** Per tracking id and stream, the sums over the days in [startDay, stopDay). */
  usageByTracking(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<UsageTotal[]>;
  /**
   * Per UTC day in [startDay, stopDay), in no particular order, only days with usage:
   * `{trackingIds}` → a row per tracking id, day and stream; `{streamNames}` → a row per stream and
   * day summing every tracking id and the untracked usage. Costs O(days × streams), not O(reports).
   */
  usageDaily(accountId: string, selector: UsageSelector, startDay: string, stopDay: string): Promise<UsageDay[]>;
  /**
   * As usageDaily, per UTC hour in [startHour, stopHour) (YYYY-MM-DDTHH), from the reports added
   * with `hourly`, while their keepUntilMs has not passed. Costs O(hours × streams).
   */
  usageHourly(accountId: string, selector: UsageSelector, startHour: string, stopHour: string): Promise<UsageHour[]>;
  /**
   * The account's bytes per day (`unit` 'day', YYYY-MM-DD bounds) or hour ('hour', YYYY-MM-DDTHH
   * bounds) in [start, stop), only periods with usage, in no particular order. Costs O(periods × streams).
   */
  usageAccount(accountId: string, unit: 'day' | 'hour', start: string, stop: string): Promise<UsageSum[]>;
}
