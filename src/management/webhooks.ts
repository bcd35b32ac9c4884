// Webhook management: create, read, update (refreshSecret, reEnable), delete, list, test sends and
// the deliveries log, scoped to one account, with the hosted API's shapes (docs/api.md#webhooks).
// URLs pass the SSRF guard before they are stored.
import { LRUCache } from 'lru-cache';
import { ApiError } from '../errors.js';
import type { Config } from '../config/schema.js';
import type { Store, Webhook } from '../store/store.js';
import { newWebhookSecret } from '../webhooks/signing.js';
import { urlProblem, resolveProblem } from '../webhooks/guard.js';
import { SAMPLE_STREAM_NAME, SAMPLE_TRANSCODER_NAME, sampleEvent, type DeliverableEvent, type WebhookType } from '../webhooks/samples.js';
import { copyWith } from '../domain/objects.js';
import { compileStreams } from '../policy/rules.js';
import type { Actor } from '../audit/actor.js';
import { RECORDING, WEBHOOK, type AuditLog } from '../audit/log.js';
import type { Recording } from '../store/store.js';

/** The event flags of a webhook, as the hosted API names them. */
export const HOOK_FLAGS = ['isFeedHooks', 'isRecordingHooks', 'isThumbnailHooks', 'isTranscoderHooks', 'isMediaHooks', 'isViewerConnectionHooks', 'isTokenSharingHooks'] as const;
type HookFlag = (typeof HOOK_FLAGS)[number];

/** A create or update body. `null` is "not given", except `filter: null` on update (clears it). */
export type WebhookInput = {
  url?: string | null;
  filter?: string | null;
  refreshSecret?: boolean | null;
  reEnable?: boolean | null;
} & { [F in HookFlag]?: boolean | null };

/**
 * The hosted WebhookModel, plus Streamgate's `filter` and `isTokenSharingHooks` (when on). Unset fields are left out, never null
 * (docs/compatibility.md#webhooks): `filter` when there is none, `disabled` while the webhook is
 * enabled, and its `until` when it stays disabled until re-enabled.
 */
export function webhookView(w: Webhook): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: w.id,
    url: w.url,
    secret: w.secret,
    isFeedHooks: w.isFeedHooks,
    isRecordingHooks: w.isRecordingHooks,
    isThumbnailHooks: w.isThumbnailHooks,
    isTranscoderHooks: w.isTranscoderHooks ?? false,
    isMediaHooks: w.isMediaHooks ?? false,
    isViewerConnectionHooks: w.isViewerConnectionHooks ?? false,
  };
  // Streamgate's own event type: answered only when on, so the hosted clients' models see their fields alone
  if (w.isTokenSharingHooks === true) v.isTokenSharingHooks = true;
  if (w.filter !== undefined) v.filter = w.filter;
  if (w.disabled) v.disabled = w.disabled.until === null ? { reason: w.disabled.reason } : { until: w.disabled.until, reason: w.disabled.reason };
  return v;
}

export type WebhookLimits = Pick<Config['webhooks'], 'allowPrivateTargets' | 'maxPerAccount' | 'testSendsPerMinute'>;

const TEST_SEND_WINDOW_MS = 60_000;
/** Publish tokens a media or recording sample looks through for one that matches its stream. */
const SAMPLE_TOKENS_READ = 100;

export class WebhookService {
  /**
   * When each account's recent test sends were made (oldest first), for a sliding one-minute
   * window. Per instance: behind a load balancer an account gets the limit on each instance.
   */
  private readonly testSends = new LRUCache<string, number[]>({ max: 10_000 });

  constructor(
    private readonly store: Store,
    private readonly limits: WebhookLimits,
    /** Queues an event's deliveries; answers how many were queued. */
    private readonly emit: (e: DeliverableEvent) => Promise<number>,
    private readonly now: () => number = Date.now,
    /** Every write's entry (docs/api.md#audit-log); none without. */
    private readonly audit?: AuditLog,
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

  async create(accountId: string, input: WebhookInput & { url: string; isFeedHooks: boolean }, by: Actor): Promise<Record<string, unknown>> {
    const seal = this.audit?.sealer(by, accountId, 'webhook', WEBHOOK);
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
      isTranscoderHooks: input.isTranscoderHooks ?? false,
      isMediaHooks: input.isMediaHooks ?? false,
      isViewerConnectionHooks: input.isViewerConnectionHooks ?? false,
      isTokenSharingHooks: input.isTokenSharingHooks ?? false,
      createdOn: at,
      updatedOn: at,
    };
    if (input.filter) w.filter = input.filter;
    const created = await this.store.createWebhook(w, seal);
    // Two creates racing past the check above (on one instance or several) both get written; ids
    // grow, so the one outside the first `max` by id is the extra one, and it is taken back.
    if (!(await this.firstIds(accountId, max)).includes(created.id)) {
      await this.store.deleteWebhook(accountId, created.id, seal);
      throw this.tooMany();
    }
    return webhookView(created);
  }

