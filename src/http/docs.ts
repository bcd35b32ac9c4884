// The endpoints outside the management route table (director, hooks, JWKS, health, metrics),
// described for /api/openapi.json with the same schemas their handlers validate with (the hooks'
// entries come from the caller registry, src/callers/registry.ts).
import { z } from 'zod';
import type { DocRoute } from './openapi.js';
import { directorPublishSchema, directorSubscribeSchema } from './director.js';
import { callerDocs } from './caller-routes.js';

const directorOut = z.object({
  urls: z.array(z.string()),
  jwt: z.string(),
  iceServers: z.array(z.object({ urls: z.array(z.string()), username: z.string().optional(), credential: z.string().optional() })),
  streamAccountId: z.string(),
  subscribeRequiresAuth: z.boolean().optional(),
});

export const DOCUMENTED_ONLY: DocRoute[] = [
  { method: 'post', path: '/api/director/publish', summary: 'Exchange a publish token for media URLs and a connection JWT', tag: 'Director', auth: 'streamToken', body: directorPublishSchema, response: directorOut },
  { method: 'post', path: '/api/director/subscribe', summary: 'Exchange a subscribe token, a self-signed JWT or nothing (open streams) for media URLs and a connection JWT', tag: 'Director', auth: 'streamToken', body: directorSubscribeSchema, response: directorOut },
  { method: 'get', path: '/.well-known/jwks.json', summary: 'Public keys of the director connection JWTs (current and previous)', tag: 'Director', auth: 'none', answer: 'A JWK Set' },
  ...callerDocs(),
  { method: 'get', path: '/healthz', summary: 'Process alive', tag: 'Operations', auth: 'none', answer: '200' },
  { method: 'get', path: '/readyz', summary: 'Store answers', tag: 'Operations', auth: 'none', answer: '200 ready, 503 store unavailable' },
  { method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag: 'Operations', auth: 'none', answer: 'Prometheus text' },
];
