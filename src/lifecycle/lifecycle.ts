// The lifecycle queue: adapters hand in signals and return at once; one worker applies them to
// the live-stream and session registries and hands the resulting events to subscribers (webhooks,
// analytics). Bounded: beyond queueSize, signals are dropped and counted, never silently lost.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Recording, Session, SessionEndReason, Store } from '../store/store.js';
import type { TokenRecord } from '../domain/tokens.js';
import type { UsageService } from '../analytics/usage.js';
import { ENDED_SESSION_KEEP_S } from '../domain/store-rules.js';
import type { FeedEvent, LifecycleSignal, PublicEvent, RecordingEvent, TokenChecked } from './events.js';
import type { Metrics } from '../observability/metrics.js';
import { copyWith } from '../domain/objects.js';

export type Subscriber = (e: PublicEvent) => void | Promise<void>;

export interface LifecycleOptions {
  queueSize: number;
  liveTtlSeconds: number;
  defaultAccountId: string;
}

export class Lifecycle {
  private readonly queue: LifecycleSignal[] = [];
  private readonly subscribers: Subscriber[] = [];
  private running = false;
  private idleWaiters: Array<() => void> = [];
  /** Checks of sessions an admission already registered, running beside the queue (see apply). */
  private readonly beside = new Set<Promise<void>>();
  private readonly viewerHooks = new LRUCache<string, boolean>({ max: 10_000, ttl: 5000 });

  constructor(
    private readonly store: Store,
    private readonly opts: LifecycleOptions,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    /** Resolves a token value to its record (for signals that carry no session). */
    private readonly tokenByValue: (value: string) => Promise<TokenRecord | null>,
    /** Where usage signals are counted. */
    private readonly usage: UsageService,
    private readonly now: () => number = Date.now,
    /** Called once a session is in the registry (session control: a cut due already, expiry cuts). */
    private readonly hooks: { registered?: (s: Session, checked?: TokenChecked) => Promise<void> } = {},
  ) {}

  /**
   * The hosted viewerConnection events of a viewer's start or end: ViewerAttempt for every admitted
   * viewer; FirstViewerConnection when it is the stream's only live viewer session, NoActiveViewers
   * when the last one ended (counted from the session registry: callers that name their connections).
   */
  private async viewerEvents(what: 'started' | 'ended', accountId: string, streamName: string, at: number, registered: boolean): Promise<PublicEvent[]> {
    const data = { name: streamName, accountId, streamId: `${accountId}/${streamName}` };
    const event = (e: 'ViewerAttempt' | 'FirstViewerConnection' | 'NoActiveViewers'): PublicEvent => ({ type: 'viewerConnection', event: e, timestamp: at, accountId, filterName: streamName, data });
    // only for accounts with a viewerConnection webhook: an event per viewer would cost every
    // admission a webhook lookup, and counting viewers costs store reads
    if (!(await this.hasViewerHooks(accountId))) return [];
    const out: PublicEvent[] = what === 'started' ? [event('ViewerAttempt')] : [];
    if (!registered) return out;
    const { total } = await this.store.listSessions(accountId, { streamName, action: 'subscribe' }, { offset: 0, limit: 0 });
    if (what === 'started' && total === 1) out.push(event('FirstViewerConnection'));
    if (what === 'ended' && total === 0) out.push(event('NoActiveViewers'));
    return out;
  }

  /** Whether the account has a webhook for viewerConnection events (read at most every 5 s per account). */
  private async hasViewerHooks(accountId: string): Promise<boolean> {
    const known = this.viewerHooks.get(accountId);
    if (known !== undefined) return known;
    const has = (await this.store.listWebhooks(accountId, { itemCount: 100, descending: false })).some((w) => w.isViewerConnectionHooks === true);
    this.viewerHooks.set(accountId, has);
    return has;
  }

  private async tokenOf(value: string | undefined): Promise<TokenRecord | null> {
    return value ? this.tokenByValue(value).catch(() => null) : null;
  }

  subscribe(s: Subscriber): void {
    this.subscribers.push(s);
  }

  /** Queues a signal; never waits and never throws. */
  signal(s: LifecycleSignal): void {
    if (this.queue.length >= this.opts.queueSize) {
      this.metrics.lifecycleDropped.inc({ kind: s.kind });
      this.logger.warn({ kind: s.kind }, 'lifecycle queue full: signal dropped');
      return;
    }
    this.queue.push(s);
    if (!this.running) void this.drain();
  }

