// The webhooks aggregate: an account's webhooks and each one's deliveries log.
import type { AuditSealer } from '../domain/audit.js';

/** An account's webhook (docs/api.md#webhooks). */
export interface Webhook {
  id: number;
  accountId: string;
  url: string;
  /** base64 of 32 random bytes; the HMAC key is its decoded bytes */
  secret: string;
  isFeedHooks: boolean;
  isRecordingHooks: boolean;
  isThumbnailHooks: boolean;
  /** Stored and returned (absent = false); only test sends produce transcoder and media events. */
  isTranscoderHooks?: boolean;
  isMediaHooks?: boolean;
  isViewerConnectionHooks?: boolean;
  /** Streamgate: TokenSharing events (docs/api.md#token-sharing); absent = false. */
  isTokenSharingHooks?: boolean;
  /** RE2 pattern, full match on the stream name (the transcoder name for transcoder events) */
  filter?: string;
  /** Set after webhooks.disableAfterFailures consecutive failed deliveries; no events while set. */
  disabled?: { until: string | null; reason: string };
  /** Consecutive failed deliveries (absent = 0), counted while webhooks.disableAfterFailures > 0. */
  failures?: number;
  createdOn: string;
  updatedOn: string;
  rev: number;
}

/** One delivery attempt, as the deliveries log shows it. */
export interface Delivery {
  deliveryId: string;
  at: string;
  /** feeds.started, recording.completed, thumbnail, ... */
  event: string;
  attempt: number;
  statusCode?: number;
  error?: string;
  durationMs: number;
}

export interface WebhookStore {
  /**
   * Stores a webhook and assigns its id (unique per deployment). `audit` (here and below): the
   * change's entry, appended in the same atomic step (src/store/audit.ts).
   */
  createWebhook(w: Omit<Webhook, 'id' | 'rev'>, audit?: AuditSealer<Webhook>): Promise<Webhook>;
  getWebhook(accountId: string, id: number): Promise<Webhook | null>;
  /** Atomic read-modify-write (the change may run again on a newer version). Null: not found. */
  updateWebhook(accountId: string, id: number, change: (cur: Webhook) => Webhook, audit?: AuditSealer<Webhook>): Promise<Webhook | null>;
  /** Deletes the webhook and its deliveries log. */
  deleteWebhook(accountId: string, id: number, audit?: AuditSealer<Webhook>): Promise<boolean>;
  /** The account's webhooks by id: from `startingId` (inclusive) in the given direction. */
  listWebhooks(accountId: string, q: { startingId?: number; itemCount: number; descending: boolean }): Promise<Webhook[]>;
  /** Appends a delivery attempt to the webhook's log (while it exists), keeping the newest 100 (DELIVERIES_KEPT). */
  addDelivery(accountId: string, webhookId: number, d: Delivery): Promise<void>;
  /** The webhook's delivery attempts, newest first (at most 100). */
  listDeliveries(accountId: string, webhookId: number): Promise<Delivery[]>;
}
