// GET /api/analytics/{account,tracking,streams,tracking/streams}/{total,series}: bytes of the
// account, per tracking id or per stream over [startDate, stopDate), in the hosted platform's
// analytics shapes (docs/api.md#analytics-bandwidth-per-tracking-id-and-per-stream).
import { z } from 'zod';
import { route, type RouteSpec } from '../route.js';
import { RESOLUTIONS, utcDay, utcHour, type UsageRange, type UsageService } from '../../analytics/usage.js';
import { MAX_NAME, wellFormed } from '../../domain/matchers.js';

const MAX_DAYS = 366;
/** Hourly points a series answers at most per name: 31 days. */
const MAX_HOURS = 744;
const MAX_NAMES = 10;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** YYYY-MM-DD or an ISO date-time, as epoch ms (UTC); NaN when it is neither. */
function parseDate(s: string): number {
  if (DATE.test(s)) {
    const ms = Date.parse(`${s}T00:00:00Z`);
    return !Number.isNaN(ms) && utcDay(ms) === s ? ms : NaN; // refuses 2026-13-01 and 2026-02-30
  }
  return /^\d{4}-\d{2}-\d{2}T/.test(s) ? Date.parse(s) : NaN;
}

const dateParam = z
  .string()
  .max(64)
  .refine((s) => !Number.isNaN(parseDate(s)), 'expected YYYY-MM-DD or an ISO 8601 date-time (UTC)');

/**
 * 1..10 names, as repeated parameters (`a=x&a=y`, what the hosted clients send) or comma-separated
 * (`a=x,y`); blanks around commas are dropped.
 */
const nameList = (what: string) =>
  z
    .unknown()
    .transform((v, ctx) => {
      const list = typeof v === 'string' ? [v] : Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
      if (list === null) {
        ctx.addIssue({ code: 'custom', message: `give 1 to ${MAX_NAMES} ${what}, repeated or comma-separated` });
        return z.NEVER;
      }
      return list.flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x !== '');
    })
    .pipe(
      z
        .array(z.string().max(MAX_NAME).refine(wellFormed, 'not valid Unicode text'))
        .min(1, `give 1 to ${MAX_NAMES} ${what}`)
        .max(MAX_NAMES, `at most ${MAX_NAMES} ${what}`),
    )
    .meta({ type: 'array', items: { type: 'string', maxLength: MAX_NAME }, minItems: 1, maxItems: MAX_NAMES, description: `1 to ${MAX_NAMES} ${what}, repeated or comma-separated` });

const resolutionParam = z.enum(RESOLUTIONS, { error: 'expected Hour, Day or Month' }).meta({
  description:
    'Hour: a key per UTC hour (hourly usage is kept for the current UTC day and analytics.hourlyRetentionDays days before it; at most 744 hours); Day: a key per UTC day; Month: a key per month (its first day), summing the days of the range in it',
});

const range = {
  startDate: dateParam.meta({ description: 'inclusive: YYYY-MM-DD or an ISO 8601 date-time (UTC); a date-time counts its whole day (its whole hour with resolution=Hour)' }),
  stopDate: dateParam.meta({ description: 'exclusive: YYYY-MM-DD or an ISO 8601 date-time (UTC); a date-time inside a day counts that day (inside an hour that hour, with resolution=Hour)' }),
};

function rangeRule(q: { startDate: string; stopDate: string }, ctx: z.RefinementCtx): void {
  const start = parseDate(q.startDate);
  const stop = parseDate(q.stopDate);
  if (Number.isNaN(start) || Number.isNaN(stop)) return;
  if (stop <= start) ctx.addIssue({ code: 'custom', path: ['stopDate'], message: 'must be after startDate' });
  else if (stop - start > MAX_DAYS * 86400000) ctx.addIssue({ code: 'custom', path: ['stopDate'], message: `the range may cover at most ${MAX_DAYS} days` });
}

