// createApp(services): the express app without listen (what supertest drives).
import express from 'express';
import { VERSION, type Services } from './services.js';
import { managementEndpoints, type RouteSpec } from './http/route.js';
import { tokenRoutes } from './http/management/tokens.routes.js';
import { webhookRoutes } from './http/management/webhooks.routes.js';
import { issuerRoutes } from './http/management/issuers.routes.js';
import { analyticsRoutes } from './http/management/analytics.routes.js';
import { accountRoutes, adminRoutes } from './http/management/accounts.routes.js';
import { geoRoutes } from './http/management/geo.routes.js';
import { clusterRoutes } from './http/management/clusters.routes.js';
import { securedStreamRoutes } from './http/management/secured-streams.routes.js';
import { sessionRoutes } from './http/management/sessions.routes.js';
import { notProvidedRoutes } from './http/management/not-provided.routes.js';
import { decisionRoutes } from './http/management/decisions.routes.js';
import { auditRoutes } from './http/management/audit.routes.js';
import { sharingRoutes } from './http/management/sharing.routes.js';
import { openApiDocument } from './http/openapi.js';
import { directorEndpoints } from './http/director.js';
import { DecisionRoutes } from './http/decision-routes.js';
import { CALLERS } from './callers/registry.js';
import { callerEndpoints } from './http/caller-routes.js';
import { callerContext } from './admission/context.js';
import { hookCallers, requireHookSecret } from './http/hooks/hook-secret.js';
import { TrustedProxies } from './http/client.js';
import { operationEndpoints } from './http/operations.js';
import { mountSurfaces, type Endpoint, type Guards } from './http/surfaces.js';
import {
  errorHandler,
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
    ...geoRoutes(s.store, s.accounts),
    ...clusterRoutes(s.store, s.clusters, s.accounts),
    ...tokenRoutes('publish', s.tokens, s.enforcer, s.patterns),
    ...tokenRoutes('subscribe', s.tokens, s.enforcer, s.patterns),
    ...securedStreamRoutes(s.tokens),
    ...webhookRoutes(s.webhooks, s.store, s.lifecycle, s.patterns),
    ...issuerRoutes(s.issuers, s.enforcer),
    ...analyticsRoutes(s.usage),
    ...sessionRoutes(s.store, s.sessions, s.audit),
    ...decisionRoutes(s.history, s.store),
    ...auditRoutes(s.audit),
    ...sharingRoutes(s.store, s.accounts, s.now),
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
  const managementBody = managementJsonBody(s.config.server.bodyLimitBytes);

  // The route table of every surface (src/http/surfaces.ts), each endpoint with the auth it
  // declares. The callers' routes come from the registry (src/callers/registry.ts); each parses its
  // caller's own encoding (JSON, form, raw bytes).
  const routes = managementRoutes(s);
  let openapi: Record<string, unknown> = {};
  const table: Endpoint[] = [
    ...managementEndpoints(routes, { unknownFields: s.config.api.unknownFields, logger: s.logger, bodyParsers: managementBody, trusted }),
    ...directorEndpoints(s, trusted),
    ...callerEndpoints(CALLERS, callerContext(s, trusted)),
    ...operationEndpoints(s, () => openapi),
  ];
  openapi = openApiDocument(table.flatMap((e) => e.openapi), VERSION);

  // What each declared auth is checked by. hooks.allowFrom: a caller's own routes from its listed
  // socket addresses need no hook secret. The director's token is read by its decision.
  const guards: Guards = {
    apiSecret: requireApiSecret(s.accounts),
    admin: requireAdminKey(s.config.adminKey),
    hookSecret: requireHookSecret(s.config.hooks.secret, { allowFrom: s.config.hooks.allowFrom, callers: hookCallers(table) }),
    streamToken: null,
  };

  // Request id, the request log line and metrics, and the drain rule: one layer for all three.
  app.use(requestContext(s.logger, s.metrics, () => s.draining));
  const onError = errorHandler(s.logger);

  // The decision endpoints (hooks, director) come first, in their own table
  // (src/http/decision-routes.ts): express tries every earlier layer's and route's path on each
  // request, and the director, behind every hook route, was the slowest adapter.
  const decisions = new DecisionRoutes();
  app.use(decisions.middleware());
  // Every endpoint behind the guard its declaration names; requests no endpoint answers meet the
  // guard of their namespace (/hooks on the decision table; /api, /admin here) before the 404.
  mountSurfaces({ app, decisions }, table, guards, managementBody);
  // The same decision table, answered by the server before express (src/http/server.ts); requests
  // served without the server (supertest) take the middleware above, with the same answers.
  app.locals.decisionDispatch = decisions.dispatcher(requestStart(s.logger, s.metrics, () => s.draining), onError);
  // what the tests enumerate
  app.locals.decisionRoutes = decisions;
  app.locals.routeTable = table;
  app.locals.managementRoutes = routes;

  app.use(notFound());
  app.use(onError);
  return app;
}
