// The operational endpoints' entries of the route table (src/http/surfaces.ts): health, readiness,
// metrics, the OpenAPI document and the dashboard, none of which needs credentials
// (docs/api.md, Operational endpoints).
import type { Services } from '../services.js';
import { configWarnings } from '../observability/warnings.js';
import { discardBody } from './middleware.js';
import { dashboardEndpoint } from './dashboard.js';
import type { Endpoint } from './surfaces.js';

const tag = 'Operations';

/** `openapi`: the document, generated from the table once it is built. */
export function operationEndpoints(s: Services, openapi: () => Record<string, unknown>): Endpoint[] {
  const limit = s.config.server.bodyLimitBytes;
  const out: Endpoint[] = [
    {
      surface: 'operations',
      method: 'get',
      path: '/healthz',
      auth: 'none',
      served: 'route',
      summary: 'Process alive',
      openapi: [{ method: 'get', path: '/healthz', summary: 'Process alive', tag, auth: 'none', answer: '200' }],
      handlers: [
        (_req, res) => {
          res.json({ status: 'success', data: { alive: true } });
        },
      ],
    },
    {
      surface: 'operations',
      method: 'get',
      path: '/readyz',
      auth: 'none',
      served: 'route',
      summary: 'Store answers',
      openapi: [{ method: 'get', path: '/readyz', summary: 'Store answers', tag, auth: 'none', answer: '200 ready, 503 store unavailable' }],
      handlers: [
        async (_req, res) => {
          if (s.draining) {
            res.status(503).json({ status: 'fail', data: { message: 'Shutting down', ready: false, store: s.store.kind } });
            return;
          }
          try {
            await s.store.ping();
            const warnings = await configWarnings(s.config, s.accounts, s.audit);
            res.json({ status: 'success', data: { ready: true, store: s.store.kind, ...(warnings.length > 0 ? { warnings } : {}) } });
          } catch {
            res.status(503).json({ status: 'fail', data: { message: 'Store unavailable', ready: false, store: s.store.kind } });
          }
        },
      ],
    },
    {
      surface: 'operations',
      method: 'get',
      path: '/api/openapi.json',
      auth: 'none',
      served: 'route',
      summary: 'The OpenAPI 3.1 document of every route',
      // the document does not describe itself
      openapi: [],
      handlers: [
        discardBody(limit),
        (_req, res) => {
          res.json(openapi());
        },
      ],
    },
    {
      surface: 'operations',
      method: 'get',
      path: '/metrics',
      auth: 'none',
      served: 'route',
      summary: 'Prometheus metrics',
      openapi: [{ method: 'get', path: '/metrics', summary: 'Prometheus metrics', tag, auth: 'none', answer: 'Prometheus text' }],
      handlers: [
        discardBody(limit),
        async (_req, res) => {
          res.setHeader('content-type', s.metrics.registry.contentType);
          res.send(await s.metrics.registry.metrics());
        },
      ],
    },
  ];
  const dashboard = dashboardEndpoint(s.config.dashboard);
  if (dashboard) out.push(dashboard);
  return out;
}
