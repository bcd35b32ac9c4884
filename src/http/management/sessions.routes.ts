// Running sessions (docs/api.md#running-sessions): the session registry's live sessions of the
// account (a Streamgate extension), a cut by id, the hosted stream stop calls, and the hosted
// monitoring of live streams, filled from what the registries know (docs/compatibility.md#monitoring).
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import type { Session, Store } from '../../store/store.js';
import type { TokenRecord } from '../../domain/tokens.js';
import type { SessionControl } from '../../sessions/control.js';
import { route, type RouteSpec } from '../route.js';
import { queryBool } from './schemas.js';
import type { AuditLog } from '../../audit/log.js';

const MAX_PAGE = 100;

/** A session as the API answers it: never the caller's native ids (they can name the connection's URL). */
export function sessionView(s: Session): Record<string, unknown> {
  return {
    id: s.id,
    caller: s.caller,
    callerSessionId: s.sessionId,
    accountId: s.accountId,
    tokenId: s.tokenId ?? null,
    streamId: `${s.accountId}/${s.streamName}`,
    streamName: s.streamName,
    direction: s.action,
    clientIp: s.clientIp ?? null,
    protocol: s.protocol ?? null,
    trackingId: s.trackingId ?? null,
    startedAt: s.startedOn,
    lastSeenAt: s.lastSeenOn,
    endedReason: s.endedReason ?? null,
    endedAt: s.endedOn ?? null,
  };
}

const sessionOut = z.object({
  id: z.string(),
  caller: z.string(),
  callerSessionId: z.string(),
  accountId: z.string(),
  tokenId: z.number().int().nullable(),
  streamId: z.string(),
  streamName: z.string(),
  direction: z.enum(['publish', 'subscribe']),
  clientIp: z.string().nullable(),
  protocol: z.string().nullable(),
  trackingId: z.string().nullable(),
  startedAt: z.string(),
  lastSeenAt: z.string(),
  endedReason: z.string().nullable(),
  endedAt: z.string().nullable(),
});

const paginationOut = z.object({ totalItems: z.number().int(), totalPages: z.number().int(), itemsOnPage: z.number().int() });
const pagination = (total: number, itemsOnPage: number) => ({ totalItems: total, totalPages: Math.ceil(total / itemsOnPage), itemsOnPage });

const page = z.coerce.number().int().min(1).max(2147483647).default(1);
const itemsOnPage = (d: number) => z.coerce.number().int().min(1).max(MAX_PAGE).default(d);

/** A stream named by its hosted streamId (`<accountId>/<name>`) or by its bare name. */
const streamNameOf = (accountId: string, streamId: string): string => (streamId.startsWith(`${accountId}/`) ? streamId.slice(accountId.length + 1) : streamId);

const sessionsQuery = z.object({
  streamId: z.string().min(1).max(512).optional().meta({ description: '<accountId>/<streamName>, or the bare stream name' }),
  tokenId: z.coerce.number().int().min(1).max(2147483647).optional(),
  direction: z.enum(['publish', 'subscribe']).optional(),
  page,
  itemsOnPage: itemsOnPage(25),
});

const sessionIdParams = z.object({ id: z.string().min(1).max(64) });

const stoppedOut = z.object({ stoppingLevel: z.enum(['Account', 'Stream', 'Feed', 'Server', 'Token', 'None']).nullable() });

/** The hosted StopStreamRequest: {streamId}. */
const stopBody = z.strictObject({ streamId: z.string().min(1).max(512).meta({ description: '<accountId>/<streamName>, or the bare stream name' }) });

const monitoringQuery = z.object({
  page,
  itemsOnPage: itemsOnPage(10),
  sortBy: z
    .string()
    .regex(/^(StreamId|Cluster|StartTime|Duration|Live|ViewerCount|Restream)$/i, 'expected StreamId, Cluster, StartTime, Duration, Live, ViewerCount or Restream')
    .default('Live'),
  isDescending: queryBool.default(true),
  isActive: queryBool.optional(),
  searchSubstring: z.string().max(512).optional(),
  isSecure: queryBool.optional(),
  isRecordingAllowed: queryBool.optional(),
  isMultisource: queryBool.optional(),
});

