// POST /hooks/authorize: the generic JSON decision endpoint. The body is an access request;
// 200 {"allowed":true,...} admits, 401/403 {"allowed":false,reason,message} refuses, 503 store down.
import type { Request, Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import { z } from 'zod';
import { text } from '../text.js';
import type { Enforcer } from '../../enforce/enforcer.js';
import { MAX_NAME } from '../../domain/matchers.js';
import { normaliseIp, originHost } from '../../policy/rules.js';
import type { AccessRequest } from '../../policy/types.js';
import { issuesToFieldErrors } from '../validation.js';
import { bodyParsers } from '../middleware.js';
import { sendJson } from '../answer.js';

export const authorizeBodySchema = z.strictObject({
  action: z.enum(['publish', 'subscribe']),
  token: z.string().max(8192).optional(),
  streamName: text(1, MAX_NAME),
  accountId: text(1, 64).optional(),
  clientIp: z.string().max(64).refine((s) => normaliseIp(s) !== undefined, 'not an IP address').optional(),
  origin: z.string().max(2048).optional().meta({ description: 'Origin or Referer value, or a bare host' }),
  country: z.string().regex(/^[A-Za-z]{2}$/, 'expected an ISO 3166-1 alpha-2 code').optional(),
  protocol: z.string().min(1).max(32).optional().meta({ description: 'rtmp, rtsp, srt, webrtc, hls, ... (default generic)' }),
  sessionId: z.string().max(256).optional(),
});

/** Writes a hook answer for a bad request: 400, the problems named, nothing decided. */
export function badHookRequest(res: Response, errors: Record<string, string[]>): void {
  sendJson(res, 400, { allowed: false, reason: 'bad_request', message: 'Validation errors', errors });
}

export function mountAuthorize(app: DecisionRoutes, enforcer: Enforcer, bodyLimitBytes: number): void {
  app.post('/hooks/authorize', ...bodyParsers('json', bodyLimitBytes), async (req: Request, res: Response) => {
    const parsed = authorizeBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) return badHookRequest(res, issuesToFieldErrors(parsed.error.issues, 'body'));
    const b = parsed.data;
    const access: AccessRequest = {
      action: b.action,
      token: b.token,
      streamName: b.streamName,
      accountId: b.accountId,
      clientIp: normaliseIp(b.clientIp),
      origin: originHost(b.origin),
      country: b.country?.toUpperCase(),
      protocol: (b.protocol ?? 'generic').toLowerCase(),
      sessionId: b.sessionId,
    };
    const d = await enforcer.decide(access, 'authorize');
    if (d.allowed) {
      sendJson(res, 200, { ...d, allowed: true });
      return;
    }
    sendJson(res, d.status, { allowed: false, reason: d.reason, message: d.message, decisionId: d.decisionId });
  });
}
