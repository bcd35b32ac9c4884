// /api/webhooks and /api/recordings: the webhook half of the management API.
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { route, type RouteSpec } from '../route.js';
import { text } from '../text.js';
import { MAX_NAME } from '../../domain/matchers.js';
import type { WebhookService } from '../../management/webhooks.js';
import type { Lifecycle } from '../../lifecycle/lifecycle.js';
import type { Recording, Store } from '../../store/store.js';
import { WEBHOOK_TYPES } from '../../webhooks/samples.js';
import { idParamsSchema, patternIssue, queryBool, type PatternCheck } from './schemas.js';
import { copyWith } from '../../domain/objects.js';

const url = z.string().min(1).max(2048).meta({ description: 'https:// and public addresses only' });
/** An optional flag: null is "not given" (the hosted clients send unset fields as null). */
const flag = (description: string) => z.boolean().nullable().optional().meta({ description });

const flags = {
  isRecordingHooks: flag('recording started/completed/deleted events (default false)'),
  isThumbnailHooks: flag('thumbnail images of streams whose publish token has enableThumbnails (default false)'),
  isTranscoderHooks: flag('transcoder events: stored; only test sends produce them (default false)'),
  isMediaHooks: flag('media asset events: stored; only test sends produce them (default false)'),
  isViewerConnectionHooks: flag('viewerConnection events of viewer sessions: ViewerAttempt, FirstViewerConnection, NoActiveViewers (default false)'),
  isTokenSharingHooks: flag('Streamgate: tokenSharing events, a credential flagged as shared (docs/api.md#token-sharing; default false)'),
};

/** The webhook schemas whose filter patterns `check` validates. */
export function webhookSchemas(check: PatternCheck) {
  const filter = text(1, MAX_NAME).superRefine((s, ctx) => patternIssue(check, s, ctx));
  return {
    create: z.strictObject({
      url,
      isFeedHooks: z.boolean().meta({ description: 'feeds started/ended events' }),
      ...flags,
      filter: filter.nullable().optional().meta({ description: 'RE2 pattern, full match on the stream name (the transcoder name for transcoder events)' }),
    }),
    update: z.strictObject({
      url: url.nullable().optional().meta({ description: 'a new url also re-enables a disabled webhook' }),
      refreshSecret: flag('true: a new signing secret; the old one signs nothing more'),
      isFeedHooks: flag('feeds started/ended events'),
      ...flags,
      reEnable: flag('true: enable a webhook disabled after webhooks.disableAfterFailures failed deliveries'),
      filter: filter.nullable().optional().meta({ description: 'null removes the filter' }),
    }),
  };
}

/** An empty query value (or Python's str(None)) is the same as none. */
const absent = (v: unknown) => (v === '' || (typeof v === 'string' && /^(none|null)$/i.test(v)) ? undefined : v);
const itemCount = z.preprocess(absent, z.coerce.number().int().min(1).max(100).optional());

const listWebhooksQuery = z
  .object({
    // The hosted parameter is an integer without a minimum: 0 and negative ids are taken (no
    // webhook has such an id: ascending they list from the first, descending they list none).
    startingId: z
      .preprocess(absent, z.coerce.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).optional())
      .meta({ description: 'inclusive, any integer; absent or empty: from the first (or, descending, the last)' }),
    itemCount: itemCount.meta({ description: '1..100, default 10' }),
    item_count: itemCount.meta({ description: 'alias of itemCount (the Python client sends it)' }),
    isDescending: z.preprocess(absent, queryBool.optional()).meta({ description: 'true/false/True/False/1/0, default false' }),
  })
  .superRefine((q, ctx) => {
    if (q.itemCount !== undefined && q.item_count !== undefined && q.itemCount !== q.item_count) {
      ctx.addIssue({ code: 'custom', path: ['item_count'], message: 'give either itemCount or item_count, not both' });
    }
  })
  .transform((q) => ({ startingId: q.startingId, itemCount: q.itemCount ?? q.item_count ?? 10, descending: q.isDescending ?? false }));

/** The header of a test send's answer that counts the webhooks the sample event was queued for. */
export const TEST_DELIVERIES_HEADER = 'x-streamgate-test-deliveries';

const testBody = z.strictObject({
  streamName: text(1, MAX_NAME).nullable().optional().meta({ description: 'default sample_stream' }),
  transcoderName: text(1, MAX_NAME).nullable().optional().meta({ description: 'for Transcoder; default sample_transcoder' }),
});

