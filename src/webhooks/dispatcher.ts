// Delivers lifecycle events to the account's webhooks: off the decision path, bounded (queue size
// and concurrency, overall and per account), accounts served in turn, optionally retried with
// backoff, every attempt in the deliveries log and metrics, and a bounded stop on shutdown. With
// webhooks.disableAfterFailures, a webhook whose receiver keeps failing is disabled (in the store, so
// every instance stops sending to it) until it is re-enabled through the API.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Store, Webhook } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import type { DeliverableEvent } from './samples.js';
import type { RecordingEvent } from '../lifecycle/events.js';
import { compileStreamPattern } from '../domain/matchers.js';
import { signedHeaders, withHeaderNames } from './signing.js';
import type { DeliveryResult } from './client.js';
import { FairQueue, type Refusal } from './fair-queue.js';
import { copyWith } from '../domain/objects.js';

export interface Poster {
  /** `signal` aborts the request (shutdown); the result then says so instead of throwing. */
  post(url: string, body: Buffer, headers: Record<string, string>, signal?: AbortSignal): Promise<DeliveryResult>;
}

interface Job {
  webhook: Webhook;
  event: string;
  body: Buffer;
  headers: Record<string, string>;
  deliveryId: string;
  attempt: number;
}

type Kind = 'isFeedHooks' | 'isRecordingHooks' | 'isThumbnailHooks' | 'isTranscoderHooks' | 'isMediaHooks' | 'isViewerConnectionHooks' | 'isTokenSharingHooks';

type Deliverable = Exclude<DeliverableEvent, { type: 'session' }>;

const KIND: Record<Deliverable['type'], Kind> = {
  feeds: 'isFeedHooks',
  recording: 'isRecordingHooks',
  thumbnail: 'isThumbnailHooks',
  transcoder: 'isTranscoderHooks',
  media: 'isMediaHooks',
  viewerConnection: 'isViewerConnectionHooks',
  tokenSharing: 'isTokenSharingHooks',
};

/** The account an event belongs to, and the name a webhook's filter is matched against. */
function route(e: Deliverable): { accountId: string; name: string } {
  switch (e.type) {
    case 'feeds':
      return { accountId: e.data.accountId, name: e.data.name };
    case 'recording':
      return { accountId: e.accountId, name: e.data.streamName };
    case 'thumbnail':
      return { accountId: e.accountId, name: e.streamName };
    default:
      return { accountId: e.accountId, name: e.filterName };
  }
}

/** Whether a webhook is disabled at `now` (an `until` in the past no longer counts). */
export function isDisabled(w: Webhook, now: number): boolean {
  return w.disabled !== undefined && (w.disabled.until === null || Date.parse(w.disabled.until) > now);
}

/** The reason a webhook disabled by failures carries. */
export const disabledReason = (n: number) => `${n} consecutive failed deliveries`;

const DROP_REASON: Record<Refusal, string> = {
  'key-full': 'dropped: account delivery queue full',
  'queue-full': 'dropped: delivery queue full',
};

/** A flooding account drops deliveries by the thousand: its warning is written at most this often. */
const DROP_LOG_INTERVAL_MS = 10_000;

/** After the shutdown deadline, how long aborted attempts get to write their deliveries log entry. */
const ABORT_SETTLE_MS = 1000;

export const ABORTED_BY_SHUTDOWN = 'aborted: shutting down';

const DISABLED_REASON = 'dropped: webhook disabled';

