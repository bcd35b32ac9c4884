// Usage on Redis: hashes per day and hour (by tracking id, by token, by stream), report ids kept a while.
import type { UsageDay, UsageHour, UsageRecord, UsageSelector, UsageStore, UsageSum, UsageTotal } from '../usage.js';
import { keys } from './keys.js';
import { Reply, codeOf } from './codes.js';
import type { RedisConnection } from './connection.js';

/** A reportId is remembered this long (a retried report arrives well within it). */
const USAGE_REPORT_TTL_S = 30 * 86400;
/** Daily usage buckets outlive the longest query range (366 days). */
const USAGE_KEEP_S = 400 * 86400;

/** The UTC days d with startDay <= d < stopDay (YYYY-MM-DD). */
function daysBetween(startDay: string, stopDay: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${startDay}T00:00:00Z`); t < Date.parse(`${stopDay}T00:00:00Z`); t += 86400000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

/** The UTC hours h with startHour <= h < stopHour (YYYY-MM-DDTHH). */
function hoursBetween(startHour: string, stopHour: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${startHour}:00:00Z`); t < Date.parse(`${stopHour}:00:00Z`); t += 3600000) {
    out.push(new Date(t).toISOString().slice(0, 13));
  }
  return out;
}

/** A usage bucket's "<stream>\0o" / "<stream>\0i" fields as per-stream sums. */
function streamSums(h: Record<string, string>): Map<string, { bytesOut: number; bytesIn: number }> {
  const out = new Map<string, { bytesOut: number; bytesIn: number }>();
  for (const [field, value] of Object.entries(h)) {
    const streamName = field.slice(0, field.lastIndexOf('\u0000'));
    const b = out.get(streamName) ?? { bytesOut: 0, bytesIn: 0 };
    if (field.endsWith('\u0000o')) b.bytesOut += Number(value);
    else b.bytesIn += Number(value);
    out.set(streamName, b);
  }
  return out;
}

export class RedisUsage implements UsageStore {
  constructor(private readonly c: RedisConnection) {}

  async addUsage(u: UsageRecord, reportId?: string): Promise<boolean> {
    const bucket = keys.usage(u.accountId, u.trackingId, u.tokenId, u.day);
    const tracked = u.trackingId !== undefined;
    const now = this.c.now();
    const hourly = u.hourly !== undefined && u.hourly.keepUntilMs > now ? u.hourly : undefined;
    const ok = await this.c.run(
      'usageAdd',
      bucket,
      reportId !== undefined ? keys.usageReport(u.accountId, reportId) : bucket,
      keys.usageStreams(u.accountId, u.day),
      tracked ? keys.usageStreamTracking(u.accountId, u.day, u.streamName) : bucket,
      tracked && hourly ? keys.usage(u.accountId, u.trackingId, undefined, hourly.hour) : bucket,
      hourly ? keys.usageStreams(u.accountId, hourly.hour) : bucket,
      reportId !== undefined ? '1' : '0',
      `${u.streamName}\u0000o`,
      `${u.streamName}\u0000i`,
      u.bytesOut,
      u.bytesIn,
      USAGE_REPORT_TTL_S,
      USAGE_KEEP_S,
      tracked ? '1' : '0',
      u.trackingId ?? '',
      // the hourly keys go when their retention ends (a later write may move it with the setting)
      hourly ? Math.ceil(hourly.keepUntilMs / 1000) : '0',
      ...keys.usageTotalFields,
    );
    return codeOf(ok) === Reply.DONE;
  }

  async usageByTracking(accountId: string, trackingIds: string[], startDay: string, stopDay: string): Promise<UsageTotal[]> {
    const days = daysBetween(startDay, stopDay);
    const ids = trackingIds.filter((t) => t !== '');
    if (ids.length === 0 || days.length === 0) return [];
    const pipe = this.c.redis.pipeline();
    for (const id of ids) for (const day of days) pipe.hgetall(keys.usage(accountId, id, undefined, day));
    const res = (await pipe.exec()) ?? [];
    const sums = new Map<string, UsageTotal>();
    let i = 0;
    for (const id of ids) {
      for (let d = 0; d < days.length; d++, i++) {
        const [err, h] = res[i];
        if (err) throw err;
        for (const [field, value] of Object.entries(h as Record<string, string>)) {
          const cut = field.lastIndexOf('\u0000');
          const streamName = field.slice(0, cut);
          const key = `${id}\u0000${streamName}`;
          const t = sums.get(key) ?? { trackingId: id, streamName, bytesOut: 0, bytesIn: 0 };
          if (field.endsWith('\u0000o')) t.bytesOut += Number(value);
          else t.bytesIn += Number(value);
          sums.set(key, t);
        }
      }
    }
    return [...sums.values()].sort((a, b) => (a.trackingId === b.trackingId ? (a.streamName < b.streamName ? -1 : 1) : a.trackingId < b.trackingId ? -1 : 1));
  }

  async usageDaily(accountId: string, selector: UsageSelector, startDay: string, stopDay: string): Promise<UsageDay[]> {
    const rows = await this.#usageRows(accountId, selector, daysBetween(startDay, stopDay), (day) => day);
    return rows.map(({ period, ...r }) => Object.assign({ day: period }, r));
  }

  async usageHourly(accountId: string, selector: UsageSelector, startHour: string, stopHour: string): Promise<UsageHour[]> {
    // an hour's tracking ids are in its day's set
    const rows = await this.#usageRows(accountId, selector, hoursBetween(startHour, stopHour), (hour) => hour.slice(0, 10));
    return rows.map(({ period, ...r }) => Object.assign({ hour: period }, r));
  }