const webhookOut = z.object({
  id: z.number().int(),
  url: z.string(),
  secret: z.string(),
  isFeedHooks: z.boolean(),
  isRecordingHooks: z.boolean(),
  isThumbnailHooks: z.boolean(),
  isTranscoderHooks: z.boolean(),
  isMediaHooks: z.boolean(),
  isViewerConnectionHooks: z.boolean(),
  isTokenSharingHooks: z.boolean().optional().meta({ description: 'Streamgate: tokenSharing events (absent when off)' }),
  filter: z.string().optional().meta({ description: 'absent when none' }),
  disabled: z
    .object({ until: z.string().optional(), reason: z.string() })
    .optional()
    .meta({ description: 'absent while enabled; without until: until re-enabled (reEnable or a new url)' }),
});
const deliveryOut = z.object({
  deliveryId: z.string(),
  at: z.string(),
  event: z.string(),
  attempt: z.number().int(),
  statusCode: z.number().int().optional(),
  error: z.string().optional(),
  durationMs: z.number(),
});
const recordingOut = z.object({
  id: z.number().int(),
  streamName: z.string(),
  streamId: z.string(),
  tokenId: z.number().int().optional(),
  path: z.string().optional(),
  status: z.enum(['recording', 'completed']),
  recordedOn: z.string(),
  completedOn: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const recordingView = (r: Recording) => {
  const { accountId, ...rest } = r;
  return copyWith(rest, { streamId: `${accountId}/${r.streamName}` });
};

export function webhookRoutes(webhooks: WebhookService, store: Store, lifecycle: Lifecycle, patterns: PatternCheck): RouteSpec[] {
  const tag = 'Webhooks';
  const schemas = webhookSchemas(patterns);
  return [
    route({
      method: 'post',
      path: '/api/webhooks',
      summary: 'Add a webhook (the answer carries its signing secret); an account holds at most webhooks.maxPerAccount',
      tag,
      auth: 'apiSecret',
      body: schemas.create,
      response: webhookOut,
      handler: ({ account, body, actor }) => webhooks.create(account.id, body, actor),
    }),
    route({
      method: 'get',
      path: '/api/webhooks/list',
      summary: 'List webhooks by id (startingId inclusive)',
      tag,
      auth: 'apiSecret',
      query: listWebhooksQuery,
      response: z.array(webhookOut),
      handler: ({ account, query }) => webhooks.list(account.id, query),
    }),
    route({
      method: 'post',
      path: '/api/webhooks/test/:kind',
      summary:
        'Send the sample event of a webhook type to the enabled webhooks with its flag now; the body is optional (429 with Retry-After beyond webhooks.testSendsPerMinute)',
      tag,
      auth: 'apiSecret',
      params: z.object({ kind: z.enum(WEBHOOK_TYPES) }),
      body: testBody,
      response: z.literal(true),
      responseHeaders: {
        [TEST_DELIVERIES_HEADER]: {
          description: 'how many webhooks the sample event was queued for: enabled, with the type flag, and a filter that matches (0: none; docs/api.md#test-sends)',
          type: 'integer',
        },
      },
      handler: async ({ account, params, body, res }) => {
        let deliveries: number;
        try {
          deliveries = await webhooks.test(account.id, params.kind, body);
        } catch (e) {
          if (e instanceof ApiError && e.status === 429) res.set('retry-after', String(e.details.retryAfterSeconds));
          throw e;
        }
        // the body stays the hosted API's `true`; the header says whether anything will arrive
        res.set(TEST_DELIVERIES_HEADER, String(deliveries));
        return true as const;
      },
    }),
    route({
      method: 'get',
      path: '/api/webhooks/:id/deliveries',
      summary: 'The last 100 delivery attempts, newest first',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: z.array(deliveryOut),
      handler: ({ account, params }) => webhooks.deliveries(account.id, params.id),
    }),
    route({
      method: 'get',
      path: '/api/webhooks/:id',
      summary: 'Read a webhook',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: webhookOut,
      handler: ({ account, params }) => webhooks.read(account.id, params.id),
    }),
    route({
      method: 'put',
      path: '/api/webhooks/:id',
      summary: 'Update a webhook; refreshSecret renews its signing secret',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      body: schemas.update,
      response: webhookOut,
      handler: ({ account, params, body, actor }) => webhooks.update(account.id, params.id, body, actor),
    }),
    route({
      method: 'delete',
      path: '/api/webhooks/:id',
      summary: 'Delete a webhook; answers it as it was',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: webhookOut,
      handler: ({ account, params, actor }) => webhooks.remove(account.id, params.id, actor),
    }),
    route({
      method: 'get',
      path: '/api/recordings',
      summary: 'Recordings reported by the media servers, newest first',
      tag: 'Recordings',
      auth: 'apiSecret',
      query: z.object({ streamName: text(1, MAX_NAME).optional() }),
      response: z.array(recordingOut),
      handler: async ({ account, query }) => (await store.listRecordings(account.id, query.streamName)).map(recordingView),
    }),
    route({
      method: 'delete',
      path: '/api/recordings/:id',
      summary: 'Forget a recording and send the "recording deleted" event',
      tag: 'Recordings',
      auth: 'apiSecret',
      params: idParamsSchema,
      response: z.literal(true),
      handler: async ({ account, params, actor }) => {
        const r = await webhooks.forgetRecording(account.id, params.id, actor);
        if (!r) throw ApiError.notFound('recording', params.id, 'recordingId');
        lifecycle.signal({
          kind: 'recording',
          event: 'deleted',
          caller: 'api',
          accountId: account.id,
          streamName: r.streamName,
          tokenId: r.tokenId,
          path: r.path,
          metadata: r.metadata,
          recordedOn: r.recordedOn,
          recordingId: r.id,
          alreadyDeleted: true,
        });
        return true;
      },
    }),
  ];
}
