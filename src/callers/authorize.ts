// POST /hooks/authorize: the generic JSON decision endpoint. The body is an access request;
// 200 {"allowed":true,...} admits, 401/403 {"allowed":false,reason,message} refuses, 503 store down.
import { z } from 'zod';
import { text } from '../http/text.js';
import { normaliseIp, originHost } from '../policy/rules.js';
import { issuesToFieldErrors } from '../http/validation.js';
import type { Caller } from './caller.js';
import { ACCOUNT_ID_MAX, STREAM_NAME_MAX, badRequest, refusalStatus } from './shared.js';

export const authorizeBodySchema = z.strictObject({
  action: z.enum(['publish', 'subscribe']),
  token: z.string().max(8192).optional(),
  streamName: text(1, STREAM_NAME_MAX),
  accountId: text(1, ACCOUNT_ID_MAX).optional(),
  clientIp: z.string().max(64).refine((s) => normaliseIp(s) !== undefined, 'not an IP address').optional(),
  origin: z.string().max(2048).optional().meta({ description: 'Origin or Referer value, or a bare host' }),
  country: z.string().regex(/^[A-Za-z]{2}$/, 'expected an ISO 3166-1 alpha-2 code').optional(),
  protocol: z.string().min(1).max(32).optional().meta({ description: 'rtmp, rtsp, srt, webrtc, hls, ... (default generic)' }),
  sessionId: z.string().max(256).optional(),
});

export const authorize: Caller = {
  name: 'authorize',
  // The sessionId it is given is passed to the decision; it keeps no sessions of its own.
  capabilities: { sessionIdentity: false, reasks: false, terminate: false },
  routes: [
    {
      method: 'POST',
      path: '/hooks/authorize',
      body: 'json',
      read(req) {
        const parsed = authorizeBodySchema.safeParse(req.body ?? {});
        if (!parsed.success) return { reply: badRequest(issuesToFieldErrors(parsed.error.issues, 'body')) };
        const b = parsed.data;
        return {
          admit: {
            access: {
              action: b.action,
              token: b.token,
              streamName: b.streamName,
              accountId: b.accountId,
              clientIp: normaliseIp(b.clientIp),
              origin: originHost(b.origin),
              country: b.country?.toUpperCase(),
              protocol: (b.protocol ?? 'generic').toLowerCase(),
              sessionId: b.sessionId,
            },
            starts: false,
            credentialsGiven: b.token !== undefined,
          },
        };
      },
      docs: [
        {
          summary: 'Generic decision: 200 {"allowed":true,...}, 401/403 {"allowed":false,reason,message}, 503 store down',
          body: authorizeBodySchema,
          answer: 'The decision',
        },
      ],
    },
  ],
  answer(d) {
    if (d.allowed) {
      // the session-control fields stay inside (docs/api.md#asking-for-a-decision shows the answer)
      const { limits: _l, expiresOn: _e, lifetimeMs: _t, ...answer } = d;
      return { status: 200, json: { ...answer, allowed: true } };
    }
    return { status: refusalStatus(d, 'by-reason'), json: { allowed: false, reason: d.reason, message: d.message, decisionId: d.decisionId } };
  },
};
