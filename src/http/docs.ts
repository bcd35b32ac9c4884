// The endpoints outside the management route table (director, hooks, JWKS, health, metrics),
// described for /api/openapi.json with the same schemas their handlers validate with.
import { z } from 'zod';
import type { DocRoute } from './openapi.js';
import { directorPublishSchema, directorSubscribeSchema } from './director.js';
import { authorizeBodySchema } from './hooks/authorize.js';
import { mediamtxAuthSchema } from './hooks/mediamtx.js';
import { eventBodySchema } from './hooks/events.js';

const directorOut = z.object({
  urls: z.array(z.string()),
  jwt: z.string(),
  iceServers: z.array(z.object({ urls: z.union([z.string(), z.array(z.string())]), username: z.string().optional(), credential: z.string().optional() })),
  streamAccountId: z.string(),
  subscribeRequiresAuth: z.boolean().optional(),
});

export const DOCUMENTED_ONLY: DocRoute[] = [
  { method: 'post', path: '/api/director/publish', summary: 'Exchange a publish token for media URLs and a connection JWT', tag: 'Director', auth: 'streamToken', body: directorPublishSchema, response: directorOut },
  { method: 'post', path: '/api/director/subscribe', summary: 'Exchange a subscribe token, a self-signed JWT or nothing (open streams) for media URLs and a connection JWT', tag: 'Director', auth: 'streamToken', body: directorSubscribeSchema, response: directorOut },
  { method: 'get', path: '/.well-known/jwks.json', summary: 'Public keys of the director connection JWTs (current and previous)', tag: 'Director', auth: 'none', answer: 'A JWK Set' },
  { method: 'post', path: '/hooks/authorize', summary: 'Generic decision: 200 {"allowed":true,...}, 401/403 {"allowed":false,reason,message}, 503 store down', tag: 'Hooks', auth: 'hookSecret', body: authorizeBodySchema, answer: 'The decision' },
  { method: 'get', path: '/hooks/auth-request', summary: 'nginx auth_request / Traefik forwardAuth / Envoy ext_authz (any method; Envoy: /hooks/auth-request/<path>)', tag: 'Hooks', auth: 'hookSecret', answer: 'Exactly 200 to allow, 401/403 to deny' },
  { method: 'post', path: '/hooks/nginx-rtmp', summary: 'nginx-rtmp notify calls (also GET with notify_method get)', tag: 'Hooks', auth: 'hookSecret', bodyType: 'application/x-www-form-urlencoded', answer: '200 to allow, 403 to drop the client' },
  { method: 'post', path: '/hooks/mediamtx/auth', summary: 'MediaMTX authMethod: http', tag: 'Hooks', auth: 'hookSecret', body: mediamtxAuthSchema, answer: '200 allow; 401 no credentials (challenge); 403 deny' },
  { method: 'post', path: '/hooks/mediamtx/event', summary: 'MediaMTX runOn* hooks (JSON, form or query: event, path, sourceId, readerId, segmentPath)', tag: 'Hooks', auth: 'hookSecret', answer: '200' },
  { method: 'post', path: '/hooks/srs', summary: 'SRS http_hooks (every action)', tag: 'Hooks', auth: 'hookSecret', answer: '200 {"code":0} to allow; 403 {"code":403,"message"} to deny' },
  { method: 'post', path: '/hooks/ome/admission', summary: 'OvenMediaEngine AdmissionWebhooks (X-OME-Signature verified)', tag: 'Hooks', auth: 'hookSecret', answer: '200 {"allowed":true|false,...}' },
  { method: 'post', path: '/hooks/events', summary: 'Generic lifecycle events (feeds, recordings)', tag: 'Hooks', auth: 'hookSecret', body: eventBodySchema, status: 202, answer: 'Queued' },
  { method: 'post', path: '/hooks/thumbnail', summary: 'A stream thumbnail (?streamId=<account>/<stream>, image body)', tag: 'Hooks', auth: 'hookSecret', bodyType: 'image/jpeg', status: 202, answer: 'Queued' },
  { method: 'get', path: '/healthz', summary: 'Process alive', tag: 'Operations', auth: 'none', answer: '200' },
  { method: 'get', path: '/readyz', summary: 'Store answers', tag: 'Operations', auth: 'none', answer: '200 ready, 503 store unavailable' },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag: 'Operations', auth: 'none', answer: 'Prometheus text' },
];
