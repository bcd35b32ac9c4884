// A route table: each management endpoint is declared once, with its schemas and its
// authentication. The same table mounts the express handlers (each behind the guard its `auth`
// names, validating with the schemas) and generates the OpenAPI document.
import { Router, type Express, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { Account } from '../store/store.js';
import { ApiError } from '../errors.js';
import { parseOr400Async } from './validation.js';
import { Turns } from './turns.js';
import { ignoredFieldsHeader, prepareBody } from './body-fields.js';
import type { Logger } from '../observability/logger.js';
import { untypedBodyAsJson } from './middleware.js';

export type Auth = 'apiSecret' | 'admin' | 'none';

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The caller's account (routes with auth 'apiSecret'). */
  account: Account;
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
  /** A body sent without any Content-Type is read as JSON (clients that send none; docs/compatibility.md). */
  jsonWithoutContentType?: true;
  handler: (ctx: HandlerContext<P, Q, B>) => Promise<unknown>;
}

export const route = <P, Q, B>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> => spec;

export interface BodyOptions {
  /** api.unknownFields: leave out (and name) fields the schema does not know, or refuse them (400). */
  unknownFields: 'ignore' | 'reject';
  logger?: Logger;
}

/** What enforces each `auth` a route can declare ('none' needs nothing). */
export type Guards = Record<Exclude<Auth, 'none'>, RequestHandler>;

export interface MountOptions extends BodyOptions {
  guards: Guards;
  /** The body rules (415/413/400), run after the guard: no body is read for a refused caller. */
  bodyParsers: RequestHandler[];
}

/** The guard a declaration names; a declaration naming no known guard is a programming error. */
function guardOf(r: RouteSpec, guards: Guards): RequestHandler[] {
  if (r.auth === 'none') return [];
  const guard = Object.hasOwn(guards, r.auth) ? guards[r.auth] : undefined;
  if (typeof guard !== 'function') throw new TypeError(`${r.method.toUpperCase()} ${r.path}: no guard for auth '${String(r.auth)}'`);
  return [guard];
}

/**
 * Mounts every route behind the guard its declaration names, so whatever spelling of a path the
 * router accepts for a route (any letter case, a trailing slash, HEAD for GET) meets that guard.
 */
export function mountRoutes(router: Express, routes: RouteSpec[], opts: MountOptions): void {
  const turns = new Turns();
  const dropUnknown = opts.unknownFields === 'ignore';
  for (const r of routes) {
    const bodyRules = r.jsonWithoutContentType ? [untypedBodyAsJson, ...opts.bodyParsers] : opts.bodyParsers;
    router[r.method](r.path, ...guardOf(r, opts.guards), ...bodyRules, async (req: Request, res: Response) => {
      let params: unknown, query: unknown, body: unknown;
      try {
        // Asynchronous: a body's stream patterns are compiled off the event loop, and bodies take
        // turns for their synchronous checks (100 pattern costs are ~5-15 ms; eight writes at once
        // must not hold one turn for their sum).
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
      const data = await r.handler({ params, query, body, account: res.locals.account as Account, req, res });
      res.status(r.status ?? 200).json({ status: 'success', data });
    });
  }
}

/**
 * The namespace (one of `prefixes`, lower case) a request path falls in, under every spelling of it:
 * any letter case, repeated separators, percent-encoded or backslash separators.
 */
export function namespaceOf(path: string, prefixes: Iterable<string>): string | undefined {
  let p: string;
  try {
    p = decodeURIComponent(path);
  } catch {
    p = path.replace(/%2f|%5c/gi, '/');
  }
  p = p.replace(/\\/g, '/').replace(/\/{2,}/g, '/').toLowerCase();
  for (const prefix of prefixes) if (p === prefix || p.startsWith(`${prefix}/`)) return prefix;
  return undefined;
}

/**
 * For requests no route answered (an unknown path or method, OPTIONS, a spelling such as `//api/…`
 * or `/api%2F…` that no route matches): the guard of their namespace, then the body rules, then on
 * to the 404. A caller without credentials is refused as by the namespace's routes, one with them
 * learns the path does not exist. It never leads to a handler, so it cannot allow anything.
 */
export function unroutedRequests(namespaces: Record<string, RequestHandler>, bodyParsers: RequestHandler[]): RequestHandler {
  const chains = new Map<string, Router>();
  for (const [prefix, guard] of Object.entries(namespaces)) {
    const chain = Router();
    chain.use(guard, ...bodyParsers);
    chains.set(prefix.toLowerCase(), chain);
  }
  return (req, res, next) => {
    const ns = namespaceOf(req.path, chains.keys());
    if (ns === undefined) return next();
    chains.get(ns)!(req, res, next);
  };
}
