// MediaMTX: `authMethod: http` calls /hooks/mediamtx/auth with JSON {ip,user,password,token,
// action,path,protocol,id,query}; any 2xx admits. 401 only when no credentials came at all, so
// RTSP clients retry with theirs. runOn* hooks (through curl) post to /hooks/mediamtx/event.
import type { Request, Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import { z } from 'zod';
import type { Services } from '../../services.js';
import { bodyParsers } from '../middleware.js';
import type { AccessRequest, Action } from '../../policy/types.js';
import { normaliseIp } from '../../policy/rules.js';
import { TrustedProxies } from '../client.js';
import { field, reportStart, streamIdentity, tokenFromQuery } from './common.js';
import { badHookRequest } from './authorize.js';
import { tokenHash } from '../../domain/tokens.js';
import { issuesToFieldErrors } from '../validation.js';
import { sendJson } from '../answer.js';

const CALLER = 'mediamtx';

const str = (max: number) => z.string().max(max).nullish();
export const mediamtxAuthSchema = z.object({
  ip: str(64),
  user: str(1024),
  password: str(4096),
  token: str(8192),
  action: z.string().max(32),
  path: str(1024),
  protocol: str(32),
  id: str(128),
  query: str(8192),
  userAgent: str(1024),
});

const ACTIONS: Record<string, Action> = { publish: 'publish', read: 'subscribe', playback: 'subscribe' };
const API_ACTIONS = new Set(['api', 'metrics', 'pprof']);

/** runOn* hooks, old and new names, and what each means here. */
const EVENTS: Record<string, { kind: 'publish-start' | 'publish-end' | 'read-start' | 'read-end' | 'record-start' | 'record-done' }> = {
  ready: { kind: 'publish-start' },
  available: { kind: 'publish-start' },
  online: { kind: 'publish-start' },
  notready: { kind: 'publish-end' },
  unavailable: { kind: 'publish-end' },
  offline: { kind: 'publish-end' },
  read: { kind: 'read-start' },
  unread: { kind: 'read-end' },
  recordsegmentcreate: { kind: 'record-start' },
  recordsegmentcomplete: { kind: 'record-done' },
};

export function mountMediamtx(app: DecisionRoutes, s: Services): void {
  const { pathPrefix } = s.config.hooks.mediamtx;
  const apiFrom = new TrustedProxies(s.config.hooks.mediamtx.allowApiFrom);
  const { accountInPath } = s.config.hooks;
  const limit = s.config.server.bodyLimitBytes;

  app.post('/hooks/mediamtx/auth', ...bodyParsers('json', limit), async (req: Request, res: Response) => {
    const parsed = mediamtxAuthSchema.safeParse(req.body ?? {});
    if (!parsed.success) return badHookRequest(res, issuesToFieldErrors(parsed.error.issues, 'body'));
    const b = parsed.data;
    const ip = normaliseIp(b.ip ?? undefined);
    if (API_ACTIONS.has(b.action)) {
      if (apiFrom.has(ip)) return sendJson(res, 200, { allowed: true });
      return sendJson(res, 403, { allowed: false, reason: 'api_not_allowed', message: `Unauthorized: ${b.action} not allowed from this address` });
    }
    const action = ACTIONS[b.action];
    if (!action) return badHookRequest(res, { action: [`unknown MediaMTX action '${b.action}'`] });
    const token = b.token || b.password || tokenFromQuery(b.query ?? undefined) || undefined;
    const noCredentials = !b.user && !b.password && !b.token && token === undefined;
    const id = streamIdentity(b.path ?? '', pathPrefix, accountInPath);
    const access: AccessRequest = {
      action,
      token,
      streamName: id.streamName,
      accountId: id.accountId,
      clientIp: ip,
      protocol: (b.protocol ?? 'unknown').toLowerCase(),
      sessionId: b.id ?? undefined,
    };
    if (id.streamName === '' || id.streamName.length > 128) {
      return sendJson(res, 403, { allowed: false, reason: 'stream_not_allowed', message: 'Unauthorized: Stream name not allowed' });
    }
    const d = await s.enforcer.decide(access, CALLER);
    if (d.allowed) {
      reportStart(s, CALLER, access, d);
      return sendJson(res, 200, { allowed: true });
    }
    const status = d.status === 503 ? 503 : noCredentials ? 401 : 403;
    if (status === 401) res.setHeader('www-authenticate', 'Bearer realm="streamgate"');
    sendJson(res, status, { allowed: false, reason: d.reason, message: d.message });
  });

  app.post('/hooks/mediamtx/event', ...bodyParsers('json-or-form', limit), async (req: Request, res: Response) => {
    const b = { ...(req.query as Record<string, unknown>), ...((req.body ?? {}) as Record<string, unknown>) };
    const name = (field(b, 'event') ?? '').replace(/^runOn/i, '').toLowerCase();
    const ev = EVENTS[name];
    const path = field(b, 'path') ?? field(b, 'MTX_PATH');
    if (!ev || !path) {
      const errors: Record<string, string[]> = {};
      if (!ev) errors.event = [`expected one of ${Object.keys(EVENTS).join(', ')} (runOn… names accepted)`];
      if (!path) errors.path = ['the MediaMTX path ($MTX_PATH) is required'];
      return badHookRequest(res, errors);
    }
    const id = streamIdentity(path, pathPrefix, accountInPath);
    const sourceId = field(b, 'sourceId') ?? field(b, 'source_id') ?? field(b, 'MTX_SOURCE_ID');
    const readerId = field(b, 'readerId') ?? field(b, 'reader_id') ?? field(b, 'MTX_READER_ID');
    const segment = field(b, 'segmentPath') ?? field(b, 'segment_path') ?? field(b, 'MTX_SEGMENT_PATH');
    switch (ev.kind) {
      case 'publish-start':
        // The admission (auth call with this id) already started the feed; without one, the
        // publisher's query names the token.
        // awaited: the signal is queued before the answer (runOn* hooks are not on a decision path)
        await startFromEvent(s, sourceId, id, tokenFromQuery(field(b, 'query') ?? field(b, 'MTX_QUERY')));
        break;
      case 'publish-end':
        void s.poller?.pollOnce(); // a last reading of the bytes before the session is forgotten
        s.lifecycle.signal({ kind: 'session_ended', caller: CALLER, sessionId: sourceId, action: 'publish', accountId: id.accountId, streamName: id.streamName });
        break;
      case 'read-start':
        break; // the admission of the reader started its session
      case 'read-end':
        void s.poller?.pollOnce();
        s.lifecycle.signal({ kind: 'session_ended', caller: CALLER, sessionId: readerId, action: 'subscribe', accountId: id.accountId, streamName: id.streamName });
        break;
      case 'record-start':
      case 'record-done':
        s.lifecycle.signal({
          kind: 'recording',
          event: ev.kind === 'record-start' ? 'started' : 'completed',
          caller: CALLER,
          sessionId: sourceId,
          accountId: id.accountId,
          streamName: id.streamName,
          path: segment,
          metadata: field(b, 'segmentDuration') ? { duration: field(b, 'segmentDuration') } : undefined,
        });
        break;
    }
    res.status(200).json({ received: true });
  });
}

/** A ready/available hook for a publisher this instance did not admit (e.g. auth by another method). */
async function startFromEvent(s: Services, sourceId: string | undefined, id: { streamName: string; accountId?: string }, token: string | undefined) {
  if (sourceId && (await s.store.getSession(CALLER, sourceId).catch(() => null))) return;
  if (!token) return;
  const t = await s.enforcer.lookup.byHashFresh(tokenHash(token)).catch(() => null);
  if (!t || t.kind !== 'publish') return;
  s.lifecycle.signal({ kind: 'session_started', caller: CALLER, sessionId: sourceId, action: 'publish', accountId: t.accountId, streamName: id.streamName, tokenId: t.id });
}