/** Series: the range rule, and with Hour at most MAX_HOURS hours (counted as hourRange counts them). */
function seriesRule(q: { resolution: string; startDate: string; stopDate: string }, ctx: z.RefinementCtx): void {
  rangeRule(q, ctx);
  const start = parseDate(q.startDate);
  const stop = parseDate(q.stopDate);
  // a range the range rule refused has its message already
  if (q.resolution !== 'Hour' || Number.isNaN(start) || Number.isNaN(stop) || stop <= start || stop - start > MAX_DAYS * 86400000) return;
  const [first, last] = hourRange(q.startDate, q.stopDate);
  if ((Date.parse(`${last}:00:00Z`) - Date.parse(`${first}:00:00Z`)) / 3600000 > MAX_HOURS) {
    ctx.addIssue({ code: 'custom', path: ['stopDate'], message: `with resolution=Hour the range may cover at most ${MAX_HOURS} hours (31 days)` });
  }
}

export const trackingTotalQuery = z.object({ trackingIds: nameList('tracking ids'), ...range }).superRefine(rangeRule);
export const trackingSeriesQuery = z.object({ resolution: resolutionParam, trackingIds: nameList('tracking ids'), ...range }).superRefine(seriesRule);
export const streamsTotalQuery = z.object({ streamNames: nameList('stream names'), ...range }).superRefine(rangeRule);
export const streamsSeriesQuery = z.object({ resolution: resolutionParam, streamNames: nameList('stream names'), ...range }).superRefine(seriesRule);
export const accountTotalQuery = z.object({ ...range }).superRefine(rangeRule);
export const accountSeriesQuery = z.object({ resolution: resolutionParam, ...range }).superRefine(seriesRule);

// ---- response shapes (documentation) ----

const bandwidth = z.object({ bytesOut: z.int(), bytesIn: z.int() });
const trackingRow = z.object({
  streamName: z.string(),
  standardStream: bandwidth,
  restream: z.object({ bytesOut: z.int(), bytesIn: z.int(), duration: z.int() }).meta({ description: 'always zero: Streamgate does not restream' }),
  geoCascade: bandwidth.meta({ description: 'always zero: Streamgate does not geo-cascade' }),
});
const restreamUsage = z.object({ bytesOut: z.int(), bytesIn: z.int(), secondsUsed: z.int() });
const period = z.string().meta({ description: 'ISO 8601 date-time of the period start, e.g. 2026-01-26T00:00:00Z' });
const trackingTotalOut = z.record(z.string(), z.array(trackingRow));
const trackingSeriesOut = z.record(z.string(), z.record(period, z.array(trackingRow)));
const streamTotalOut = z.object({
  bytesOut: z.int(),
  bytesIn: z.int(),
  standardStream: bandwidth,
  restream: restreamUsage.meta({ description: 'always zero: Streamgate does not restream' }),
  geoCascade: bandwidth.meta({ description: 'always zero: Streamgate does not geo-cascade' }),
});
const seriesOut = z.object({
  bandwidth: z.record(period, bandwidth),
  standardStream: z.record(period, bandwidth),
  restream: z.record(period, restreamUsage),
  geoCascade: z.record(period, bandwidth),
});
const streamsTotalOut = z.record(z.string(), streamTotalOut);
const streamsSeriesOut = z.record(z.string(), seriesOut);
const streamTrackingRow = z.object({
  trackingId: z.string().nullable().meta({ description: 'null: the usage of tokens and reports without a tracking id' }),
  standardStream: bandwidth,
  restream: z.object({ bytesOut: z.int(), bytesIn: z.int(), duration: z.int() }).meta({ description: 'always zero: Streamgate does not restream' }),
  geoCascade: bandwidth.meta({ description: 'always zero: Streamgate does not geo-cascade' }),
});
const trackingStreamsTotalOut = z.record(z.string(), z.array(streamTrackingRow));
const trackingStreamsSeriesOut = z.record(z.string(), z.record(period, z.array(streamTrackingRow)));

/**
 * Days are UTC and the unit of aggregation: the query covers the days that start in
 * [startDate, stopDate); a startDate inside a day counts that whole day.
 */
