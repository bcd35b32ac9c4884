// Hosted endpoints Streamgate does not provide (docs/compatibility.md#endpoints-streamgate-does-not-provide):
// cloud transcoders, record files and media assets, stream reprioritisation and restream sync
// belong to a media platform, not to an access gate in front of the operator's own media servers.
// Each is answered, behind the API secret like every management route, with 501 and the hosted
// fail envelope saying so, instead of the generic 404 that reads like a wrong path.
import { z } from 'zod';
import { ApiError } from '../../errors.js';
import type { RouteSpec } from '../route.js';

interface NotProvided {
  method: RouteSpec['method'];
  /** The hosted path, express syntax. */
  path: string;
  /** The hosted operation's name. */
  operation: string;
}

/** Why Streamgate has no such endpoint, and what to use instead, per family. */
const FAMILIES = {
  transcoders: {
    tag: 'Not provided: transcoders',
    why: 'Streamgate runs no cloud transcoders; transcode on your own media servers (ABR ladders, simulcast) and publish through them',
  },
  recordFiles: {
    tag: 'Not provided: record files',
    why: 'Streamgate stores no recordings; your media servers record, and their recording events are listed by GET /api/recordings',
  },
  mediaAssets: {
    tag: 'Not provided: media assets',
    why: 'Streamgate keeps no media assets (recordings, clips, uploads); your media servers record, and their recording events are listed by GET /api/recordings',
  },
  reprioritize: {
    tag: 'Not provided: stream priority',
    why: "Streamgate does not rank a stream's sources; a token's priority is stored (PUT /api/v2/publish_token/{id}) and a stream is restarted with POST /api/stream/stop",
  },
  restreamSync: {
    tag: 'Not provided: restreaming',
    why: "Streamgate does not restream; a token's restream targets are stored and returned, never pushed",
  },
} as const;

type Family = keyof typeof FAMILIES;

/** The hosted operations, by family (the hosted OpenAPI documents, and the official Node client's calls). */
export const NOT_PROVIDED: Record<Family, NotProvided[]> = {
  transcoders: [
    // the specific paths first: /:transcoderId would match them too
    { method: 'get', path: '/api/transcoders/instances', operation: 'List Transcoder Instances' },
    { method: 'get', path: '/api/transcoders/instances/:instanceId', operation: 'Get Transcoder Instance' },
    { method: 'get', path: '/api/transcoders/profiles', operation: 'List Transcoder Profiles' },
    { method: 'put', path: '/api/transcoders/start/:transcoderId', operation: 'Start Transcoder' },
    { method: 'put', path: '/api/transcoders/stop/:transcoderId', operation: 'Stop Transcoder' },
    { method: 'get', path: '/api/transcoders', operation: 'List Transcoders' },
    { method: 'post', path: '/api/transcoders', operation: 'Create Transcoder' },
    { method: 'get', path: '/api/transcoders/:transcoderId', operation: 'Get Transcoder' },
    { method: 'put', path: '/api/transcoders/:transcoderId', operation: 'Update Transcoder' },
    { method: 'delete', path: '/api/transcoders/:transcoderId', operation: 'Delete Transcoder' },
  ],
  recordFiles: [
    { method: 'get', path: '/api/record_files/list', operation: 'List Files' },
    { method: 'get', path: '/api/record_files/list_by_token', operation: 'List Files By Token' },
    { method: 'get', path: '/api/record_files/list_by_stream', operation: 'List Files By Stream' },
    { method: 'get', path: '/api/record_files/usage', operation: 'Usage' },
    { method: 'get', path: '/api/record_files/usage_billing', operation: 'Usage Billable' },
    { method: 'post', path: '/api/record_files/delete', operation: 'Delete Files' },
    { method: 'post', path: '/api/record_files/delete/all', operation: 'Delete All Files' },
    // the Node client (5.0.1, recordFiles.deleteAllFiles) sends it as a GET
    { method: 'get', path: '/api/record_files/delete/all', operation: 'Delete All Files' },
    { method: 'get', path: '/api/record_files/:recordFileId', operation: 'Read File' },
    { method: 'delete', path: '/api/record_files/:recordFileId', operation: 'Delete File' },
    { method: 'get', path: '/api/v2/record_files/list', operation: 'List Media Assets (v2)' },
    { method: 'post', path: '/api/v2/record_files/delete', operation: 'Delete Media Assets (v2)' },
    { method: 'get', path: '/api/v2/record_files/:mediaAssetId', operation: 'Read Media Asset (v2)' },
  ],
  mediaAssets: [
    { method: 'post', path: '/api/v3/media/assets/upload', operation: 'Generate Upload Credentials' },
    { method: 'post', path: '/api/v3/media/assets/register', operation: 'Register Media Asset' },
    { method: 'delete', path: '/api/v3/media/assets/all/:type', operation: 'Delete All Media Assets' },
    { method: 'post', path: '/api/v3/media/assets', operation: 'Create Media Asset' },
    { method: 'get', path: '/api/v3/media/assets', operation: 'List Media Assets' },
    { method: 'delete', path: '/api/v3/media/assets', operation: 'Delete Media Assets' },
    { method: 'get', path: '/api/v3/media/assets/:mediaAssetId', operation: 'Read Media Asset' },
    { method: 'patch', path: '/api/v3/media/assets/:mediaAssetId', operation: 'Update Media Asset' },
  ],
  reprioritize: [{ method: 'post', path: '/api/stream/reprioritize', operation: 'Reprioritize an active stream' }],
  restreamSync: [{ method: 'post', path: '/api/publish_token/:tokenId/restream/sync', operation: 'Sync restream' }],
};

/** `/api/transcoders/:transcoderId` → `/api/transcoders/{transcoderId}`, as the hosted documents write it. */
export const hostedPath = (path: string): string => path.replace(/:([A-Za-z]+)/g, '{$1}');

/** The message a not-provided operation answers (in `data.message`). */
export function notProvidedMessage(family: Family, op: NotProvided): string {
  return `Not provided by Streamgate: ${op.operation} (${op.method.toUpperCase()} ${hostedPath(op.path)}). ${FAMILIES[family].why}.`;
}

/** Every not-provided operation as a route: 501 with the hosted fail envelope, behind the API secret. */
export function notProvidedRoutes(): Array<RouteSpec & { answer: string }> {
  return (Object.keys(NOT_PROVIDED) as Family[]).flatMap((family) =>
    NOT_PROVIDED[family].map((op) => {
      const message = notProvidedMessage(family, op);
      const names = [...op.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
      return {
        method: op.method,
        path: op.path,
        summary: `${op.operation}: not provided by Streamgate (501)`,
        tag: FAMILIES[family].tag,
        auth: 'apiSecret' as const,
        params: names.length > 0 ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined,
        status: 501,
        handler: async () => {
          throw new ApiError(501, message);
        },
        // the OpenAPI document's description of the 501 answer
        answer: `Not provided: 501 {"status":"fail","data":{"message":"${message.replace(/"/g, '\\"')}"}}`,
      };
    }),
  );
}
