// Test sends: the sample event of each webhook type the hosted API lets an account test, in the
// hosted platform's shapes. Feeds, recordings and thumbnails are Streamgate's own events; the
// transcoder, media and viewerConnection types have no source in Streamgate, so only these samples
// produce them (docs/api.md#test-sends).
import { randomBytes, randomUUID } from 'node:crypto';
import type { PublicEvent } from '../lifecycle/events.js';

/** The hosted API's WebhookType values, as `POST /api/webhooks/test/{webhookType}` takes them. */
export const WEBHOOK_TYPES = ['Recordings', 'Thumbnail', 'Transcoder', 'Media', 'Feeds', 'ViewerConnection', 'TokenSharing'] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/** The names a test send uses when the request gives none. */
export const SAMPLE_STREAM_NAME = 'sample_stream';
export const SAMPLE_TRANSCODER_NAME = 'sample_transcoder';

/**
 * An event of a type Streamgate has no source for: delivered as `{type, event, timestamp, data}`
 * to the webhooks with the matching flag whose filter matches `filterName`.
 */
export interface SampleEvent {
  type: 'transcoder' | 'media' | 'viewerConnection';
  event: string;
  timestamp: number;
  accountId: string;
  /** What a webhook's filter is matched against: the stream name, or the transcoder name. */
  filterName: string;
  data: Record<string, unknown>;
}

/** Everything the dispatcher delivers. */
export type DeliverableEvent = PublicEvent | SampleEvent;

/** A 1×1 JPEG for test sends of the thumbnail type. */
export const SAMPLE_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);

/** A sample media asset's `expiration`: 100 days after its `startTime`, as in the hosted media hook examples. */
export const SAMPLE_MEDIA_EXPIRY_MS = 100 * 24 * 3600 * 1000;

/**
 * The sample event of `type` for the account (ids are fresh for each send). `tokenId` is the
 * publish token the media and recording samples name (absent: the account has none for the stream).
 */
export function sampleEvent(
  type: WebhookType,
  accountId: string,
  names: { streamName: string; transcoderName: string; tokenId?: number },
  at: number,
): DeliverableEvent {
  const { streamName, transcoderName, tokenId } = names;
  const streamId = `${accountId}/${streamName}`;
  switch (type) {
    case 'Feeds':
      return { type: 'feeds', event: 'started', timestamp: at, data: { feedId: randomUUID(), accountId, name: streamName, streamId, started: at, active: true } };
    case 'Recordings': {
      const data: Extract<DeliverableEvent, { type: 'recording' }>['data'] = { recordingId: 0, streamName, streamId, recordedOn: at, path: `/sample/${streamName}.mp4` };
      if (tokenId !== undefined) data.tokenId = tokenId;
      return { type: 'recording', event: 'completed', timestamp: at, accountId, data };
    }
    case 'Thumbnail':
      return { type: 'thumbnail', timestamp: at, accountId, streamName, streamId, feedId: randomUUID(), contentType: 'image/jpeg', image: SAMPLE_JPEG, test: true };
    case 'Media': {
      // The hosted media hook's data, tokenId only when a publish token is named (as there: "present
      // when the media asset originates from a publish token").
      const data: Record<string, unknown> = { mediaAssetId: randomBytes(16).toString('hex'), type: 'recording' };
      if (tokenId !== undefined) data.tokenId = tokenId;
      Object.assign(data, { streamName, streamId, startTime: at, expiration: at + SAMPLE_MEDIA_EXPIRY_MS, metadata: {} });
      return { type: 'media', event: 'completed', timestamp: at, accountId, filterName: streamName, data };
    }
    case 'ViewerConnection':
      return { type: 'viewerConnection', event: 'ViewerAttempt', timestamp: at, accountId, filterName: streamName, data: { name: streamName, accountId, streamId } };
    case 'TokenSharing':
      return {
        type: 'tokenSharing',
        event: 'Flagged',
        timestamp: at,
        accountId,
        filterName: 'sample token',
        data: {
          accountId,
          tokenId: tokenId ?? 0,
          tokenType: 'subscribe',
          label: 'sample token',
          flags: ['countries'],
          action: 'notify',
          windowSeconds: 3600,
          addresses: 20,
          networks: 20,
          asns: 12,
          countries: 5,
          countryCodes: ['BR', 'DE', 'FR', 'JP', 'US'],
        },
      };
    case 'Transcoder':
      return {
        type: 'transcoder',
        event: 'ACTIVE',
        timestamp: at,
        accountId,
        filterName: transcoderName,
        data: { transcoderId: randomUUID(), transcoderName, cluster: 'sample', createdOn: new Date(at).toISOString(), status: 'Active' },
      };
  }
}
