// Webhook management (CONTRACT 6): create, read, update (refreshSecret), delete, list, test sends
// and the deliveries log, scoped to one account. URLs pass the SSRF guard before they are stored.
import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors.js';
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

export class WebhookService {
  constructor(
    private readonly store: Store,
    private readonly allowPrivateTargets: boolean,
    private readonly emit: (e: PublicEvent) => void,
    private readonly now: () => number = Date.now,
  ) {}

  private notFound(id: number): ApiError {
    return ApiError.notFound('webhook', id, 'webhookId');
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = urlProblem(url, this.allowPrivateTargets) ?? (await resolveProblem(new URL(url).hostname, this.allowPrivateTargets));
    if (problem) throw ApiError.field('url', problem);
  }

  async create(accountId: string, input: WebhookInput & { url: string; isFeedHooks: boolean }): Promise<Record<string, unknown>> {
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
    return webhookView(await this.store.createWebhook(w));
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

  /** Queues a sample event of the kind, delivered like a real one (flags and filters apply). */
  test(accountId: string, kind: WebhookKind, streamName: string): true {
    const at = this.now();
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