const feedOut = z.object({
  streamId: z.string(),
  feedId: z.string(),
  serverId: z.string(),
  active: z.boolean(),
  startTime: z.string(),
  endTime: z.string().nullable(),
  isRecordingAllowed: z.boolean(),
  type: z.string(),
  tokenId: z.number().int(),
});
const streamDetailsOut = z.object({
  streamId: z.string(),
  streamName: z.string(),
  clusters: z.array(z.string()),
  secureStream: z.boolean(),
  isRecordingAllowed: z.boolean(),
  multisource: z.boolean(),
  live: z.boolean(),
  startTime: z.string(),
  endTime: z.string().nullable(),
  viewerCount: z.number().int(),
  hasRedundant: z.boolean(),
  restreaming: z.boolean(),
  feeds: z.array(feedOut),
});
type StreamDetails = z.infer<typeof streamDetailsOut>;

/** One live stream's StreamDetails: its publishers in the session registry, their tokens, its viewer count. */
async function streamDetails(store: Store, accountId: string, streamName: string, publishers: Session[]): Promise<StreamDetails> {
  const tokens = new Map<number, TokenRecord | null>();
  for (const p of publishers) if (p.tokenId !== undefined && !tokens.has(p.tokenId)) tokens.set(p.tokenId, await store.getToken(accountId, 'publish', p.tokenId));
  const tokenOf = (p: Session) => (p.tokenId !== undefined ? tokens.get(p.tokenId) ?? null : null);
  const first = publishers[0]!;
  const t = tokenOf(first);
  const { total: viewers } = await store.listSessions(accountId, { streamName, action: 'subscribe' }, { offset: 0, limit: 0 });
  const streamId = `${accountId}/${streamName}`;
  return {
    streamId,
    streamName,
    clusters: [],
    secureStream: t?.subscribeRequiresAuth ?? false,
    isRecordingAllowed: t?.record ?? false,
    multisource: t?.multisource ?? false,
    live: true,
    startTime: first.startedOn,
    endTime: null,
    viewerCount: viewers,
    hasRedundant: false,
    restreaming: false,
    feeds: publishers.map((p) => ({
      streamId,
      feedId: p.feedId ?? p.id,
      serverId: p.caller,
      active: true,
      startTime: p.startedOn,
      endTime: null,
      isRecordingAllowed: tokenOf(p)?.record ?? false,
      type: p.protocol ?? 'unknown',
      tokenId: p.tokenId ?? 0,
    })),
  };
}

/** Every live publish session of the account, by stream. */
async function liveStreams(sessions: SessionControl, accountId: string): Promise<Map<string, Session[]>> {
  const out = new Map<string, Session[]>();
  for (const s of await sessions.all(accountId, { action: 'publish' })) out.set(s.streamName, [...(out.get(s.streamName) ?? []), s]);
  return out;
}

/**
 * The session routes. `audit`: cuts and stops are recorded (docs/api.md#audit-log), each as an entry
 * of its own once done: a cut ends registry records and asks media servers, not one store write.
 */
