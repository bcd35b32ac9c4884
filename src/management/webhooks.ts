// Webhook management (CONTRACT 6): create, read, update (refreshSecret), delete, list, test sends
// and the deliveries log, scoped to one account. URLs pass the SSRF guard before they are stored.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.js';
import type { Config } from '../config/schema.js';
import type { Store, Webhook } from '../store/store.js';
import { newWebhookSecret } from '../webhooks/signing.js';
import { urlProblem, resolveProblem } from '../webhooks/guard.js';
import type { PublicEvent } from '../lifecycle/events.js';

export interface WebhookInput {
  url?: string;
  isFeedHooks?: boolean;
  isRecordingHooks?: boolean;
  isThumbnailHooks?: boolean;
  filter?: string | null;
  refreshSecret?: boolean;
}

export type WebhookKind = 'Feeds' | 'Recordings' | 'Thumbnail';

export function webhookView(w: Webhook): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: w.id,
    url: w.url,
    secret: w.secret,
    isFeedHooks: w.isFeedHooks,
    isRecordingHooks: w.isRecordingHooks,
    isThumbnailHooks: w.isThumbnailHooks,
  };
  if (w.filter !== undefined) v.filter = w.filter;
  return v;
}

/** A 1×1 JPEG for test sends of the thumbnail kind. */
const SAMPLE_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);

export type WebhookLimits = Pick<Config['webhooks'], 'allowPrivateTargets' | 'maxPerAccount' | 'testSendsPerMinute'>;

const TEST_SEND_WINDOW_MS = 60_000;

export class WebhookService {
  /**
   * When each account's recent test sends were made (oldest first), for a sliding one-minute
   * window. Per instance: behind a load balancer an account gets the limit on each instance.
   */
  private readonly testSends = new LRUCache<string, number[]>({ max: 10_000 });

  constructor(
    private readonly store: Store,
    private readonly limits: WebhookLimits,
    private readonly emit: (e: PublicEvent) => void,
    private readonly now: () => number = Date.now,
  ) {}

  private notFound(id: number): ApiError {
    return ApiError.notFound('webhook', id, 'webhookId');
  }

  private async checkUrl(url: string): Promise<void> {
    const allow = this.limits.allowPrivateTargets;
    const problem = urlProblem(url, allow) ?? (await resolveProblem(new URL(url).hostname, allow));
    if (problem) throw ApiError.field('url', problem);
  }

  private tooMany(): ApiError {
    const max = this.limits.maxPerAccount;
    return new ApiError(400, `Webhook limit reached: an account may hold at most ${max} webhooks; delete one first`, { limit: max });
  }

  /** The ids of the account's first `n` webhooks by id. */
  private async firstIds(accountId: string, n: number): Promise<number[]> {
    return (await this.store.listWebhooks(accountId, { itemCount: n, descending: false })).map((w) => w.id);
  }

  async create(accountId: string, input: WebhookInput & { url: string; isFeedHooks: boolean }): Promise<Record<string, unknown>> {
    const max = this.limits.maxPerAccount;
    if ((await this.firstIds(accountId, max)).length >= max) throw this.tooMany();
    await this.checkUrl(input.url);
    const at = new Date(this.now()).toISOString();
    const w: Omit<Webhook, 'id' | 'rev'> = {
      accountId,
      url: input.url,
      secret: newWebhookSecret(),
      isFeedHooks: input.isFeedHooks,
      isRecordingHooks: input.isRecordingHooks ?? false,
      isThumbnailHooks: input.isThumbnailHooks ?? false,
      createdOn: at,
      updatedOn: at,
    };
    if (input.filter) w.filter = input.filter;
    const created = await this.store.createWebhook(w);
    // Two creates racing past the check above (on one instance or several) both get written; ids
    // grow, so the one outside the first `max` by id is the extra one, and it is taken back.
    if (!(await this.firstIds(accountId, max)).includes(created.id)) {
      await this.store.deleteWebhook(accountId, created.id);
      throw this.tooMany();
    }
    return webhookView(created);
  }

  async read(accountId: string, id: number): Promise<Record<string, unknown>> {
    const w = await this.store.getWebhook(accountId, id);
    if (!w) throw this.notFound(id);
    return webhookView(w);
  }

  async update(accountId: string, id: number, input: WebhookInput): Promise<Record<string, unknown>> {
    if (Object.keys(input).length === 0) throw new ApiError(400, 'No properties specified to update.');
    if (input.url !== undefined) await this.checkUrl(input.url);
    const secret = input.refreshSecret ? newWebhookSecret() : undefined;
    const w = await this.store.updateWebhook(accountId, id, (cur) => {
      const next: Webhook = { ...cur, updatedOn: new Date(this.now()).toISOString() };
      if (input.url !== undefined) next.url = input.url;
      if (input.isFeedHooks !== undefined) next.isFeedHooks = input.isFeedHooks;
      if (input.isRecordingHooks !== undefined) next.isRecordingHooks = input.isRecordingHooks;
      if (input.isThumbnailHooks !== undefined) next.isThumbnailHooks = input.isThumbnailHooks;
      if (input.filter === null || input.filter === '') delete next.filter;
      else if (input.filter !== undefined) next.filter = input.filter;
      if (secret) next.secret = secret;
      return next;
    });
    if (!w) throw this.notFound(id);
    return webhookView(w);
  }

  async remove(accountId: string, id: number): Promise<true> {
    if (!(await this.store.deleteWebhook(accountId, id))) throw this.notFound(id);
    return true;
  }

  async list(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Array<Record<string, unknown>>> {
    return (await this.store.listWebhooks(accountId, q)).map(webhookView);
  }

  async deliveries(accountId: string, id: number): Promise<unknown[]> {
    if (!(await this.store.getWebhook(accountId, id))) throw this.notFound(id);
    return this.store.listDeliveries(accountId, id);
  }

  /**
   * Refuses a test send beyond `testSendsPerMinute` in the last minute (429, with the seconds until
   * one more is allowed), else counts it.
   */
  private countTestSend(accountId: string, at: number): void {
    const recent = (this.testSends.get(accountId) ?? []).filter((t) => t > at - TEST_SEND_WINDOW_MS);
    const max = this.limits.testSendsPerMinute;
    if (recent.length >= max) {
      this.testSends.set(accountId, recent);
      const retryAfterSeconds = Math.max(1, Math.ceil((recent[0] + TEST_SEND_WINDOW_MS - at) / 1000));
      throw new ApiError(429, `Too many test sends: at most ${max} per minute per account; retry in ${retryAfterSeconds} s`, {
        limit: max,
        retryAfterSeconds,
      });
    }
    recent.push(at);
    this.testSends.set(accountId, recent);
  }

  /** Queues a sample event of the kind, delivered like a real one (flags and filters apply). */
  test(accountId: string, kind: WebhookKind, streamName: string): true {
    const at = this.now();
    this.countTestSend(accountId, at);
    const streamId = `${accountId}/${streamName}`;
    if (kind === 'Feeds') {
      this.emit({ type: 'feeds', event: 'started', timestamp: at, data: { feedId: randomUUID(), accountId, name: streamName, streamId, started: at, active: true } });
    } else if (kind === 'Recordings') {
      this.emit({ type: 'recording', event: 'completed', timestamp: at, accountId, data: { recordingId: 0, streamName, streamId, recordedOn: at, path: `/sample/${streamName}.mp4` } });
    } else {
      this.emit({ type: 'thumbnail', timestamp: at, accountId, streamName, streamId, feedId: randomUUID(), contentType: 'image/jpeg', image: SAMPLE_JPEG, test: true });
    }
    return true;
  }
}
