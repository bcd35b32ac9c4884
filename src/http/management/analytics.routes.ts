// GET /api/analytics/tracking/total: bytes per tracking id and stream over [startDate, stopDate).
import { z } from 'zod';
import { route, type RouteSpec } from '../route.js';
import type { UsageService } from '../../analytics/usage.js';
import { MAX_NAME, wellFormed } from '../../domain/matchers.js';
import { utcDay } from '../../analytics/usage.js';

const MAX_DAYS = 366;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** YYYY-MM-DD or an ISO date-time, as epoch ms (UTC); NaN when it is neither. */
function parseDate(s: string): number {
  if (DATE.test(s)) {
    const ms = Date.parse(`${s}T00:00:00Z`);
    return utcDay(ms) === s ? ms : NaN; // refuses 2026-02-30
  }
  return /^\d{4}-\d{2}-\d{2}T/.test(s) ? Date.parse(s) : NaN;
}

const dateParam = z
  .string()
  .max(64)
  .refine((s) => !Number.isNaN(parseDate(s)), 'expected YYYY-MM-DD or an ISO 8601 date-time (UTC)');

export const trackingTotalQuery = z
  .object({
    trackingIds: z
      .union([z.string(), z.array(z.string())])
      .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter((x) => x !== ''))
      .pipe(z.array(z.string().max(MAX_NAME).refine(wellFormed, 'not valid Unicode text')).min(1, 'give 1 to 10 tracking ids').max(10, 'at most 10 tracking ids')),
    startDate: dateParam,
    stopDate: dateParam,
  })
  .superRefine((q, ctx) => {
    const start = parseDate(q.startDate);
    const stop = parseDate(q.stopDate);
    if (Number.isNaN(start) || Number.isNaN(stop)) return;
    if (stop <= start) ctx.addIssue({ code: 'custom', path: ['stopDate'], message: 'must be after startDate' });
    else if (stop - start > MAX_DAYS * 86400000) ctx.addIssue({ code: 'custom', path: ['stopDate'], message: `the range may cover at most ${MAX_DAYS} days` });
  });

const totalsOut = z.record(z.string(), z.array(z.object({ streamName: z.string(), bytesOut: z.number(), bytesIn: z.number() })));

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

export function analyticsRoutes(usage: UsageService): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: '/api/analytics/tracking/total',
      summary: 'Total bytes per tracking id and stream, startDate inclusive, stopDate exclusive (UTC days)',
      tag: 'Analytics',
      auth: 'apiSecret',
      query: trackingTotalQuery,
      response: totalsOut,
      handler: async ({ account, query }) => {
        const [start, stop] = dayRange(query.startDate, query.stopDate);
        const rows = await usage.query(account.id, query.trackingIds, start, stop);
        const out: Record<string, Array<{ streamName: string; bytesOut: number; bytesIn: number }>> = Object.create(null);
        for (const id of query.trackingIds) out[id] = [];
        for (const r of rows) out[r.trackingId]?.push({ streamName: r.streamName, bytesOut: r.bytesOut, bytesIn: r.bytesIn });
        return out;
      },
    }),
  ];
}