  /**
   * usageDaily / usageHourly over the given periods (days or hours; `dayOf` names a period's day):
   * the tracking buckets, the per-stream index, and for streamTracking the stream's tracking-id set
   * of the day, whose buckets hold the tracked rows; the untracked row is the stream's total less
   * them. Pipelined: O(periods × streams) reads (× tracking ids for streamTracking).
   */
  async #usageRows(
    accountId: string,
    selector: UsageSelector,
    periods: string[],
    dayOf: (period: string) => string,
  ): Promise<Array<{ period: string; trackingId?: string; streamName: string; bytesOut: number; bytesIn: number }>> {
    const byTracking = 'trackingIds' in selector;
    const names = [...new Set(byTracking ? selector.trackingIds : 'streamNames' in selector ? selector.streamNames : selector.streamTracking)].filter((n) => n !== '');
    if (names.length === 0 || periods.length === 0) return [];
    const out: Array<{ period: string; trackingId?: string; streamName: string; bytesOut: number; bytesIn: number }> = [];
    if (byTracking) {
      // one bucket per tracking id and period: every stream of it
      const pipe = this.c.redis.pipeline();
      for (const id of names) for (const p of periods) pipe.hgetall(keys.usage(accountId, id, undefined, p));
      const res = (await pipe.exec()) ?? [];
      let i = 0;
      for (const trackingId of names) {
        for (const period of periods) {
          const [err, h] = res[i++];
          if (err) throw err;
          for (const [streamName, b] of streamSums(h as Record<string, string>)) out.push({ period, trackingId, streamName, ...b });
        }
      }
      return out;
    }
    // one index hash per period: only the asked streams' fields
    const fields = names.flatMap((n) => [`${n}\u0000o`, `${n}\u0000i`]);
    const perStream = this.c.redis.pipeline();
    for (const p of periods) perStream.hmget(keys.usageStreams(accountId, p), ...fields);
    const days = [...new Set(periods.map(dayOf))];
    const withTracking = 'streamTracking' in selector;
    if (withTracking) for (const day of days) for (const n of names) perStream.smembers(keys.usageStreamTracking(accountId, day, n));
    const res = (await perStream.exec()) ?? [];
    for (const [err] of res) if (err) throw err;
    const totals = periods.map((_, p) => res[p][1] as Array<string | null>);
    if (!withTracking) {
      periods.forEach((period, p) => {
        names.forEach((streamName, n) => {
          const o = totals[p][2 * n];
          const i = totals[p][2 * n + 1];
          if (o !== null || i !== null) out.push({ period, streamName, bytesOut: Number(o ?? 0), bytesIn: Number(i ?? 0) });
        });
      });
      return out;
    }
    const trackingIds = new Map<string, string[]>(); // "<day>\0<stream>" → its tracking ids
    let k = periods.length;
    for (const day of days) for (const n of names) trackingIds.set(`${day}\u0000${n}`, (res[k++][1] as string[]).sort());
    const reads: Array<{ period: string; streamName: string; trackingId: string }> = [];
    const perTracking = this.c.redis.pipeline();
    for (const period of periods) {
      for (const streamName of names) {
        for (const trackingId of trackingIds.get(`${dayOf(period)}\u0000${streamName}`) ?? []) {
          reads.push({ period, streamName, trackingId });
          perTracking.hmget(keys.usage(accountId, trackingId, undefined, period), `${streamName}\u0000o`, `${streamName}\u0000i`);
        }
      }
    }
    const tracked = reads.length > 0 ? ((await perTracking.exec()) ?? []) : [];
    const sums = new Map<string, { bytesOut: number; bytesIn: number }>(); // "<period>\0<stream>" → tracked bytes
    reads.forEach((r, j) => {
      const [err, v] = tracked[j];
      if (err) throw err;
      const [o, i] = v as Array<string | null>;
      if (o === null && i === null) return;
      const row = { period: r.period, trackingId: r.trackingId, streamName: r.streamName, bytesOut: Number(o ?? 0), bytesIn: Number(i ?? 0) };
      out.push(row);
      const key = `${r.period}\u0000${r.streamName}`;
      const s = sums.get(key) ?? { bytesOut: 0, bytesIn: 0 };
      sums.set(key, { bytesOut: s.bytesOut + row.bytesOut, bytesIn: s.bytesIn + row.bytesIn });
    });
    periods.forEach((period, p) => {
      names.forEach((streamName, n) => {
        const s = sums.get(`${period}\u0000${streamName}`) ?? { bytesOut: 0, bytesIn: 0 };
        // usage kept before the stream index existed is not in it: never below zero
        const bytesOut = Math.max(0, Number(totals[p][2 * n] ?? 0) - s.bytesOut);
        const bytesIn = Math.max(0, Number(totals[p][2 * n + 1] ?? 0) - s.bytesIn);
        if (bytesOut !== 0 || bytesIn !== 0) out.push({ period, trackingId: '', streamName, bytesOut, bytesIn });
      });
    });
    return out;
  }

  async usageAccount(accountId: string, unit: 'day' | 'hour', start: string, stop: string): Promise<UsageSum[]> {
    const periods = unit === 'day' ? daysBetween(start, stop) : hoursBetween(start, stop);
    if (periods.length === 0) return [];
    const pipe = this.c.redis.pipeline();
    for (const p of periods) pipe.hmget(keys.usageStreams(accountId, p), ...keys.usageTotalFields);
    const res = (await pipe.exec()) ?? [];
    const out: UsageSum[] = [];
    periods.forEach((period, p) => {
      const [err, v] = res[p];
      if (err) throw err;
      const [o, i] = v as Array<string | null>;
      if (o !== null || i !== null) out.push({ period, bytesOut: Number(o ?? 0), bytesIn: Number(i ?? 0) });
    });
    return out;
  }
}
