// Delivers lifecycle events to the account's webhooks: off the decision path, bounded (queue size
// and concurrency, overall and per account), accounts served in turn, optionally retried with
// backoff, every attempt in the deliveries log and metrics, and a bounded stop on shutdown.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Store, Webhook } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import type { PublicEvent } from '../lifecycle/events.js';
import { compileStreamPattern } from '../domain/matchers.js';
import { signedHeaders, withHeaderNames } from './signing.js';
import type { DeliveryResult } from './client.js';
import { FairQueue, type Refusal } from './fair-queue.js';

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

type Kind = 'isFeedHooks' | 'isRecordingHooks' | 'isThumbnailHooks';

const DROP_REASON: Record<Refusal, string> = {
  'key-full': 'dropped: account delivery queue full',
  'queue-full': 'dropped: delivery queue full',
};

/** A flooding account drops deliveries by the thousand: its warning is written at most this often. */
const DROP_LOG_INTERVAL_MS = 10_000;

/** After the shutdown deadline, how long aborted attempts get to write their deliveries log entry. */
const ABORT_SETTLE_MS = 1000;

export const ABORTED_BY_SHUTDOWN = 'aborted: shutting down';

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
  onEvent = async (e: PublicEvent): Promise<void> => {
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

  private async fanOut(e: Exclude<PublicEvent, { type: 'session' }>): Promise<void> {
    const kind: Kind = e.type === 'feeds' ? 'isFeedHooks' : e.type === 'recording' ? 'isRecordingHooks' : 'isThumbnailHooks';
    const accountId = e.type === 'feeds' ? e.data.accountId : e.accountId;
    const streamName = e.type === 'feeds' ? e.data.name : e.type === 'recording' ? e.data.streamName : e.streamName;
    if (e.type === 'thumbnail' && !e.test && !(await this.thumbnailsEnabled(e.tokenId))) return;
    const hooks = (await this.store.listWebhooks(accountId, { itemCount: 100, descending: false })).filter(
      (w) => w[kind] && this.filterMatches(w.filter, streamName),
    );
    if (hooks.length === 0) return;
    const { body, headers, event } = this.render(e);
    for (const webhook of hooks) {
      this.enqueue({ webhook, event, body, headers, deliveryId: `msg_${randomUUID()}`, attempt: 1 });
    }
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

  private render(e: Exclude<PublicEvent, { type: 'session' }>): { body: Buffer; headers: Record<string, string>; event: string } {
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
    const { accountId: _a, ...wire } = e as PublicEvent & { accountId?: string };
    const payload = e.type === 'feeds' ? e : wire;
    return { body: Buffer.from(JSON.stringify(payload)), headers: { 'content-type': 'application/json' }, event: `${e.type}.${e.event}` };
  }

  private enqueue(job: Job): void {
    if (this.stopped) {
      // Never attempted: part of the shutdown summary, not one log entry each.
      this.stoppedCounts.dropped++;
      this.metrics.webhookDeliveries.inc({ result: 'dropped' });
      return;
    }
    const r = this.queue.push(job.webhook.accountId, job);
    if (!r.accepted) this.drop(job, DROP_REASON[r.reason]);
    else if (r.evicted) this.drop(r.evicted.item, DROP_REASON['queue-full']);
    this.metrics.webhookQueue.set(this.queue.size);
    this.pump();
  }

  /** A delivery that did not fit: counted, in its webhook's deliveries log, and (throttled) in the log. */
  private drop(job: Job, reason: string): void {
    this.metrics.webhookDeliveries.inc({ result: 'dropped' });
    void this.log(job, { error: reason, durationMs: 0 });
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
    const ts = Math.floor(this.now() / 1000);
    const headers = {
      ...withHeaderNames({ ...job.headers, ...signedHeaders(job.deliveryId, ts, job.body, job.webhook.secret) }, this.cfg.headerNames),
      'user-agent': this.userAgent,
    };
    const r = await this.client.post(job.webhook.url, job.body, headers, this.abort.signal);
    if (this.abort.signal.aborted && r.statusCode === undefined) {
      // Cut by the shutdown deadline: recorded in the deliveries log (the receiver may have seen
      // it), counted in the one shutdown summary line rather than logged each.
      this.stoppedCounts.aborted++;
      this.metrics.webhookDeliveries.inc({ result: 'failure' });
      await this.log(job, { ...r, error: ABORTED_BY_SHUTDOWN });
      return;
    }
    const ok = r.statusCode !== undefined && r.statusCode >= 200 && r.statusCode < 300;
    const result = ok ? 'success' : r.error?.startsWith('timeout') ? 'timeout' : r.error?.includes('refused') ? 'refused' : 'failure';
    this.metrics.webhookDeliveries.inc({ result });
    await this.log(job, r);
    if (!ok) {
      this.logger.info({ webhookId: job.webhook.id, event: job.event, attempt: job.attempt, statusCode: r.statusCode, error: r.error }, 'webhook delivery failed');
      if (job.attempt <= this.cfg.retries && !this.closing) this.retry(job);
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
      this.enqueue({ ...job, attempt: job.attempt + 1 });
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