function dayRange(startDate: string, stopDate: string): [string, string] {
  const start = utcDay(parseDate(startDate));
  const stopMs = parseDate(stopDate);
  const stopDay = utcDay(stopMs);
  // a stop inside a day includes that day (its start is before stop)
  const stop = Date.parse(`${stopDay}T00:00:00Z`) < stopMs ? utcDay(stopMs + 86400000) : stopDay;
  return [start, stop];
}

/**
 * Hours are the unit with Hour: the hours that start in [startDate, stopDate); a startDate inside
 * an hour counts that whole hour, a stopDate inside one includes it. YYYY-MM-DDTHH bounds.
 */
function hourRange(startDate: string, stopDate: string): [string, string] {
  const stopMs = parseDate(stopDate);
  const stopHour = utcHour(stopMs);
  const stop = Date.parse(`${stopHour}:00:00Z`) < stopMs ? utcHour(stopMs + 3600000) : stopHour;
  return [utcHour(parseDate(startDate)), stop];
}

function seriesRange(q: { resolution: UsageRange['resolution']; startDate: string; stopDate: string }): UsageRange {
  const [start, stop] = q.resolution === 'Hour' ? hourRange(q.startDate, q.stopDate) : dayRange(q.startDate, q.stopDate);
  return { resolution: q.resolution, start, stop };
}

export function analyticsRoutes(usage: UsageService): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: '/api/analytics/tracking/total',
      summary: 'Total bytes per tracking id and stream, startDate inclusive, stopDate exclusive (UTC days)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: trackingTotalQuery,
      response: trackingTotalOut,
      handler: async ({ account, query }) => usage.trackingTotal(account.id, query.trackingIds, ...dayRange(query.startDate, query.stopDate)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/tracking/series',
      summary: 'Bytes per tracking id and stream for every hour, day or month of the range ([] for a period without usage)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: trackingSeriesQuery,
      response: trackingSeriesOut,
      handler: async ({ account, query }) => usage.trackingSeries(account.id, query.trackingIds, seriesRange(query)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/streams/total',
      summary: 'Total bytes per stream, every tracking id and untracked usage together (zeros without usage)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: streamsTotalQuery,
      response: streamsTotalOut,
      handler: async ({ account, query }) => usage.streamsTotal(account.id, query.streamNames, ...dayRange(query.startDate, query.stopDate)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/streams/series',
      summary: 'Bytes per stream for every hour, day or month of the range (zeros for a period without usage)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: streamsSeriesQuery,
      response: streamsSeriesOut,
      handler: async ({ account, query }) => usage.streamsSeries(account.id, query.streamNames, seriesRange(query)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/account/total',
      summary: 'Total bytes of the account: every stream, tracking id and the untracked usage (zeros without usage)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: accountTotalQuery,
      response: streamTotalOut,
      handler: async ({ account, query }) => usage.accountTotal(account.id, ...dayRange(query.startDate, query.stopDate)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/account/series',
      summary: 'Bytes of the account for every hour, day or month of the range (zeros for a period without usage)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: accountSeriesQuery,
      response: seriesOut,
      handler: async ({ account, query }) => usage.accountSeries(account.id, seriesRange(query)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/tracking/streams/total',
      summary: 'Total bytes per stream and tracking id, the untracked usage first (trackingId null); [] for a stream without usage',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: streamsTotalQuery,
      response: trackingStreamsTotalOut,
      handler: async ({ account, query }) => usage.trackingStreamsTotal(account.id, query.streamNames, ...dayRange(query.startDate, query.stopDate)),
    }),
    route({
      method: 'get',
      path: '/api/analytics/tracking/streams/series',
      summary: 'Bytes per stream and tracking id for every hour, day or month of the range ([] for a period without usage)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: streamsSeriesQuery,
      response: trackingStreamsSeriesOut,
      handler: async ({ account, query }) => usage.trackingStreamsSeries(account.id, query.streamNames, seriesRange(query)),
    }),
  ];
}
