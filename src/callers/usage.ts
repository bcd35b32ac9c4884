// POST /hooks/usage: byte counts reported by anything that can measure them (deltas; a repeated
// reportId is counted once). 200 {"counted":true}, or {"counted":false,"duplicate":true}.
import { z } from 'zod';
import { text } from '../http/text.js';
import { issuesToFieldErrors } from '../http/validation.js';
import { ApiError } from '../domain/errors.js';
import type { Caller, Outcome } from './caller.js';
import { ACCOUNT_ID_MAX, STREAM_NAME_MAX, badRequest } from './shared.js';
import { copyWith } from '../domain/objects.js';

/** The largest epoch milliseconds a Date holds (ECMA-262 time values): later would be no day at all. */
const MAX_TIME_MS = 8.64e15;

const bytes = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** The report body; `caller` names one of the callers that keep sessions (the registry's). */
export function usageBodySchema(sessionCallers: readonly [string, ...string[]]) {
  return z
    .strictObject({
      reportId: text(1, 128).optional(),
      sessionId: text(1, 256).optional(),
      caller: z.enum(sessionCallers).optional(),
      tokenId: z.number().int().min(1).optional(),
      trackingId: text(1, STREAM_NAME_MAX).optional(),
      accountId: text(1, ACCOUNT_ID_MAX).optional(),
      streamName: text(1, STREAM_NAME_MAX).optional(),
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
}

/** The usage caller, for reports about the sessions of `sessionCallers`. */
export function usageCaller(sessionCallers: readonly [string, ...string[]]): Caller {
  const schema = usageBodySchema(sessionCallers);
  return {
    name: 'usage',
    capabilities: { sessionIdentity: false, reasks: false, terminate: false },
    routes: [
      {
        method: 'POST',
        path: '/hooks/usage',
        body: 'json',
        async read(req, ctx): Promise<Outcome> {
          const parsed = schema.safeParse(req.body ?? {});
          if (!parsed.success) return { reply: badRequest(issuesToFieldErrors(parsed.error.issues, 'body')) };
          const b = parsed.data;
          try {
            const counted = await ctx.ingestUsage(copyWith(b, { at: typeof b.at === 'string' ? Date.parse(b.at) : b.at }));
            return { reply: { status: 200, json: counted ? { counted: true } : { counted: false, duplicate: true } } };
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            return { reply: { status: e.status, json: { counted: false, message: e.message, ...e.details } } };
          }
        },
        docs: [{ summary: 'Byte counts for a session, token or tracking id (deltas; a repeated reportId is counted once)', body: schema, answer: '200 {"counted":true}, or {"counted":false,"duplicate":true}; 404 when it names nothing known' }],
      },
    ],
  };
}
