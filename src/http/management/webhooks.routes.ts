// /api/webhooks and /api/recordings: the webhook half of the management API.
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import { route, type RouteSpec } from '../route.js';
import { text } from '../text.js';
import { MAX_NAME } from '../../domain/matchers.js';
import type { WebhookService } from '../../management/webhooks.js';
import type { Lifecycle } from '../../lifecycle/lifecycle.js';
import type { Recording, Store } from '../../store/store.js';
import { idParamsSchema, patternIssue, type PatternCheck } from './schemas.js';

const url = z.string().min(1).max(2048).meta({ description: 'https:// and public addresses only' });

/** The webhook schemas whose filter patterns `check` validates. */
export function webhookSchemas(check: PatternCheck) {
  const filter = text(1, MAX_NAME).superRefine((s, ctx) => patternIssue(check, s, ctx));
  return {
    create: z.strictObject({
      url,
      isFeedHooks: z.boolean(),
      isRecordingHooks: z.boolean().optional(),
      isThumbnailHooks: z.boolean().optional(),
      filter: filter.nullable().optional().meta({ description: 'RE2 pattern, full match on the stream name' }),
    }),
    update: z.strictObject({
      url: url.optional(),
      isFeedHooks: z.boolean().optional(),
      isRecordingHooks: z.boolean().optional(),
      isThumbnailHooks: z.boolean().optional(),
      filter: filter.nullable().optional().meta({ description: 'null removes the filter' }),
      refreshSecret: z.boolean().optional().meta({ description: 'true: a new signing secret; the old one signs nothing more' }),
    }),
  };
}

const listWebhooksQuery = z.object({
  startingId: z.coerce.number().int().min(1).optional(),
  itemCount: z.coerce.number().int().min(1).max(100).default(10),
  isDescending: z
    .string()
    .regex(/^(true|false)$/i, 'expected true or false')
    .transform((v) => v.toLowerCase() === 'true')
    .default(false),
});

const webhookOut = z.object({
  id: z.number().int(),
  url: z.string(),
  secret: z.string(),
  isFeedHooks: z.boolean(),
  isRecordingHooks: z.boolean(),
  isThumbnailHooks: z.boolean(),
  filter: z.string().optional(),
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
  return { ...rest, streamId: `${accountId}/${r.streamName}` };
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
      status: 201,
      handler: ({ account, body }) => webhooks.create(account.id, body),
    }),
    route({
      method: 'get',
      path: '/api/webhooks/list',
      summary: 'List webhooks by id (startingId inclusive)',
      tag,
      auth: 'apiSecret',
      query: listWebhooksQuery,
      response: z.array(webhookOut),
      handler: ({ account, query }) =>
        webhooks.list(account.id, { startingId: query.startingId, itemCount: query.itemCount, descending: query.isDescending }),
    }),
    route({
      method: 'post',
      path: '/api/webhooks/test/:kind',
      summary: 'Send a sample event of a kind (Feeds, Recordings, Thumbnail) to the matching webhooks now (429 with Retry-After beyond webhooks.testSendsPerMinute)',
      tag,
      auth: 'apiSecret',
      params: z.object({ kind: z.enum(['Feeds', 'Recordings', 'Thumbnail']) }),
      body: z.strictObject({ streamName: text(1, MAX_NAME) }),
      response: z.literal(true),
      handler: async ({ account, params, body, res }) => {
        try {
          return webhooks.test(account.id, params.kind, body.streamName);
        } catch (e) {
          if (e instanceof ApiError && e.status === 429) res.set('retry-after', String(e.details.retryAfterSeconds));
          throw e;
        }
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
      handler: ({ account, params, body }) => webhooks.update(account.id, params.id, body),
    }),
    route({
      method: 'delete',
      path: '/api/webhooks/:id',
      summary: 'Delete a webhook',
      tag,
      auth: 'apiSecret',
      params: idParamsSchema,
      response: z.literal(true),
      handler: ({ account, params }) => webhooks.remove(account.id, params.id),
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
      handler: async ({ account, params }) => {
        const r = await store.deleteRecording(account.id, params.id);
        if (!r) throw ApiError.notFound('recording', params.id, 'recordingId');
        lifecycle.signal({
          kind: 'recording',
          event: 'deleted',
          caller: 'api',
          accountId: account.id,
          streamName: r.streamName,
          tokenId: r.tokenId,
          path: r.path,
          recordingId: r.id,
          alreadyDeleted: true,
        });
        return true;
      },
    }),
  ];
}