export class WebhookDispatcher {
  private readonly queue: FairQueue<Job>;
  private active = 0;
  /** Events whose webhooks are still being looked up. */
  private fanning = 0;
  private readonly filters = new LRUCache<string, (name: string) => boolean>({ max: 1000 });
  private idleWaiters: Array<() => void> = [];
  private readonly retryTimers = new Map<NodeJS.Timeout, Job>();
  private readonly dropLog = new Map<string, { at: number; suppressed: number }>();
  /** Shutdown has begun: no retries are scheduled; what is queued is still delivered until the deadline. */
  private closing = false;
  /** The deadline has passed: nothing starts, in-flight attempts are aborted. */
  private stopped = false;
  private readonly abort = new AbortController();
  private stoppedCounts = { aborted: 0, dropped: 0 };
  /**
   * Webhooks this instance disabled, with the record revision that disabled them: deliveries
   * queued from an older revision are skipped instead of waiting on a receiver known to fail.
   */
  private readonly disabledAt = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly store: Store,
    private readonly client: Poster,
    private readonly cfg: Config['webhooks'],
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly userAgent: string,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new FairQueue<Job>({ total: cfg.queueSize, perKey: cfg.accountQueueSize, perKeyActive: cfg.accountConcurrency });
  }

  /** Lifecycle subscriber: finds the webhooks an event goes to and queues one delivery each. */
  onEvent = async (e: DeliverableEvent): Promise<void> => {
    if (e.type === 'session') return;
    this.fanning++;
    try {
      await this.fanOut(e);
    } catch (err) {
      // Never rejects: it is called fire-and-forget. The event is lost for webhooks; say so.
      this.metrics.webhookDeliveries.inc({ result: 'dropped' });
      this.logger.warn({ type: e.type, err: (err as Error).message }, 'webhook fan-out failed: event not delivered');
    } finally {
      this.fanning--;
      this.checkIdle();
    }
  };

  /**
   * Finds the webhooks an event goes to and queues one delivery each; answers how many were queued
   * (enabled webhooks with the event's flag whose filter matches, less any the queues refused).
   * Unlike onEvent it rejects when the webhooks cannot be read: a test send answers that.
   */
  async send(e: DeliverableEvent): Promise<number> {
    if (e.type === 'session') return 0;
    this.fanning++;
    try {
      return await this.fanOut(e);
    } finally {
      this.fanning--;
      this.checkIdle();
    }
  }

  private async fanOut(e: Deliverable): Promise<number> {
    const kind = KIND[e.type];
    const { accountId, name } = route(e);
    if (e.type === 'thumbnail' && !e.test && !(await this.thumbnailsEnabled(e.tokenId))) return 0;
    const hooks = (await this.store.listWebhooks(accountId, { itemCount: 100, descending: false })).filter(
      (w) => w[kind] === true && this.filterMatches(w.filter, name),
    );
    if (hooks.length === 0) return 0;
    const { body, headers, event } = this.render(e);
    const now = this.now();
    let queued = 0;
    for (const webhook of hooks) {
      const job = { webhook, event, body, headers, deliveryId: `msg_${randomUUID()}`, attempt: 1 };
      if (isDisabled(webhook, now)) this.skipDisabled(job);
      else if (this.enqueue(job)) queued++;
    }
    return queued;
  }

  /**
   * Resolves when nothing is queued or in flight (tests), or after `deadlineMs`. With `keepAlive`
   * the deadline's timer holds the process open: shutdown must reach its summary line.
   */
  idle(deadlineMs?: number, keepAlive = false): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = deadlineMs === undefined ? undefined : setTimeout(resolve, deadlineMs);
      if (!keepAlive) timer?.unref();
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async thumbnailsEnabled(tokenId: number | undefined): Promise<boolean> {
    if (tokenId === undefined) return false;
    const t = await this.store.findTokenById(tokenId);
    return t !== null && t.kind === 'publish' && t.enableThumbnails === true;
  }

  private filterMatches(filter: string | undefined, name: string): boolean {
    if (!filter) return true;
    let m = this.filters.get(filter);
    if (!m) {
      const re = compileStreamPattern(filter);
      m = (n: string) => re.test(n);
      this.filters.set(filter, m);
    }
    return m(name);
  }

  private render(e: Deliverable): { body: Buffer; headers: Record<string, string>; event: string } {
    if (e.type === 'thumbnail') {
      const headers: Record<string, string> = {
        'content-type': e.contentType,
        'x-service-timestamp': String(e.timestamp),
        'x-service-stream-id': e.streamId,
      };
      if (e.feedId) headers['x-service-feed-id'] = e.feedId;
      if (e.tokenId !== undefined) headers['x-service-token-id'] = String(e.tokenId);
      return { body: e.image, headers, event: 'thumbnail' };
    }
    if (e.type !== 'feeds' && e.type !== 'recording') {
      const { type, event, timestamp, data } = e;
      return { body: Buffer.from(JSON.stringify({ type, event, timestamp, data })), headers: { 'content-type': 'application/json' }, event: `${type}.${event}` };
    }
    if (e.type === 'recording' && this.cfg.recordingShape === 'hosted-legacy') {
      const legacy = hostedLegacyRecording(e);
      return { body: Buffer.from(JSON.stringify(legacy)), headers: { 'content-type': 'application/json' }, event: `${legacy.type}.${legacy.event}` };
    }
    const { accountId: _a, ...wire } = e as Deliverable & { accountId?: string };
    const payload = e.type === 'feeds' ? e : wire;
    return { body: Buffer.from(JSON.stringify(payload)), headers: { 'content-type': 'application/json' }, event: `${e.type}.${e.event}` };
  }

  /** Queues a delivery: false when it was dropped instead (shutting down, or the queues full). */
  private enqueue(job: Job): boolean {
    if (this.stopped) {
      // Never attempted: part of the shutdown summary, not one log entry each.
      this.stoppedCounts.dropped++;
      this.metrics.webhookDeliveries.inc({ result: 'dropped' });
      return false;
    }
    const r = this.queue.push(job.webhook.accountId, job);
    if (!r.accepted) this.drop(job, DROP_REASON[r.reason]);
    else if (r.evicted) this.drop(r.evicted.item, DROP_REASON['queue-full']);
    this.metrics.webhookQueue.set(this.queue.size);
    this.pump();
    return r.accepted;
  }

  /** A delivery that did not fit: counted, in its webhook's deliveries log, and (throttled) in the log. */
  private drop(job: Job, reason: string): void {
    this.metrics.webhookDeliveries.inc({ result: 'dropped' });
    void this.log(job, { error: reason, durationMs: 0 });
    this.warnDropped(job, reason);
  }

  /**
   * A delivery to a disabled webhook: counted as dropped and (throttled) in the log, but not written
   * to the deliveries log, which keeps the failed attempts that explain why it was disabled.
   */
  private skipDisabled(job: Job): void {
    this.metrics.webhookDeliveries.inc({ result: 'dropped' });
    this.warnDropped(job, DISABLED_REASON);
  }

  private warnDropped(job: Job, reason: string): void {
    const accountId = job.webhook.accountId;
    const now = this.now();
    const seen = this.dropLog.get(accountId);
    if (seen && now - seen.at < DROP_LOG_INTERVAL_MS) {
      seen.suppressed++;
      return;
    }
    this.dropLog.set(accountId, { at: now, suppressed: 0 });
    if (this.dropLog.size > 10_000) this.dropLog.delete(this.dropLog.keys().next().value!);
    this.logger.warn(
      { accountId, webhookId: job.webhook.id, event: job.event, reason, droppedSinceLastWarning: (seen?.suppressed ?? 0) + 1 },
      'webhook delivery dropped',
    );
  }

  private pump(): void {
    while (!this.stopped && this.active < this.cfg.concurrency) {
      const next = this.queue.take();
      if (!next) break;
      this.metrics.webhookQueue.set(this.queue.size);
      this.active++;
      void this.deliver(next.item).finally(() => {
        this.active--;
        this.queue.done(next.key);
        this.pump();
        this.checkIdle();
      });
    }
  }

  private isIdle(): boolean {
    return this.queue.size === 0 && this.active === 0 && this.retryTimers.size === 0 && this.fanning === 0;
  }

  private checkIdle(): void {
    if (this.isIdle()) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async deliver(job: Job): Promise<void> {
    const disabledRev = this.disabledAt.get(webhookKey(job.webhook));
    if (disabledRev !== undefined && job.webhook.rev < disabledRev) {
      this.skipDisabled(job);
      return;
    }
    const ts = Math.floor(this.now() / 1000);
    const headers = copyWith(withHeaderNames(copyWith(job.headers, signedHeaders(job.deliveryId, ts, job.body, job.webhook.secret)), this.cfg.headerNames), {
      'user-agent': this.userAgent,
    });
    const r = await this.client.post(job.webhook.url, job.body, headers, this.abort.signal);
    if (this.abort.signal.aborted && r.statusCode === undefined) {
      // Cut by the shutdown deadline: recorded in the deliveries log (the receiver may have seen
      // it), counted in the one shutdown summary line rather than logged each.
      this.stoppedCounts.aborted++;
      this.metrics.webhookDeliveries.inc({ result: 'failure' });
      await this.log(job, copyWith(r, { error: ABORTED_BY_SHUTDOWN }));
      return;
    }
    const ok = r.statusCode !== undefined && r.statusCode >= 200 && r.statusCode < 300;
    const result = ok ? 'success' : r.error?.startsWith('timeout') ? 'timeout' : r.error?.includes('refused') ? 'refused' : 'failure';
    this.metrics.webhookDeliveries.inc({ result });
    await this.log(job, r);
    if (ok) {
      await this.succeeded(job);
      return;
    }
    this.logger.info({ webhookId: job.webhook.id, event: job.event, attempt: job.attempt, statusCode: r.statusCode, error: r.error }, 'webhook delivery failed');
    if (job.attempt <= this.cfg.retries && !this.closing) this.retry(job);
    else await this.failed(job);
  }

  /**
   * A success resets the webhook's count of consecutive failures. Written only when the record this
   * delivery was fanned out with showed failures, so a healthy webhook costs no store write.
   */
  private async succeeded(job: Job): Promise<void> {
    if (!job.webhook.failures) return;
    await this.changeRecord(job, (cur) => {
      if (!cur.failures) return cur;
      const { failures: _f, ...next } = cur;
      return next;
    });
  }

  /**
   * A delivery failed for good (its retries, if any, included): one more consecutive failure in the
   * store (atomic, so instances sharing the store count together); at webhooks.disableAfterFailures
   * the webhook is disabled. A failure to a URL the webhook no longer has is not counted.
   */
  private async failed(job: Job): Promise<void> {
    const n = this.cfg.disableAfterFailures;
    if (n === 0) return;
    const known = this.disabledAt.get(webhookKey(job.webhook));
    if (known !== undefined && job.webhook.rev < known) return; // disabled since: nothing to count
    let disabledNow = false;
    const w = await this.changeRecord(job, (cur) => {
      disabledNow = false;
      if (cur.url !== job.webhook.url || cur.disabled) return cur;
      const failures = (cur.failures ?? 0) + 1;
      if (failures < n) return copyWith(cur, { failures });
      disabledNow = true;
      return copyWith(cur, { failures, disabled: { until: null, reason: disabledReason(n) } });
    });
    if (w && disabledNow) {
      this.disabledAt.set(webhookKey(w), w.rev);
      this.logger.warn({ accountId: w.accountId, webhookId: w.id, failures: w.failures }, 'webhook disabled after consecutive failed deliveries');
    }
  }

  /** The webhook's record changed atomically; a store failure is logged, never thrown. */
  private async changeRecord(job: Job, change: (cur: Webhook) => Webhook): Promise<Webhook | null> {
    try {
      return await this.store.updateWebhook(job.webhook.accountId, job.webhook.id, change);
    } catch (e) {
      this.logger.warn({ webhookId: job.webhook.id, err: (e as Error).message }, 'webhook failure count write failed');
      return null;
    }
  }

  /**
   * Exponential backoff with full jitter: 0..(500 ms × 2^(attempt-1)), at most 30 s. The wait is
   * a timer, not a held delivery slot: a failing receiver costs its account no slot while it waits.
   */
  private retry(job: Job): void {
    const cap = Math.min(30_000, 500 * 2 ** (job.attempt - 1));
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.enqueue(copyWith(job, { attempt: job.attempt + 1 }));
      this.checkIdle();
    }, Math.random() * cap);
    this.retryTimers.set(timer, job);
  }

  private async log(job: Job, r: DeliveryResult): Promise<void> {
    try {
      await this.store.addDelivery(job.webhook.accountId, job.webhook.id, {
        deliveryId: job.deliveryId,
        at: new Date(this.now()).toISOString(),
        event: job.event,
        attempt: job.attempt,
        statusCode: r.statusCode,
        error: r.error,
        durationMs: Math.round(r.durationMs),
      });
    } catch (e) {
      this.logger.warn({ webhookId: job.webhook.id, err: (e as Error).message }, 'deliveries log write failed');
    }
  }

  /**
   * Shutdown. Retries waiting for their backoff are abandoned and no new one is scheduled; what is
   * queued is still delivered, accounts in turn, until `deadline` (epoch ms). Then nothing more starts,
   * attempts in flight are aborted (each recorded in its deliveries log), and what never started
   * is dropped: counted in metrics and in one summary line, with no deliveries log entry each
   * (thousands of "not attempted" entries would only push real attempts out of the log).
   */
  async shutdown(deadline: number): Promise<void> {
    this.closing = true;
    const waitingRetries = this.retryTimers.size;
    for (const t of this.retryTimers.keys()) clearTimeout(t);
    this.retryTimers.clear();
    this.stoppedCounts.dropped += waitingRetries;
    this.metrics.webhookDeliveries.inc({ result: 'dropped' }, waitingRetries);
    this.checkIdle();
    await this.idle(Math.max(0, deadline - this.now()), true);

    this.stopped = true;
    const never = this.queue.clear().length;
    this.stoppedCounts.dropped += never;
    this.metrics.webhookDeliveries.inc({ result: 'dropped' }, never);
    this.metrics.webhookQueue.set(0);
    this.abort.abort();
    await this.idle(ABORT_SETTLE_MS, true);

    const { aborted, dropped } = this.stoppedCounts;
    if (aborted + dropped > 0) {
      this.logger.warn({ aborted, dropped }, 'webhooks: shutdown deadline reached; in-flight deliveries aborted, queued ones dropped');
    }
  }
}

const webhookKey = (w: Webhook) => `${w.accountId}:${w.id}`;

/**
 * A recording event as the hosted platform's recording hooks deliver it (webhooks.recordingShape:
 * hosted-legacy, docs/api.md#recording-events): `type: "recordings"`, the id as `recordFileId`, and
 * only the fields those hooks have (no streamId, no path).
 */
export function hostedLegacyRecording(e: RecordingEvent): { type: 'recordings'; event: RecordingEvent['event']; timestamp: number; data: Record<string, unknown> } {
  const data: Record<string, unknown> = { recordFileId: e.data.recordingId };
  if (e.data.tokenId !== undefined) data.tokenId = e.data.tokenId;
  data.streamName = e.data.streamName;
  data.recordedOn = e.data.recordedOn;
  if (e.data.removedOn !== undefined) data.removedOn = e.data.removedOn;
  if (e.data.metadata !== undefined) data.metadata = e.data.metadata;
  return { type: 'recordings', event: e.event, timestamp: e.timestamp, data };
}
