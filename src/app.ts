// createApp(services): the express app without listen (what supertest drives).
import express from 'express';
import { VERSION, type Services } from './services.js';
import { mountRoutes, unroutedRequests, type Guards, type RouteSpec } from './http/route.js';
import { tokenRoutes } from './http/management/tokens.routes.js';
import { webhookRoutes } from './http/management/webhooks.routes.js';
import { analyticsRoutes } from './http/management/analytics.routes.js';
import { accountRoutes, adminRoutes } from './http/management/accounts.routes.js';
import { geoRoutes } from './http/management/geo.routes.js';
import { clusterRoutes } from './http/management/clusters.routes.js';
import { securedStreamRoutes } from './http/management/secured-streams.routes.js';
import { sessionRoutes } from './http/management/sessions.routes.js';
import { notProvidedRoutes } from './http/management/not-provided.routes.js';
import { openApiDocument } from './http/openapi.js';
import { DOCUMENTED_ONLY } from './http/docs.js';
import { directorCors, mountDirector } from './http/director.js';
import { DecisionRoutes } from './http/decision-routes.js';
import { CALLERS } from './callers/registry.js';
import { mountCallers } from './http/caller-routes.js';
import { callerContext } from './callers/context.js';
import { requireHookSecret } from './http/hooks/hook-secret.js';
import { TrustedProxies } from './http/client.js';
import { mountDashboard } from './http/dashboard.js';
import { configWarnings } from './observability/warnings.js';
import {
  discardBody,
  errorHandler,
  jsonBody,
  managementJsonBody,
  notFound,
  requestContext,
  requestStart,
  requireAdminKey,
  requireApiSecret,
} from './http/middleware.js';


export function managementRoutes(s: Services): RouteSpec[] {
  return [
    ...adminRoutes(s.accounts, (id) => s.sessions.secretDeleted(id)),
    ...accountRoutes(s.accounts),
    ...geoRoutes(s.store),
    ...clusterRoutes(s.store, s.clusters),
    ...tokenRoutes('publish', s.tokens, s.enforcer, s.patterns),
    ...tokenRoutes('subscribe', s.tokens, s.enforcer, s.patterns),
    ...securedStreamRoutes(s.tokens),
    ...webhookRoutes(s.webhooks, s.store, s.lifecycle, s.patterns),
    ...analyticsRoutes(s.usage),
    ...sessionRoutes(s.store, s.sessions),
    // last: hosted endpoints Streamgate does not provide, answered 501 (docs/compatibility.md)
    ...notProvidedRoutes(),
  ];
}

export function createApp(s: Services): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETags: a decision must never be answered 304 from a cache, and hashing every body costs
  // time on the decision path (docs/performance.md).
  app.set('etag', false);
  app.set('trust proxy', s.config.server.trustProxy);
  const trusted = new TrustedProxies(s.config.hooks.trustedProxies, s.config.hooks.realIpHeader);
  const limit = s.config.server.bodyLimitBytes;

  const routes = managementRoutes(s);
  const openapi = openApiDocument([...routes, ...DOCUMENTED_ONLY], VERSION);

  // Request id, the request log line and metrics, and the drain rule: one layer for all three.
  app.use(requestContext(s.logger, s.metrics, () => s.draining));
  const onError = errorHandler(s.logger);

  // The decision endpoints come first, in their own table (src/http/decision-routes.ts): express
  // tries every earlier layer's and route's path on each request, and the director, behind every
  // hook route, was the slowest adapter. The callers' routes come from the registry
  // (src/callers/registry.ts); each parses its caller's own encoding (JSON, form, raw bytes).
  // hooks.allowFrom: a caller's own routes from its listed socket addresses need no secret.
  const hookGuard = requireHookSecret(s.config.hooks.secret, { allowFrom: s.config.hooks.allowFrom, callers: CALLERS });
  const decisions = new DecisionRoutes().guard('/hooks', hookGuard);
  mountCallers(decisions, CALLERS, callerContext(s, trusted));
  // The director: the token is in the Authorization header, so before the API-secret check of /api.
  mountDirector(decisions, s, trusted);
  app.use(decisions.middleware());
  // The same table, answered by the server before express (src/http/server.ts); requests served
  // without the server (supertest) take the middleware above, with the same answers.
  app.locals.decisionDispatch = decisions.dispatcher(requestStart(s.logger, s.metrics, () => s.draining), onError);
  app.locals.decisionRoutes = decisions; // what the tests enumerate
  // The director's preflight (OPTIONS) and any other method on its paths.
  app.use('/api/director', directorCors, ...jsonBody(limit));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'success', data: { alive: true } });
  });
  app.get('/readyz', async (_req, res) => {
    if (s.draining) {
      res.status(503).json({ status: 'fail', data: { message: 'Shutting down', ready: false, store: s.store.kind } });
      return;
    }
    try {
      await s.store.ping();
      const warnings = await configWarnings(s.config, s.accounts);
      res.json({ status: 'success', data: { ready: true, store: s.store.kind, ...(warnings.length > 0 ? { warnings } : {}) } });
    } catch {
      res.status(503).json({ status: 'fail', data: { message: 'Store unavailable', ready: false, store: s.store.kind } });
    }
  });
  app.get('/api/openapi.json', discardBody(limit), (_req, res) => {
    res.json(openapi);
  });
  app.get('/metrics', discardBody(limit), async (_req, res) => {
    res.setHeader('content-type', s.metrics.registry.contentType);
    res.send(await s.metrics.registry.metrics());
  });
  mountDashboard(app, s.config.dashboard);

  // Every management route behind the guard its declaration names, then its JSON body; requests
  // no route answers meet the guard of their namespace (/api, /admin) before the 404.
  const guards: Guards = { apiSecret: requireApiSecret(s.accounts), admin: requireAdminKey(s.config.adminKey) };
  const managementBody = managementJsonBody(limit);
  mountRoutes(app, routes, { unknownFields: s.config.api.unknownFields, logger: s.logger, guards, bodyParsers: managementBody });
  app.use(unroutedRequests({ '/admin': guards.admin, '/api': guards.apiSecret }, managementBody));
  app.locals.managementRoutes = routes; // what the tests enumerate

  app.use(notFound());
  app.use(onError);
  return app;
}
