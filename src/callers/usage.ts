// POST /hooks/usage: byte counts reported by anything that can measure them (deltas; a repeated
// reportId is counted once). 200 {"counted":true}, or {"counted":false,"duplicate":true}.
import type { Request, Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { bodyParsers } from '../middleware.js';
import { MAX_NAME } from '../../domain/matchers.js';
import { text } from '../text.js';
import { badHookRequest } from './authorize.js';
import { issuesToFieldErrors } from '../validation.js';
import { ApiError } from '../../errors.js';

/** The largest epoch milliseconds a Date holds (ECMA-262 time values): later would be no day at all. */
const MAX_TIME_MS = 8.64e15;

const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const usageBodySchema = z
  .strictObject({
    reportId: text(1, 128).optional(),
    sessionId: text(1, 256).optional(),
    caller: z.enum(['mediamtx', 'srs', 'nginx-rtmp', 'ome', 'events']).optional(),
    tokenId: z.number().int().min(1).optional(),
    trackingId: text(1, MAX_NAME).optional(),
    accountId: text(1, 64).optional(),
    streamName: text(1, MAX_NAME).optional(),
    bytesOut: bytes,
    bytesIn: bytes.optional(),
    at: z
      .union([
        z.number().int().min(0).max(MAX_TIME_MS, `at most ${MAX_TIME_MS} (the last instant a date can name)`),
        z.string().datetime({ offset: true }),
      ])
      .optional()
      .meta({ description: 'epoch ms or ISO date-time (default now)' }),
  })
  .superRefine((b, ctx) => {
    if (b.sessionId === undefined && b.tokenId === undefined && b.trackingId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['sessionId'], message: 'give sessionId, tokenId or trackingId' });
    }
    if (b.sessionId === undefined && b.tokenId === undefined && b.trackingId !== undefined && b.accountId === undefined) {
      ctx.addIssue({ code: 'custom', path: ['accountId'], message: 'a report that names only a trackingId also names its accountId' });
    }
  });

export function mountUsage(app: DecisionRoutes, s: Services): void {
  app.post('/hooks/usage', ...bodyParsers('json', s.config.server.bodyLimitBytes), async (req: Request, res: Response) => {
    const parsed = usageBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) return badHookRequest(res, issuesToFieldErrors(parsed.error.issues, 'body'));
    const b = parsed.data;
    try {
      const counted = await s.usage.ingest({ ...b, at: typeof b.at === 'string' ? Date.parse(b.at) : b.at });
      res.status(200).json(counted ? { counted: true } : { counted: false, duplicate: true });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      res.status(e.status).json({ counted: false, message: e.message, ...e.details });
    }
  });
}