  async read(accountId: string, id: number): Promise<Record<string, unknown>> {
    const w = await this.store.getWebhook(accountId, id);
    if (!w) throw this.notFound(id);
    return webhookView(w);
  }

  /**
   * Changes what the body gives. A disabled webhook is enabled again by `reEnable: true` or by a
   * `url` other than its current one (as on the hosted platform), which also restarts its count of
   * failed deliveries.
   */
  async update(accountId: string, id: number, input: WebhookInput, by: Actor): Promise<Record<string, unknown>> {
    const given = Object.entries(input).filter(([k, v]) => v !== undefined && (v !== null || k === 'filter'));
    if (given.length === 0) throw new ApiError(400, 'No properties specified to update.');
    const url = input.url ?? undefined;
    if (url !== undefined) await this.checkUrl(url);
    const secret = input.refreshSecret ? newWebhookSecret() : undefined;
    const w = await this.store.updateWebhook(accountId, id, (cur) => {
      const next: Webhook = copyWith(cur, { updatedOn: new Date(this.now()).toISOString() });
      if (url !== undefined) next.url = url;
      for (const flag of HOOK_FLAGS) {
        const v = input[flag];
        if (v !== undefined && v !== null) next[flag] = v;
      }
      if (input.filter === null || input.filter === '') delete next.filter;
      else if (input.filter !== undefined) next.filter = input.filter;
      if (secret) next.secret = secret;
      if (input.reEnable === true || (url !== undefined && url !== cur.url)) {
        delete next.disabled;
        delete next.failures;
      }
      return next;
    }, this.audit?.sealer(by, accountId, 'webhook', WEBHOOK));
    if (!w) throw this.notFound(id);
    return webhookView(w);
  }

  /** Deletes the webhook and answers it as it was (the hosted API's answer). */
  async remove(accountId: string, id: number, by: Actor): Promise<Record<string, unknown>> {
    const w = await this.store.getWebhook(accountId, id);
    if (!w || !(await this.store.deleteWebhook(accountId, id, this.audit?.sealer(by, accountId, 'webhook', WEBHOOK)))) throw this.notFound(id);
    return webhookView(w);
  }

  /** Forgets a recording (`DELETE /api/recordings/{id}`, the webhook half of the API); null when the account has none of that id. */
  forgetRecording(accountId: string, id: number, by: Actor): Promise<Recording | null> {
    return this.store.deleteRecording(accountId, id, this.audit?.sealer(by, accountId, 'recording', RECORDING));
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

  /**
   * Queues the sample event of a webhook type (src/webhooks/samples.ts), delivered like a real one:
   * to the account's enabled webhooks with the type's flag whose filter matches. Without names the
   * samples use `sample_stream` and `sample_transcoder`. Answers how many webhooks it was queued
   * for (docs/api.md#test-sends).
   */
  async test(accountId: string, type: WebhookType, names: { streamName?: string | null; transcoderName?: string | null } = {}): Promise<number> {
    const at = this.now();
    this.countTestSend(accountId, at);
    const streamName = names.streamName ?? SAMPLE_STREAM_NAME;
    const tokenId = type === 'Media' || type === 'Recordings' ? await this.samplePublishToken(accountId, streamName) : undefined;
    return this.emit(sampleEvent(type, accountId, { streamName, transcoderName: names.transcoderName ?? SAMPLE_TRANSCODER_NAME, tokenId }, at));
  }

  /**
   * The publish token a media or recording sample of `streamName` names: the one publishing it now,
   * else the oldest active one (of the first 100) whose stream rules match the name.
   */
  private async samplePublishToken(accountId: string, streamName: string): Promise<number | undefined> {
    const live = await this.store.activePublishTokenIds(accountId, streamName);
    if (live.length > 0) return live[0];
    const tokens = await this.store.listTokens(accountId, 'publish', { sortBy: 'AddedOn', page: 1, itemsOnPage: SAMPLE_TOKENS_READ, descending: false });
    return tokens.find((t) => t.isActive && compileStreams(t.streams)(streamName))?.id;
  }
}
