// Generic lifecycle input for callers without an adapter: POST /hooks/events (feeds, recordings)
// and POST /hooks/thumbnail?streamId=<account>/<name> with the image as the body.
import { z } from 'zod';
import { text } from '../http/text.js';
import { issuesToFieldErrors } from '../http/validation.js';
import type { LifecycleSignal } from '../lifecycle/events.js';
import type { Caller, Reply } from './caller.js';
import { ACCOUNT_ID_MAX, STREAM_NAME_MAX, badRequest } from './shared.js';

const CALLER = 'events';
const RECEIVED: Reply = { status: 202, json: { received: true } };

const streamIdSchema = text(3, 300).regex(/^[^/]+\/.+$/, 'expected <accountId>/<streamName>');

export const eventBodySchema = z
  .strictObject({
    type: z.enum(['feeds', 'recording', 'recordings']),
    event: z.enum(['started', 'ended', 'completed', 'deleted']),
    streamId: streamIdSchema.optional(),
    accountId: text(1, ACCOUNT_ID_MAX).optional(),
    streamName: text(1, STREAM_NAME_MAX).optional(),
    tokenId: z.number().int().min(1).optional(),
    data: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((b, ctx) => {
    if (!b.streamId && !(b.accountId && b.streamName)) {
      ctx.addIssue({ code: 'custom', path: ['streamId'], message: 'give streamId, or accountId and streamName' });
    }
    const feedEvents = ['started', 'ended'];
    const recordingEvents = ['started', 'completed', 'deleted'];
    if (b.type === 'feeds' ? !feedEvents.includes(b.event) : !recordingEvents.includes(b.event)) {
      ctx.addIssue({ code: 'custom', path: ['event'], message: `not an event of type ${b.type}` });
    }
  });

function splitStreamId(streamId: string): { accountId: string; streamName: string } {
  const i = streamId.indexOf('/');
  return { accountId: streamId.slice(0, i), streamName: streamId.slice(i + 1) };
}

export const events: Caller = {
  name: CALLER,
  // A feed's session is the feedId its events carry (data.feedId).
  capabilities: { sessionIdentity: true, reasks: false, terminate: false },
  routes: [
    {
      method: 'POST',
      path: '/hooks/events',
      body: 'json',
      read(req) {
        const parsed = eventBodySchema.safeParse(req.body ?? {});
        if (!parsed.success) return { reply: badRequest(issuesToFieldErrors(parsed.error.issues, 'body')) };
        const b = parsed.data;
        const { accountId, streamName } = b.streamId ? splitStreamId(b.streamId) : { accountId: b.accountId!, streamName: b.streamName! };
        const sessionId = typeof b.data?.feedId === 'string' ? b.data.feedId : undefined;
        let signal: LifecycleSignal;
        if (b.type === 'feeds') {
          signal =
            b.event === 'started'
              ? { kind: 'session_started', caller: CALLER, sessionId, action: 'publish', accountId, streamName, tokenId: b.tokenId }
              : { kind: 'session_ended', caller: CALLER, sessionId, action: 'publish', accountId, streamName };
        } else {
          signal = {
            kind: 'recording',
            event: b.event as 'started' | 'completed' | 'deleted',
            caller: CALLER,
            accountId,
            streamName,
            tokenId: b.tokenId,
            path: typeof b.data?.path === 'string' ? b.data.path : undefined,
            metadata: typeof b.data?.metadata === 'object' && b.data.metadata !== null ? (b.data.metadata as Record<string, unknown>) : undefined,
            recordingId: typeof b.data?.recordingId === 'number' ? b.data.recordingId : undefined,
          };
        }
        return { reply: RECEIVED, signals: [signal] };
      },
      docs: [{ summary: 'Generic lifecycle events (feeds, recordings)', body: eventBodySchema, status: 202, answer: 'Queued' }],
    },
    {
      method: 'POST',
      path: '/hooks/thumbnail',
      body: 'image',
      read(req) {
        const sid = streamIdSchema.safeParse(req.query.streamId);
        const type = req.get('content-type') ?? '';
        const image = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const errors: Record<string, string[]> = {};
        if (!sid.success) errors.streamId = ['expected ?streamId=<accountId>/<streamName>'];
        if (!/^image\//i.test(type)) errors['content-type'] = ['expected an image/* body (image/jpeg)'];
        if (image.length === 0) errors.body = ['the image is empty'];
        if (Object.keys(errors).length > 0) return { reply: badRequest(errors) };
        const { accountId, streamName } = splitStreamId(sid.data!);
        return { reply: RECEIVED, signals: [{ kind: 'thumbnail', accountId, streamName, contentType: type, image }] };
      },
      docs: [{ summary: 'A stream thumbnail (?streamId=<account>/<stream>, image body)', bodyType: 'image/jpeg', status: 202, answer: 'Queued' }],
    },
  ],
};