  /** Resolves when every queued signal has been applied and every check beside the queue is done (tests, graceful shutdown). */
  async idle(): Promise<void> {
    while (this.running || this.queue.length > 0 || this.beside.size > 0) {
      if (this.running || this.queue.length > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
      else await Promise.all(this.beside);
    }
  }

  /** Runs a check that needs no order with later signals beside the queue, counted by idle(). */
  private runBeside(p: Promise<void>, kind: LifecycleSignal['kind']): void {
    const tracked = p.then(
      () => undefined,
      (err: unknown) => {
        this.metrics.lifecycleDropped.inc({ kind });
        this.logger.warn({ kind, err: (err as Error).message }, 'lifecycle signal failed');
      },
    );
    this.beside.add(tracked);
    void tracked.finally(() => this.beside.delete(tracked));
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const s = this.queue.shift()!;
      try {
        for (const e of await this.apply(s)) await this.publish(e);
      } catch (err) {
        this.metrics.lifecycleDropped.inc({ kind: s.kind });
        this.logger.warn({ kind: s.kind, err: (err as Error).message }, 'lifecycle signal failed');
      }
    }
    this.running = false;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  private async publish(e: PublicEvent): Promise<void> {
    for (const sub of this.subscribers) {
      try {
        await sub(e);
      } catch (err) {
        this.logger.warn({ type: e.type, err: (err as Error).message }, 'lifecycle subscriber failed');
      }
    }
  }

  private async apply(s: LifecycleSignal): Promise<PublicEvent[]> {
    const at = this.now();
    const ttl = this.opts.liveTtlSeconds;
    switch (s.kind) {
      case 'session_started': {
        const out: PublicEvent[] = [];
        const startedOn = new Date(at).toISOString();
        // A caller's own report of a connection it names (not an admission here) is registered too.
        const record: Session | undefined =
          s.record ??
          (s.sessionId === undefined
            ? undefined
            : { id: randomUUID(), caller: s.caller, sessionId: s.sessionId, action: s.action, accountId: s.accountId, streamName: s.streamName, tokenId: s.tokenId, trackingId: s.trackingId, feedId: s.action === 'publish' ? randomUUID() : undefined, startedOn, lastSeenOn: startedOn });
        const feedId = s.action === 'publish' ? (record?.feedId ?? randomUUID()) : undefined;
        if (record && !s.registered) await this.store.startSession(record, s.ttlSeconds ?? ttl);
        if (feedId !== undefined) {
          await this.store.startLiveStream(
            { accountId: s.accountId, streamName: s.streamName, tokenId: s.tokenId ?? 0, feedId, startedOn: new Date(at).toISOString(), caller: s.caller },
            ttl,
          );
          out.push(feedEvent('started', at, { feedId, accountId: s.accountId, name: s.streamName, started: at, tokenId: s.tokenId }));
        }
        out.push({
          type: 'session',
          event: 'started',
          timestamp: at,
          caller: s.caller,
          sessionId: s.sessionId,
          id: record?.id,
          clientIp: record?.clientIp,
          action: s.action,
          accountId: s.accountId,
          streamName: s.streamName,
          tokenId: s.tokenId,
          trackingId: s.trackingId,
        });
        if (s.action === 'subscribe') out.push(...(await this.viewerEvents('started', s.accountId, s.streamName, at, record !== undefined)));
        // The registry check of a session (a cut already due, expiry cuts): for a record the
        // admission registered in its own store step it runs beside the queue, since it needs no
        // order with later signals (a cut of a session already ended is a no-op). Awaited here, its
        // store round trip would bound the whole queue to one admission per round trip: on Redis
        // the queue fell behind at ~2,000 admissions/s and dropped signals.
        const registered = this.hooks.registered;
        if (record && registered) {
          if (s.registered) this.runBeside(registered(record, s.tokenChecked), s.kind);
          else await registered(record);
        }
        return out;
      }
      case 'session_ended': {
        const reason = s.ended?.endedReason ?? 'done';
        let session: Session | null = s.ended ?? null;
        if (!session && s.sessionId) {
          session = await this.store.endSession(s.caller, s.sessionId, { reason, at: new Date(at).toISOString(), keepSeconds: ENDED_SESSION_KEEP_S });
          // already ended (cut by Streamgate, its events sent): the media server's own "done" adds nothing
          if (!session && (await this.store.getSession(s.caller, s.sessionId))?.endedReason !== undefined) return [];
        }
        const action = session?.action ?? s.action;
        const accountId = session?.accountId ?? s.accountId ?? (await this.tokenOf(s.token))?.accountId ?? (this.opts.defaultAccountId || undefined);
        const streamName = session?.streamName ?? s.streamName;
        if (!action || !streamName) return []; // a "done" for something never admitted here
        const out: PublicEvent[] = [];
        if (action === 'publish' && accountId) {
          const live = await this.store.endLiveStream(accountId, streamName, session?.feedId);
          if (live) {
            const tokenId = live.tokenId || undefined;
            out.push(feedEvent('ended', at, { feedId: live.feedId, accountId, name: streamName, started: Date.parse(live.startedOn), ended: at, tokenId, reason }));
          }
        }
        out.push({
          type: 'session',
          event: 'ended',
          timestamp: at,
          caller: s.caller,
          sessionId: s.sessionId,
          id: session?.id,
          clientIp: session?.clientIp,
          reason,
          action,
          accountId,
          streamName,
          tokenId: session?.tokenId,
          trackingId: session?.trackingId,
        });
        if (action === 'subscribe' && accountId) out.push(...(await this.viewerEvents('ended', accountId, streamName, at, session !== null)));
        return out;
      }
      case 'recording': {
        const session = s.sessionId ? await this.store.getSession(s.caller, s.sessionId) : null;
        const token = session ? null : await this.tokenOf(s.token);
        const accountId = s.accountId ?? session?.accountId ?? token?.accountId ?? (this.opts.defaultAccountId || undefined);
        if (!accountId) return [];
        const base = {
          accountId,
          streamName: s.streamName,
          tokenId: s.tokenId ?? session?.tokenId ?? token?.id,
          path: s.path,
          metadata: s.metadata,
          recordedOn: new Date(at).toISOString(),
        };
        let rec: Recording | null;
        if (s.event === 'started') rec = await this.store.startRecording(base);
        else if (s.event === 'completed') rec = await this.store.completeRecording(copyWith(base, { completedOn: new Date(at).toISOString() }));
        else if (s.recordingId === undefined) rec = null;
        else rec = s.alreadyDeleted ? copyWith(base, { id: s.recordingId, status: 'completed' }) : await this.store.deleteRecording(accountId, s.recordingId);
        const data: RecordingEvent['data'] = {
          recordingId: rec?.id ?? 0,
          tokenId: rec?.tokenId ?? base.tokenId,
          streamName: s.streamName,
          streamId: `${accountId}/${s.streamName}`,
          recordedOn: Date.parse(rec?.recordedOn ?? base.recordedOn),
        };
        if (s.event === 'deleted') data.removedOn = at;
        const path = rec?.path ?? s.path;
        if (path !== undefined) data.path = path;
        const metadata = rec?.metadata ?? s.metadata;
        if (metadata !== undefined) data.metadata = metadata;
        return [{ type: 'recording', event: s.event, timestamp: at, accountId, data }];
      }
      case 'usage':
        await this.usage.ingestSession(s.caller, s.sessionId, s.bytesOut, s.bytesIn, at);
        return [];
      case 'thumbnail': {
        // The live entry names the feed and the publish token (whose enableThumbnails decides delivery).
        const live = s.tokenId === undefined || s.feedId === undefined ? await this.store.getLiveStream(s.accountId, s.streamName) : null;
        return [
          {
            type: 'thumbnail',
            timestamp: at,
            accountId: s.accountId,
            streamName: s.streamName,
            streamId: `${s.accountId}/${s.streamName}`,
            feedId: s.feedId ?? live?.feedId,
            tokenId: s.tokenId ?? (live?.tokenId || undefined),
            contentType: s.contentType,
            image: s.image,
          },
        ];
      }
    }
  }
}

function feedEvent(
  event: 'started' | 'ended',
  at: number,
  d: { feedId: string; accountId: string; name: string; started: number; ended?: number; tokenId?: number; reason?: SessionEndReason },
): FeedEvent {
  const data: FeedEvent['data'] = { feedId: d.feedId, accountId: d.accountId, name: d.name, streamId: `${d.accountId}/${d.name}`, started: d.started, active: event === 'started' };
  if (d.ended !== undefined) data.ended = d.ended;
  if (d.tokenId !== undefined) data.tokenId = d.tokenId;
  if (d.reason !== undefined) data.reason = d.reason;
  return { type: 'feeds', event, timestamp: at, data };
}
