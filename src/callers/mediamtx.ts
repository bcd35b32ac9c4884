// MediaMTX: `authMethod: http` calls /hooks/mediamtx/auth with JSON {ip,user,password,token,
// action,path,protocol,id,query}; any 2xx admits. 401 only when no credentials came at all, so
// RTSP clients retry with theirs. runOn* hooks (through curl) post to /hooks/mediamtx/event.
import { z } from 'zod';
import { mediamtxAction } from '../contracts/decision.js';
import { normaliseIp } from '../domain/addresses.js';
import { TrustedProxies } from '../domain/addresses.js';
import { issuesToFieldErrors } from '../http/validation.js';
import type { LifecycleSignal } from '../lifecycle/events.js';
import type { Caller, CallerContext, CallerRoute, Outcome } from './caller.js';
import { copyWith } from '../domain/objects.js';
import { badRequest, field, nameable, perConfig, refusalBody, refusalStatus, queryValue, streamIdentity, tokenFromQuery, type StreamIdentity } from './shared.js';

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

const apiFromOf = perConfig((c) => new TrustedProxies(c.hooks.mediamtx.allowApiFrom));
const RECEIVED = { status: 200, json: { received: true } };

const readAuth: CallerRoute['read'] = (req, ctx) => {
  const parsed = mediamtxAuthSchema.safeParse(req.body ?? {});
  if (!parsed.success) return { reply: badRequest(issuesToFieldErrors(parsed.error.issues, 'body')) };
  const b = parsed.data;
  const ip = normaliseIp(b.ip ?? undefined);
  if (API_ACTIONS.has(b.action)) {
    if (apiFromOf(ctx.config).has(ip)) return { reply: { status: 200, json: { allowed: true } } };
    return { reply: { status: 403, json: { allowed: false, reason: 'api_not_allowed', message: `Unauthorized: ${b.action} not allowed from this address` } } };
  }
  const action = mediamtxAction(b.action);
  if (!action) return { reply: badRequest({ action: [`unknown MediaMTX action '${b.action}'`] }) };
  // MediaMTX's own order; then the query's token, or its legacy jwt parameter (MediaMTX reads it for
  // RTSP and RTMP itself, and for HLS and WebRTC only with authJWTInHTTPQuery: docs/callers.md#mediamtx)
  const token = b.token || b.password || tokenFromQuery(b.query ?? undefined) || queryValue(b.query ?? undefined, 'jwt') || undefined;
  const id = streamIdentity(b.path ?? '', ctx.config.hooks.mediamtx.pathPrefix, ctx.config.hooks.accountInPath);
  if (!nameable(id)) return { reply: { status: 403, json: refusalBody('stream_not_allowed') } };
  return {
    admit: {
      access: {
        action,
        token,
        streamName: id.streamName,
        accountId: id.accountId,
        clientIp: ip,
        protocol: (b.protocol ?? 'unknown').toLowerCase(),
        sessionId: b.id ?? undefined,
      },
      session: b.id ? { id: b.id, native: { id: b.id, path: b.path ?? '', protocol: (b.protocol ?? 'unknown').toLowerCase() } } : undefined,
      starts: true,
      credentialsGiven: Boolean(b.user || b.password || b.token) || token !== undefined,
    },
  };
};

const readEvent: CallerRoute['read'] = async (req, ctx): Promise<Outcome> => {
  const b: Record<string, unknown> = copyWith(req.query as Record<string, unknown>, (req.body ?? {}) as Record<string, unknown>);
  const name = (field(b, 'event') ?? '').replace(/^runOn/i, '').toLowerCase();
  const ev = EVENTS[name];
  const path = field(b, 'path') ?? field(b, 'MTX_PATH');
  if (!ev || !path) {
    const errors: Record<string, string[]> = {};
    if (!ev) errors.event = [`expected one of ${Object.keys(EVENTS).join(', ')} (runOn… names accepted)`];
    if (!path) errors.path = ['the MediaMTX path ($MTX_PATH) is required'];
    return { reply: badRequest(errors) };
  }
  const id = streamIdentity(path, ctx.config.hooks.mediamtx.pathPrefix, ctx.config.hooks.accountInPath);
  // A path no stream can be named by (no account segment with hooks.accountInPath): nothing to record.
  if (!nameable(id)) return { reply: RECEIVED };
  const sourceId = field(b, 'sourceId') ?? field(b, 'source_id') ?? field(b, 'MTX_SOURCE_ID');
  const readerId = field(b, 'readerId') ?? field(b, 'reader_id') ?? field(b, 'MTX_READER_ID');
  const segment = field(b, 'segmentPath') ?? field(b, 'segment_path') ?? field(b, 'MTX_SEGMENT_PATH');
  const signals: LifecycleSignal[] = [];
  switch (ev.kind) {
    case 'publish-start': {
      // The admission (auth call with this id) already started the feed; without one, the
      // publisher's query names the token. Awaited: the signal is queued before the answer
      // (runOn* hooks are not on a decision path).
      const started = await startFromEvent(ctx, sourceId, id, tokenFromQuery(field(b, 'query') ?? field(b, 'MTX_QUERY')));
      if (started) signals.push(started);
      break;
    }
    case 'publish-end':
      ctx.pollUsage(); // a last reading of the bytes before the session is forgotten
      signals.push({ kind: 'session_ended', caller: CALLER, sessionId: sourceId, action: 'publish', accountId: id.accountId, streamName: id.streamName });
      break;
    case 'read-start':
      break; // the admission of the reader started its session
    case 'read-end':
      ctx.pollUsage();
      signals.push({ kind: 'session_ended', caller: CALLER, sessionId: readerId, action: 'subscribe', accountId: id.accountId, streamName: id.streamName });
      break;
    case 'record-start':
    case 'record-done':
      signals.push({
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
  return { reply: RECEIVED, signals };
};

/** A ready/available hook for a publisher this instance did not admit (e.g. auth by another method). */
async function startFromEvent(ctx: CallerContext, sourceId: string | undefined, id: StreamIdentity, token: string | undefined): Promise<LifecycleSignal | undefined> {
  if (sourceId && (await ctx.sessionOf(CALLER, sourceId))) return undefined;
  if (!token) return undefined;
  const t = await ctx.publishTokenOf(token);
  if (!t) return undefined;
  return { kind: 'session_started', caller: CALLER, sessionId: sourceId, action: 'publish', accountId: t.accountId, streamName: id.streamName, tokenId: t.id };
}

export const mediamtx: Caller = {
  name: CALLER,
  capabilities: { sessionIdentity: true, reasks: false, terminate: true },
  routes: [
    {
      method: 'POST',
      path: '/hooks/mediamtx/auth',
      body: 'json',
      read: readAuth,
      docs: [{ summary: 'MediaMTX authMethod: http', body: mediamtxAuthSchema, answer: '200 allow; 401 no credentials (challenge); 403 deny' }],
    },
    {
      method: 'POST',
      path: '/hooks/mediamtx/event',
      body: 'json-or-form',
      read: readEvent,
      docs: [{ summary: 'MediaMTX runOn* hooks (JSON, form or query: event, path, sourceId, readerId, segmentPath)', answer: '200' }],
    },
  ],
  answer(d, admission) {
    if (d.allowed) return { status: 200, json: { allowed: true } };
    const status = refusalStatus(d, 'without-credentials', admission.credentialsGiven);
    const headers: Array<[string, string]> | undefined = status === 401 ? [['www-authenticate', 'Bearer realm="streamgate"']] : undefined;
    return { status, headers, json: { allowed: false, reason: d.reason, message: d.message } };
  },
};
