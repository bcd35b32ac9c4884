// createApp(services): the express app without listen (what supertest drives).
import express from 'express';
import { readFileSync } from 'node:fs';
import type { Services } from './services.js';
import { mountRoutes, type RouteSpec } from './http/route.js';
import { tokenRoutes } from './http/management/tokens.routes.js';
import { accountRoutes, adminRoutes } from './http/management/accounts.routes.js';
import { openApiDocument } from './http/openapi.js';
import {
  errorHandler,
  jsonBody,
  notFound,
  requestId,
  requestLog,
  requireAdminKey,
  requireApiSecret,
} from './http/middleware.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export function managementRoutes(s: Services): RouteSpec[] {
  return [...adminRoutes(s.accounts), ...accountRoutes(s.accounts), ...tokenRoutes('publish', s.tokens), ...tokenRoutes('subscribe', s.tokens)];
}

export function createApp(s: Services): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', s.config.server.trustProxy);
  app.use(requestId());
  app.use(requestLog(s.logger));

  const routes = managementRoutes(s);
  const openapi = openApiDocument(routes, VERSION);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'success', data: { alive: true } });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await s.store.ping();
      res.json({ status: 'success', data: { ready: true, store: s.store.kind } });
    } catch {
      res.status(503).json({ status: 'fail', data: { message: 'Store unavailable', ready: false, store: s.store.kind } });
    }
  });
  app.get('/api/openapi.json', (_req, res) => {
    res.json(openapi);
  });

  // Authentication and body parsing by prefix, then every route with its full path.
  app.use('/admin', requireAdminKey(s.config.adminKey), ...jsonBody(s.config.server.bodyLimitBytes));
  app.use('/api', requireApiSecret(s.accounts), ...jsonBody(s.config.server.bodyLimitBytes));
  mountRoutes(app, routes);

  app.use(notFound());
  app.use(errorHandler(s.logger));
  return app;
}
