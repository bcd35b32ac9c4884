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
import type { FeedEvent, LifecycleSignal, PublicEvent, RecordingEvent, TokenChecked, ViewerConnectionEvent } from './events.js';
import type { Metrics } from '../observability/metrics.js';
import { copyWith } from '../domain/objects.js';
import { newSessionId } from '../domain/session-ids.js';

export type Subscriber = (e: PublicEvent) => void | Promise<void>;

/** The hosted viewerConnection timing (docs/api.md#viewer-connection-events): NoActiveViewers this long after the last viewer left. */
export const NO_VIEWERS_AFTER_MS = 60_000;
/** At most one ViewerAttempt per stream this often. */
export const VIEWER_ATTEMPT_EVERY_MS = 10_000;
/** A departure's mark outlives its timer by a minute: a departure whose instance stopped is forgotten then. */
const DEPARTURE_MARK_MS = 2 * NO_VIEWERS_AFTER_MS;
/** NoActiveViewers waiting on this instance, at most (one per stream); beyond it the oldest is given up. */
const DEPARTURES_MAX = 100_000;
/** The stream's viewers mark while it is watched (else the id of the departure that may end the watch). */
const WATCHED = 'watched';
/**
 * Viewer registrations the queue starts together (registerAhead): a queue that registered one
 * viewer per store round trip fell behind a burst of admissions and dropped signals.
 */
const REGISTER_AHEAD = 64;
const viewersMark = (streamName: string) => `viewers:${streamName}`;
const attemptMark = (streamName: string) => `attempt:${streamName}`;