export function sessionRoutes(store: Store, sessions: SessionControl, audit?: AuditLog): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: '/api/sessions',
      summary: "Streamgate: the account's live sessions (publishers and viewers admitted by media servers), oldest first",
      tag: 'Sessions',
      auth: 'apiSecret',
      query: sessionsQuery,
      response: z.object({ pagination: paginationOut, data: z.array(sessionOut) }),
      handler: async ({ account, query }) => {
        const filter = {
          streamName: query.streamId === undefined ? undefined : streamNameOf(account.id, query.streamId),
          tokenId: query.tokenId,
          action: query.direction,
        };
        const r = await store.listSessions(account.id, filter, { offset: (query.page - 1) * query.itemsOnPage, limit: query.itemsOnPage });
        return { pagination: pagination(r.total, query.itemsOnPage), data: r.items.map(sessionView) };
      },
    }),
    route({
      method: 'get',
      path: '/api/sessions/:id',
      summary: 'Streamgate: one session (live, or ended a short while ago: endedReason says why)',
      tag: 'Sessions',
      auth: 'apiSecret',
      params: sessionIdParams,
      response: sessionOut,
      handler: async ({ account, params }) => {
        const s = await store.getSessionById(account.id, params.id);
        if (!s) throw new ApiError(404, `No session with id: ${params.id}`);
        return sessionView(s);
      },
    }),
    route({
      method: 'delete',
      path: '/api/sessions/:id',
      summary: "Streamgate: cuts a live session (through its media server's API when configured, else at its next re-ask); its credential is held for enforcement.terminatedHoldSeconds",
      tag: 'Sessions',
      auth: 'apiSecret',
      params: sessionIdParams,
      response: sessionOut,
      handler: async ({ account, params, actor }) => {
        const s = await sessions.cut(account.id, params.id);
        if (!s) throw new ApiError(404, `No live session with id: ${params.id}`);
        await audit?.note(actor, account.id, 'session', s.id, 'cut', {
          streamName: { from: s.streamName },
          direction: { from: s.action },
          tokenId: { from: s.tokenId ?? null },
          endedReason: { to: s.endedReason ?? 'stopped' },
        });
        return sessionView(s);
      },
    }),
    route({
      method: 'post',
      path: '/api/stream/stop',
      summary: "Stops a stream: its publishers' sessions end (and are held for enforcement.terminatedHoldSeconds)",
      tag: 'Stream',
      auth: 'apiSecret',
      body: stopBody,
      response: stoppedOut,
      handler: async ({ account, body, actor }) => {
        const streamName = streamNameOf(account.id, body.streamId);
        const n = await sessions.stopStream(account.id, streamName);
        await audit?.note(actor, account.id, 'stream', streamName, 'stop', { publishers: { from: n, to: 0 } });
        return { stoppingLevel: n > 0 ? 'Stream' : 'None' };
      },
    }),
    route({
      method: 'post',
      path: '/api/stream/stop/all',
      summary: "Stops every stream of the account: every publisher's session ends (held as a single stop)",
      tag: 'Stream',
      auth: 'apiSecret',
      response: stoppedOut,
      handler: async ({ account, actor }) => {
        const n = await sessions.stopAll(account.id);
        await audit?.note(actor, account.id, 'stream', '*', 'stop', { publishers: { from: n, to: 0 } });
        return { stoppingLevel: n > 0 ? 'Account' : 'None' };
      },
    }),
    route({
      method: 'get',
      path: '/api/monitoring/streams',
      summary: "The account's live streams (from the session registry: streams published through a media server that names its connections)",
      tag: 'Monitoring',
      auth: 'apiSecret',
      query: monitoringQuery,
      response: z.object({ pagination: paginationOut, data: z.array(streamDetailsOut) }),
      handler: async ({ account, query }) => {
        // only live streams are known: isActive=false selects none
        const live = query.isActive === false ? new Map<string, Session[]>() : await liveStreams(sessions, account.id);
        const needle = query.searchSubstring?.toLowerCase();
        let all: StreamDetails[] = [];
        for (const [name, publishers] of live) {
          if (needle && !name.toLowerCase().includes(needle)) continue;
          all.push(await streamDetails(store, account.id, name, publishers));
        }
        all = all.filter(
          (d) =>
            (query.isSecure === undefined || d.secureStream === query.isSecure) &&
            (query.isRecordingAllowed === undefined || d.isRecordingAllowed === query.isRecordingAllowed) &&
            (query.isMultisource === undefined || d.multisource === query.isMultisource),
        );
        const by = query.sortBy.toLowerCase();
        const key = (d: StreamDetails): string | number =>
          by === 'viewercount' ? d.viewerCount : by === 'starttime' || by === 'duration' ? Date.parse(d.startTime) * (by === 'duration' ? -1 : 1) : d.streamId;
        all.sort((a, b) => {
          const x = key(a);
          const y = key(b);
          const c = x < y ? -1 : x > y ? 1 : a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0;
          return query.isDescending ? -c : c;
        });
        const from = (query.page - 1) * query.itemsOnPage;
        return { pagination: pagination(all.length, query.itemsOnPage), data: all.slice(from, from + query.itemsOnPage) };
      },
    }),
    route({
      method: 'get',
      path: '/api/monitoring/streams/:streamName',
      summary: 'One live stream (from the session registry)',
      tag: 'Monitoring',
      auth: 'apiSecret',
      params: z.object({ streamName: z.string().min(1).max(512) }),
      response: streamDetailsOut,
      handler: async ({ account, params }) => {
        const name = streamNameOf(account.id, params.streamName);
        const publishers = (await store.listSessions(account.id, { streamName: name, action: 'publish' }, { offset: 0, limit: MAX_PAGE })).items;
        if (publishers.length === 0) throw new ApiError(404, `No live stream named: ${name}`);
        return streamDetails(store, account.id, name, publishers);
      },
    }),
  ];
}
