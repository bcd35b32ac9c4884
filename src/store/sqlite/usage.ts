// Usage on SQLite: per-day and per-hour buckets, and the report ids already counted.
import type { UsageDay, UsageHour, UsageRecord, UsageSelector, UsageStore, UsageSum, UsageTotal } from '../usage.js';
import type { SqliteConnection } from './connection.js';

/** Expired hourly usage rows deleted by one usage write at most, and how often writes look for them (ms). */
const HOURLY_PRUNE_BATCH = 500;
const HOURLY_PRUNE_EVERY_MS = 60_000;

export class SqliteUsage implements UsageStore {
  constructor(private readonly c: SqliteConnection) {}

  async addUsage(u: UsageRecord, reportId?: string): Promise<boolean> {
    return this.c.tx(() => {
      if (reportId !== undefined) {
        const fresh = this.c.stmt('INSERT OR IGNORE INTO usage_reports (account_id, report_id) VALUES (?, ?)').run(u.accountId, reportId).changes;
        if (fresh === 0) return false;
      }
      this.c.stmt(
        `INSERT INTO usage (account_id, tracking_id, token_id, stream_name, day, bytes_out, bytes_in) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id, tracking_id, day, stream_name, token_id)
         DO UPDATE SET bytes_out = bytes_out + excluded.bytes_out, bytes_in = bytes_in + excluded.bytes_in`,
      )
        .run(u.accountId, u.trackingId ?? '', u.tokenId ?? 0, u.streamName, u.day, u.bytesOut, u.bytesIn);
      const now = this.c.now();
      if (u.hourly && u.hourly.keepUntilMs > now) {
        this.c.stmt(
          `INSERT INTO usage_hourly (account_id, tracking_id, stream_name, hour, bytes_out, bytes_in, keep_until) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (account_id, tracking_id, hour, stream_name)
           DO UPDATE SET bytes_out = bytes_out + excluded.bytes_out, bytes_in = bytes_in + excluded.bytes_in, keep_until = excluded.keep_until`,
        ).run(u.accountId, u.trackingId ?? '', u.streamName, u.hourly.hour, u.bytesOut, u.bytesIn, u.hourly.keepUntilMs);
      }
      this.#pruneHourlyUsage(now);
      return true;
    });
  }

  /** When the usage writes next delete hourly rows past their keep_until (epoch ms). */
  private hourlyPruneAt = 0;

  /**
   * Deletes up to HOURLY_PRUNE_BATCH hourly rows whose keep_until has passed, at most once per
   * HOURLY_PRUNE_EVERY_MS unless a full batch shows more are waiting: each usage write pays a
   * bounded share, and the table holds only the retention's hours (docs/operations.md#hourly-usage-retention).
   */
  #pruneHourlyUsage(now: number): void {
    if (now < this.hourlyPruneAt) return;
    const deleted = this.c.stmt('DELETE FROM usage_hourly WHERE rowid IN (SELECT rowid FROM usage_hourly WHERE keep_until <= ? LIMIT ?)').run(now, HOURLY_PRUNE_BATCH).changes;
    this.hourlyPruneAt = deleted < HOURLY_PRUNE_BATCH ? now + HOURLY_PRUNE_EVERY_MS : now;
  }

  async usageByTracking(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<UsageTotal[]> {
    const ids = trackingIds.filter((t) => t !== '');
    if (ids.length === 0) return [];
    const rows = this.c.stmt(
      `SELECT tracking_id AS trackingId, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
       FROM usage WHERE account_id = ? AND tracking_id IN (${ids.map(() => '?').join(',')}) AND day >= ? AND day < ?
       GROUP BY tracking_id, stream_name ORDER BY tracking_id, stream_name`,
    )
      .all(accountId, ...ids, startDay, stopDay) as UsageTotal[];
    return rows;
  }

  async usageDaily(accountId: string, selector: UsageSelector, startDay: string, stopDay: string): Promise<UsageDay[]> {
    return this.#usageRows('usage', 'day', accountId, selector, startDay, stopDay) as UsageDay[];
  }

  async usageHourly(accountId: string, selector: UsageSelector, startHour: string, stopHour: string): Promise<UsageHour[]> {
    return this.#usageRows('usage_hourly', 'hour', accountId, selector, startHour, stopHour) as UsageHour[];
  }

  /** usageDaily / usageHourly: the same reads of the day table and of the hour table (whose expired rows are left out). */
  #usageRows(table: 'usage' | 'usage_hourly', period: 'day' | 'hour', accountId: string, selector: UsageSelector, start: string, stop: string): unknown[] {
    const byTracking = 'trackingIds' in selector;
    // '' is the untracked bucket's tracking id, and no stream's name
    const names = [...new Set(byTracking ? selector.trackingIds : 'streamNames' in selector ? selector.streamNames : selector.streamTracking)].filter((n) => n !== '');
    if (names.length === 0) return [];
    const marks = names.map(() => '?').join(',');
    const hourly = table === 'usage_hourly';
    const live = hourly ? ' AND keep_until > ?' : '';
    const args = [accountId, ...names, start, stop, ...(hourly ? [this.c.now()] : [])];
    const byStream = hourly ? 'usage_hourly_by_stream' : 'usage_by_stream';
    const sql = byTracking
      ? `SELECT tracking_id AS trackingId, ${period}, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
         FROM ${table} WHERE account_id = ? AND tracking_id IN (${marks}) AND ${period} >= ? AND ${period} < ?${live}
         GROUP BY tracking_id, ${period}, stream_name`
      : 'streamNames' in selector
        ? `SELECT ${period}, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM ${table} INDEXED BY ${byStream} WHERE account_id = ? AND stream_name IN (${marks}) AND ${period} >= ? AND ${period} < ?${live}
           GROUP BY stream_name, ${period}`
        : `SELECT tracking_id AS trackingId, ${period}, stream_name AS streamName, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM ${table} INDEXED BY ${byStream} WHERE account_id = ? AND stream_name IN (${marks}) AND ${period} >= ? AND ${period} < ?${live}
           GROUP BY stream_name, ${period}, tracking_id
           HAVING tracking_id <> '' OR SUM(bytes_out) <> 0 OR SUM(bytes_in) <> 0`;
    return this.c.stmt(sql).all(...args);
  }

  async usageAccount(accountId: string, unit: 'day' | 'hour', start: string, stop: string): Promise<UsageSum[]> {
    const sql =
      unit === 'day'
        ? `SELECT day AS period, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM usage INDEXED BY usage_by_day WHERE account_id = ? AND day >= ? AND day < ? GROUP BY day`
        : `SELECT hour AS period, SUM(bytes_out) AS bytesOut, SUM(bytes_in) AS bytesIn
           FROM usage_hourly INDEXED BY usage_hourly_by_hour WHERE account_id = ? AND hour >= ? AND hour < ? AND keep_until > ? GROUP BY hour`;
    return this.c.stmt(sql).all(accountId, start, stop, ...(unit === 'hour' ? [this.c.now()] : [])) as UsageSum[];
  }
}