interface Departure {
  accountId: string;
  streamName: string;
  id: string;
  /** When its NoActiveViewers is due (ms, the lifecycle's clock). */
  due: number;
}

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
  /** Registrations (and their checks) started before their signal's turn (registerAhead). */
  private readonly ahead = new Map<LifecycleSignal, Promise<void>>();
  /** The signal being applied. */
  private current?: LifecycleSignal;
  private readonly viewerHooks = new LRUCache<string, boolean>({ max: 10_000, ttl: 5000 });
  /** Streams whose ViewerAttempt this instance sent: until when the next waits (a store call saved per viewer meanwhile). */
  private readonly attempts = new LRUCache<string, number>({ max: 10_000 });
  /** Streams whose last viewer left here, in the order their NoActiveViewers falls due; one timer for the first. */
  private readonly departures = new Map<string, Departure>();
  private departureTimer?: NodeJS.Timeout;
  private closed = false;

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
   * The hosted viewerConnection events (docs/api.md#viewer-connection-events), only for accounts with
   * a viewerConnection webhook (an event per viewer would cost every admission a webhook lookup).
   * Shared by every instance through the store: a viewer's admission of a stream not live claims the
   * stream's attempt mark for 10 s (ViewerAttempt to whichever instance claims it); a watch begins
   * when the stream's viewers mark is set where none was (FirstViewerConnection to that instance
   * alone); the instance whose viewer end left the stream without viewers puts its departure in the
   * mark and, 60 s later, takes it back if no viewer came meanwhile (NoActiveViewers). A viewer
   * joining on any instance replaces the departure, so that instance's timer finds nothing to take.
   */
  private async viewerStarted(accountId: string, streamName: string, at: number, registered: boolean): Promise<PublicEvent[]> {
    if (!(await this.hasViewerHooks(accountId))) return [];
    const out: PublicEvent[] = [];
    if ((await this.store.getLiveStream(accountId, streamName)) === null) {
      if (await this.claimAttempt(accountId, streamName, at)) out.push(viewerEvent('ViewerAttempt', accountId, streamName, at));
      // A viewer waiting for the stream keeps a watch going (a departure's NoActiveViewers is off)
      // but begins none: the watch begins when the stream is live.
      if (registered) await this.store.swapMark(accountId, viewersMark(streamName), WATCHED, this.watchMs, 'present');
      return out;
    }
    if (registered && (await this.store.swapMark(accountId, viewersMark(streamName), WATCHED, this.watchMs)) === null) {
      out.push(viewerEvent('FirstViewerConnection', accountId, streamName, at));
    }
    return out;
  }

  /** A feed started: viewers already waiting for it begin a watch (FirstViewerConnection), unless one is going on. */
  private async feedViewers(accountId: string, streamName: string, at: number): Promise<PublicEvent[]> {
    if (!(await this.hasViewerHooks(accountId))) return [];
    if ((await this.viewerCount(accountId, streamName)) === 0) return [];
    const held = await this.store.swapMark(accountId, viewersMark(streamName), WATCHED, this.watchMs);
    return held === null ? [viewerEvent('FirstViewerConnection', accountId, streamName, at)] : [];
  }

  /** A registered viewer ended: when it was the stream's last and a watch is going on, its NoActiveViewers is due in 60 s. */
  private async viewerEnded(accountId: string, streamName: string): Promise<void> {
    if (!(await this.hasViewerHooks(accountId))) return;
    if ((await this.viewerCount(accountId, streamName)) > 0) return;
    const id = randomUUID();
    if ((await this.store.swapMark(accountId, viewersMark(streamName), id, DEPARTURE_MARK_MS, 'present')) === null) return; // never watched
    this.departed({ accountId, streamName, id, due: this.now() + NO_VIEWERS_AFTER_MS });
  }

  /**
   * The 60 s passed: NoActiveViewers, if the stream still has no viewer and the mark still holds this
   * departure. A viewer there with the mark still holding it joined while this departure was being
   * written (on another instance): the watch goes on, so the mark is made a watch again rather than
   * left to expire under a viewer.
   */
  private async noViewers(accountId: string, streamName: string, departure: string, at: number): Promise<PublicEvent[]> {
    const viewers = await this.viewerCount(accountId, streamName);
    if (!(await this.store.takeMark(accountId, viewersMark(streamName), departure))) return [];
    if (viewers === 0) return [viewerEvent('NoActiveViewers', accountId, streamName, at)];
    await this.store.swapMark(accountId, viewersMark(streamName), WATCHED, this.watchMs, 'absent');
    return [];
  }

  /** The stream's live viewer sessions in the registry (every instance's). */
  private async viewerCount(accountId: string, streamName: string): Promise<number> {
    return (await this.store.listSessions(accountId, { streamName, action: 'subscribe' }, { offset: 0, limit: 0 })).total;
  }

  /** Whether this admission's ViewerAttempt goes out: the first in 10 s for the stream, on any instance. */
  private async claimAttempt(accountId: string, streamName: string, at: number): Promise<boolean> {
    const key = `${accountId}\u0000${streamName}`;
    const waitUntil = this.attempts.get(key);
    if (waitUntil !== undefined && at < waitUntil) return false;
    const claimed = (await this.store.swapMark(accountId, attemptMark(streamName), String(at), VIEWER_ATTEMPT_EVERY_MS, 'absent')) === null;
    if (claimed) this.attempts.set(key, at + VIEWER_ATTEMPT_EVERY_MS);
    return claimed;
  }

  /** How long a watch lasts without a viewer joining: as long as a session does without a touch. */
  private get watchMs(): number {
    return this.opts.liveTtlSeconds * 1000;
  }

  /** Queues a departure's NoActiveViewers (replacing the stream's earlier one), bounded. */
  private departed(d: Departure): void {
    if (this.closed) return;
    const key = `${d.accountId}\u0000${d.streamName}`;
    this.departures.delete(key);
    if (this.departures.size >= DEPARTURES_MAX) {
      const [oldest, given] = this.departures.entries().next().value!;
      this.departures.delete(oldest);
      this.metrics.lifecycleDropped.inc({ kind: 'no_viewers' });
      this.logger.warn({ accountId: given.accountId, pending: DEPARTURES_MAX }, 'viewerConnection: too many NoActiveViewers pending; the oldest is not sent');
    }
    this.departures.set(key, d);
    this.armDepartures();
  }

  /** One unref'd timer, for the first departure (they fall due in the order they were queued). */
  private armDepartures(): void {
    if (this.departureTimer !== undefined || this.closed) return;
    const first = this.departures.values().next().value;
    if (first === undefined) return;
    this.departureTimer = setTimeout(() => {
      this.departureTimer = undefined;
      const now = this.now();
      for (const [key, d] of this.departures) {
        if (d.due > now) break;
        this.departures.delete(key);
        this.signal({ kind: 'no_viewers', accountId: d.accountId, streamName: d.streamName, departure: d.id });
      }
      this.armDepartures();
    }, Math.max(0, first.due - this.now()));
    this.departureTimer.unref();
  }

  /**
   * Shutdown: NoActiveViewers not yet due are not sent (their marks expire within two minutes, so a
   * later viewer begins a new watch), and no timer holds the process.
   */
  close(): void {
    this.closed = true;
    clearTimeout(this.departureTimer);
    this.departureTimer = undefined;
    this.departures.clear();
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
    else if (this.queue.length <= REGISTER_AHEAD) this.registerAhead(); // it may join the run being registered
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
      this.registerAhead();
      const s = this.queue.shift()!;
      this.current = s;
      try {
        for (const e of await this.apply(s)) await this.publish(e);
      } catch (err) {
        this.metrics.lifecycleDropped.inc({ kind: s.kind });
        this.logger.warn({ kind: s.kind, err: (err as Error).message }, 'lifecycle signal failed');
      }
    }
    this.current = undefined;
    this.running = false;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * The viewers at the head of the queue whose admission did not register them (a token without
   * limits): up to REGISTER_AHEAD of them are registered and checked together, each signal still
   * applied in its turn, which waits for its own. The run stops at the first signal of another kind
   * or a second one of the same caller's connection, so no registration overtakes a signal it could
   * depend on (an end, a publisher's start and its viewer count).
   */
  private registerAhead(): void {
    const seen = new Set<string>();
    // the signal being applied heads the run, or ends it before it starts
    if (this.current !== undefined) {
      if (!isRegistrable(this.current)) return;
      seen.add(connectionOf(this.current));
    }
    const n = Math.min(this.queue.length, REGISTER_AHEAD);
    for (let i = 0; i < n; i++) {
      const s = this.queue[i];
      if (!isRegistrable(s)) return;
      const key = connectionOf(s);
      if (seen.has(key)) return;
      seen.add(key);
      if (this.ahead.has(s)) continue;
      const p = this.register(s.record, s.ttlSeconds ?? this.opts.liveTtlSeconds);
      p.catch(() => undefined); // its signal's turn reports the failure
      this.ahead.set(s, p);
    }
  }

  /** A session the admission did not register: registered, then the registry check (a cut due already), before its signal is done. */
  private async register(record: Session, ttlSeconds: number): Promise<void> {
    await this.store.startSession(record, ttlSeconds);
    await this.hooks.registered?.(record);
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
            : { id: newSessionId(), caller: s.caller, sessionId: s.sessionId, action: s.action, accountId: s.accountId, streamName: s.streamName, tokenId: s.tokenId, trackingId: s.trackingId, feedId: s.action === 'publish' ? randomUUID() : undefined, startedOn, lastSeenOn: startedOn });
        const feedId = s.action === 'publish' ? (record?.feedId ?? randomUUID()) : undefined;
        // registered (and checked) here, or already started by registerAhead
        const early = this.ahead.get(s);
        this.ahead.delete(s);
        if (record && !s.registered) await (early ?? this.register(record, s.ttlSeconds ?? ttl));
        if (feedId !== undefined) {
          await this.store.startLiveStream(
            { accountId: s.accountId, streamName: s.streamName, tokenId: s.tokenId ?? 0, feedId, startedOn: new Date(at).toISOString(), caller: s.caller },
            ttl,
          );
          out.push(feedEvent('started', at, { feedId, accountId: s.accountId, name: s.streamName, started: at, tokenId: s.tokenId }));
          out.push(...(await this.feedViewers(s.accountId, s.streamName, at)));
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
        if (s.action === 'subscribe') out.push(...(await this.viewerStarted(s.accountId, s.streamName, at, record !== undefined)));
        // The registry check of a session (a cut already due, expiry cuts): for a record the
        // admission registered in its own store step it runs beside the queue, since it needs no
        // order with later signals (a cut of a session already ended is a no-op). Awaited here, its
        // store round trip would bound the whole queue to one admission per round trip: on Redis
        // the queue fell behind under load and dropped signals
        // (docs/decision-path.md#object-copies-and-checkpoints).
        // (a record registered here was checked by register(), before this signal is done)
        const registered = this.hooks.registered;
        if (record && registered && s.registered) this.runBeside(registered(record, s.tokenChecked), s.kind);
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
        if (action === 'subscribe' && accountId && session !== null) await this.viewerEnded(accountId, streamName);
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
        else if (s.alreadyDeleted) rec = copyWith(base, { id: s.recordingId, status: 'completed', recordedOn: s.recordedOn ?? base.recordedOn });
        else rec = await this.store.deleteRecording(accountId, s.recordingId);
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
      case 'no_viewers':
        return this.noViewers(s.accountId, s.streamName, s.departure, at);
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

type Started = Extract<LifecycleSignal, { kind: 'session_started' }>;

/** A viewer's start the lifecycle registers itself (its admission did not). */
function isRegistrable(s: LifecycleSignal): s is Started & { record: Session } {
  return s.kind === 'session_started' && s.action === 'subscribe' && !s.registered && s.record !== undefined;
}

/** The connection a registration is for: caller and session id. */
const connectionOf = (s: Started & { record: Session }) => `${s.caller}\n${s.record.sessionId}`;

function viewerEvent(event: ViewerConnectionEvent['event'], accountId: string, streamName: string, at: number): ViewerConnectionEvent {
  return { type: 'viewerConnection', event, timestamp: at, accountId, filterName: streamName, data: { name: streamName, accountId, streamId: `${accountId}/${streamName}` } };
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
