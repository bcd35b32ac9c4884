// Generic lifecycle input for callers without an adapter: POST /hooks/events (feeds, recordings)
// and POST /hooks/thumbnail?streamId=<account>/<name> with the image as the body.
import express, { type Request, type Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import { z } from 'zod';
import { text } from '../text.js';
import type { Services } from '../../services.js';
import { bodyParsers } from '../middleware.js';
import { MAX_NAME } from '../../domain/matchers.js';
import { badHookRequest } from './authorize.js';
import { issuesToFieldErrors } from '../validation.js';

const CALLER = 'events';

const streamIdSchema = text(3, 300).regex(/^[^/]+\/.+$/, 'expected <accountId>/<streamName>');

export const eventBodySchema = z
  .strictObject({
    type: z.enum(['feeds', 'recording', 'recordings']),
    event: z.enum(['started', 'ended', 'completed', 'deleted']),
    streamId: streamIdSchema.optional(),
    accountId: text(1, 64).optional(),
    streamName: text(1, MAX_NAME).optional(),
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

export function mountEvents(app: DecisionRoutes, s: Services): void {
  app.post('/hooks/events', ...bodyParsers('json', s.config.server.bodyLimitBytes), (req: Request, res: Response) => {
    const parsed = eventBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) return badHookRequest(res, issuesToFieldErrors(parsed.error.issues, 'body'));
    const b = parsed.data;
    const { accountId, streamName } = b.streamId ? splitStreamId(b.streamId) : { accountId: b.accountId!, streamName: b.streamName! };
    const sessionId = typeof b.data?.feedId === 'string' ? b.data.feedId : undefined;
    if (b.type === 'feeds') {
      s.lifecycle.signal(
        b.event === 'started'
          ? { kind: 'session_started', caller: CALLER, sessionId, action: 'publish', accountId, streamName, tokenId: b.tokenId }
          : { kind: 'session_ended', caller: CALLER, sessionId, action: 'publish', accountId, streamName },
      );
    } else {
      s.lifecycle.signal({
        kind: 'recording',
        event: b.event as 'started' | 'completed' | 'deleted',
        caller: CALLER,
        accountId,
        streamName,
        tokenId: b.tokenId,
        path: typeof b.data?.path === 'string' ? b.data.path : undefined,
        metadata: typeof b.data?.metadata === 'object' && b.data.metadata !== null ? (b.data.metadata as Record<string, unknown>) : undefined,
        recordingId: typeof b.data?.recordingId === 'number' ? b.data.recordingId : undefined,
      });
    }
    res.status(202).json({ received: true });
  });

  app.post(
    '/hooks/thumbnail',
    express.raw({ type: () => true, limit: s.config.hooks.thumbnailMaxBytes }),
    (req: Request, res: Response) => {
      const sid = streamIdSchema.safeParse(req.query.streamId);
      const type = req.get('content-type') ?? '';
      const image = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const errors: Record<string, string[]> = {};
      if (!sid.success) errors.streamId = ['expected ?streamId=<accountId>/<streamName>'];
      if (!/^image\//i.test(type)) errors['content-type'] = ['expected an image/* body (image/jpeg)'];
      if (image.length === 0) errors.body = ['the image is empty'];
      if (Object.keys(errors).length > 0) return badHookRequest(res, errors);
      const { accountId, streamName } = splitStreamId(sid.data!);
      s.lifecycle.signal({ kind: 'thumbnail', accountId, streamName, contentType: type, image });
      res.status(202).json({ received: true });
    },
  );
}
