// Delivers lifecycle events to the account's webhooks: off the decision path, bounded (queue size
// and concurrency), optionally retried with backoff, every attempt in the deliveries log and metrics.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Store, Webhook } from '../store/store.js';
import type { Config } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import type { PublicEvent } from '../lifecycle/events.js';
import { compileStreamPattern } from '../domain/matchers.js';
import { signedHeaders } from './signing.js';
import type { DeliveryResult } from './client.js';

export interface Poster {
  post(url: string, body: Buffer, headers: Record<string, string>): Promise<DeliveryResult>;
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

export class WebhookDispatcher {
  private readonly queue: Job[] = [];
  private active = 0;
  /** Events whose webhooks are still being looked up. */
  private fanning = 0;
  private readonly filters = new LRUCache<string, (name: string) => boolean>({ max: 1000 });
  private idleWaiters: Array<() => void> = [];
  private readonly retryTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: Store,
    private readonly client: Poster,
    private readonly cfg: Config['webhooks'],
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly userAgent: string,
    private readonly now: () => number = Date.now,
  ) {}

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

  /** Resolves when nothing is queued or in flight (tests), or after `deadlineMs` (shutdown). */
  idle(deadlineMs?: number): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      if (deadlineMs !== undefined) setTimeout(resolve, deadlineMs).unref();
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
    if (this.queue.length >= this.cfg.queueSize) {
      this.metrics.webhookDeliveries.inc({ result: 'dropped' });
      void this.log(job, { error: 'dropped: delivery queue full', durationMs: 0 });
      this.logger.warn({ webhookId: job.webhook.id, event: job.event }, 'webhook delivery dropped: queue full');
      return;
    }
    this.queue.push(job);
    this.metrics.webhookQueue.set(this.queue.length);
    this.pump();
  }

  private pump(): void {
    while (this.active < this.cfg.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.metrics.webhookQueue.set(this.queue.length);
      this.active++;
      void this.deliver(job).finally(() => {
        this.active--;
        this.pump();
        this.checkIdle();
      });
    }
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.active === 0 && this.retryTimers.size === 0 && this.fanning === 0;
  }

  private checkIdle(): void {
    if (this.isIdle()) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async deliver(job: Job): Promise<void> {
    const ts = Math.floor(this.now() / 1000);
    const headers = {
      ...job.headers,
      ...signedHeaders(job.deliveryId, ts, job.body, job.webhook.secret),
      'user-agent': this.userAgent,
    };
    const r = await this.client.post(job.webhook.url, job.body, headers);
    const ok = r.statusCode !== undefined && r.statusCode >= 200 && r.statusCode < 300;
    const result = ok ? 'success' : r.error?.startsWith('timeout') ? 'timeout' : r.error?.includes('refused') ? 'refused' : 'failure';
    this.metrics.webhookDeliveries.inc({ result });
    await this.log(job, r);
    if (!ok) {
      this.logger.info({ webhookId: job.webhook.id, event: job.event, attempt: job.attempt, statusCode: r.statusCode, error: r.error }, 'webhook delivery failed');
      if (job.attempt <= this.cfg.retries) this.retry(job);
    }
  }

  /** Exponential backoff with full jitter: 0..(500 ms × 2^(attempt-1)), at most 30 s. */
  private retry(job: Job): void {
    const cap = Math.min(30_000, 500 * 2 ** (job.attempt - 1));
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.enqueue({ ...job, attempt: job.attempt + 1 });
      this.checkIdle();
    }, Math.random() * cap);
    this.retryTimers.add(timer);
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

  /** Shutdown: stop retry timers (their attempts are abandoned, and logged as such by the last try). */
  stop(): void {
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    this.checkIdle();
  }
}
