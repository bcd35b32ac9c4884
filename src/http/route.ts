// The management routes: each endpoint is declared once, with its schemas and its authentication,
// as an entry of the route table of every surface (src/http/surfaces.ts): the same table mounts the
// express handlers (each behind the guard its `auth` names, validating with the schemas) and
// generates the OpenAPI document.
import type { Express, Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import type { Account } from '../store/store.js';
import { ApiError } from '../errors.js';
import { parseOr400Async } from './validation.js';
import { Turns } from './turns.js';
import { ignoredFieldsHeader, prepareBody } from './body-fields.js';
import type { Logger } from '../observability/logger.js';
import { untypedBodyAsJson } from './middleware.js';
import { mountEndpoints, type Auth, type Endpoint, type Guards as SurfaceGuards } from './surfaces.js';
import { clientAddress, peerAddress, type TrustedProxies } from './client.js';
import { apiSecretActor } from '../domain/audit.js';
import type { Actor } from '../audit/actor.js';

export { namespaceOf, unroutedRequests, type Auth } from './surfaces.js';

/** What enforces the auths of the management routes (of the guards of every surface, src/http/surfaces.ts). */
export type Guards = Record<'apiSecret' | 'admin', RequestHandler>;

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The caller's account (routes with auth 'apiSecret'). */
  account: Account;
  /** Who calls, as the audit log records a write (docs/api.md#audit-log): the management services' last argument. */
  actor: Actor;
  req: Request;
  res: Response;
}

// biome-ignore lint/suspicious/noExplicitAny: a route table holds routes of every params/query/body type; each route() call is checked with its own
export interface RouteSpec<P = any, Q = any, B = any> {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** express path, e.g. /api/publish_token/:id */
  path: string;
  summary: string;
  tag: string;
  auth: Auth;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** Schema of `data` in the success envelope (documentation). */
  response?: z.ZodType;
  /** Success status (default 200). */
  status?: number;
  /** Headers the handler sets on a success answer (documentation). */
  responseHeaders?: Record<string, { description: string; type: 'integer' | 'string' }>;
  /** A body sent without any Content-Type is read as JSON (clients that send none; docs/compatibility.md). */
  jsonWithoutContentType?: true;
  /** Success description when the handler answers itself (not the JSON envelope): it has sent the answer when it returns. */
  answer?: string;
  handler: (ctx: HandlerContext<P, Q, B>) => Promise<unknown>;
}

export const route = <P, Q, B>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> => spec;

export interface BodyOptions {
  /** api.unknownFields: leave out (and name) fields the schema does not know, or refuse them (400). */
  unknownFields: 'ignore' | 'reject';
  logger?: Logger;
}

export interface MountOptions extends BodyOptions {
  guards: SurfaceGuards;
  /** The body rules (415/413/400), run after the guard: no body is read for a refused caller. */
  bodyParsers: RequestHandler[];
}

/** The routes as entries of the route table (surface admin for /admin paths, else management). */
/**
 * Who calls a route, for the audit log: the API secret's actor (its hash's first 8 hex digits) or
 * `admin`, the client address (forwarding headers believed only from `trusted` proxies; without,
 * the peer) and the request id.
 */
export function actorOf(auth: Auth, req: Request, res: Response, trusted?: TrustedProxies): Actor {
  const account = res.locals.account as Account | undefined;
  const actor = auth === 'admin' ? 'admin' : account?.secretHash !== undefined ? apiSecretActor(account.secretHash) : 'anonymous';
  return { actor, address: (trusted ? clientAddress(req, trusted) : peerAddress(req)) ?? null, requestId: (res.locals.requestId as string | undefined) ?? null };
}

export function managementEndpoints(
  routes: readonly RouteSpec[],
  opts: { unknownFields: BodyOptions['unknownFields']; logger?: Logger; bodyParsers: RequestHandler[]; trusted?: TrustedProxies },
): Endpoint[] {
  const turns = new Turns();
  const dropUnknown = opts.unknownFields === 'ignore';
  return routes.map((r): Endpoint => {
    const bodyRules = r.jsonWithoutContentType ? [untypedBodyAsJson, ...opts.bodyParsers] : opts.bodyParsers;
    const handler = async (req: Request, res: Response) => {
      let params: unknown, query: unknown, body: unknown;
      try {
        // Asynchronous: a body's stream patterns are compiled off the event loop, and bodies take
        // turns for their synchronous checks (costing a body's 100 patterns holds the loop a while,
        // docs/api.md#validating-a-writes-patterns; eight writes at once must not hold one turn for their sum).
        params = r.params ? await parseOr400Async(r.params, req.params, 'path') : req.params;
        query = r.query ? await parseOr400Async(r.query, req.query, 'query') : req.query;
        if (r.body) {
          await turns.wait();
          const prepared = prepareBody(r.body, req.body ?? {}, dropUnknown);
          if (prepared.ignored.length > 0) {
            res.set('x-streamgate-ignored-fields', ignoredFieldsHeader(prepared.ignored));
            opts.logger?.debug({ reqId: res.locals.requestId, route: r.path, ignored: prepared.ignored.slice(0, 20) }, 'ignored unknown body fields');
          }
          body = await parseOr400Async(r.body, prepared.value, 'body');
        } else body = req.body;
      } catch (e) {
        const retry = e instanceof ApiError ? e.details.retryAfterSeconds : undefined;
        if (typeof retry === 'number') res.set('retry-after', String(retry));
        throw e;
      }
      const actor = actorOf(r.auth, req, res, opts.trusted);
      const data = await r.handler({ params, query, body, account: res.locals.account as Account, actor, req, res });
      if (r.answer !== undefined && res.headersSent) return;
      res.status(r.status ?? 200).json({ status: 'success', data });
    };
    const surface = r.path === '/admin' || r.path.startsWith('/admin/') ? 'admin' : 'management';
    const { handler: _h, jsonWithoutContentType: _j, ...doc } = r;
    return { surface, method: r.method, path: r.path, auth: r.auth, served: 'route', summary: r.summary, openapi: [doc], handlers: [...bodyRules, handler] };
  });
}

/**
 * Mounts every route behind the guard its declaration names (the one mount of src/http/surfaces.ts),
 * then its body rules, validation and handler.
 */
export function mountRoutes(router: Express, routes: RouteSpec[], opts: MountOptions): void {
  mountEndpoints({ app: router }, managementEndpoints(routes, opts), opts.guards);
}
