// The one route table of every surface and the one mount that guards it. Every endpoint Streamgate
// serves — management (/api/*), admin (/admin/*), director (/api/director/*, the JWKS), hooks
// (/hooks/*, from the caller registry) and operations (/healthz, /readyz, /metrics,
// /api/openapi.json, the dashboard) — is an `Endpoint` that names its authentication; `mountSurfaces`
// attaches the guard each declaration names, on express or on the decision table
// (src/http/decision-routes.ts, answered before express), and derives the guard of requests no
// endpoint answers from the same table. /api/openapi.json and docs/api.md's route list are
// generated from it (docs/architecture.md, The guard layer).
import { Router, type Express, type RequestHandler } from 'express';
import type { z } from 'zod';
import type { DecisionRoutes } from './decision-routes.js';

/**
 * What a caller must present: `apiSecret` (an account's API secret, Bearer), `admin` (the admin
 * key, Bearer), `hookSecret` (hooks.secret, header or ?secret=, or a hooks.allowFrom address),
 * `streamToken` (a publish/subscribe token or self-signed JWT, Bearer, which the decision reads),
 * `none`.
 */
export type Auth = 'apiSecret' | 'admin' | 'hookSecret' | 'streamToken' | 'none';

export type Surface = 'management' | 'admin' | 'director' | 'hooks' | 'operations';

/** The namespace of each surface that has one: requests under it that no endpoint answers meet its guard. */
export const NAMESPACES: Readonly<Partial<Record<Surface, string>>> = { management: '/api', admin: '/admin', hooks: '/hooks' };

/** What the OpenAPI document says of one operation (src/http/openapi.ts). */
export interface DocRoute {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** express path, e.g. /api/publish_token/:id */
  path: string;
  summary: string;
  tag: string;
  auth: Auth;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** Schema of `data` in the success envelope (documentation). */
  response?: z.ZodType;
  /** Success status (default 200). */
  status?: number;
  /** Request body media type when not JSON (form posts, images). */
  bodyType?: string;
  /** Success description when the answer is not the JSON envelope. */
  answer?: string;
  /** Headers of the success answer, by name (lower-case): what each says, and its JSON Schema type. */
  responseHeaders?: Record<string, { description: string; type: 'integer' | 'string' }>;
}

/** One entry of the route table. */
export interface Endpoint {
  surface: Surface;
  /** 'all': every method. */
  method: 'get' | 'post' | 'put' | 'delete' | 'patch' | 'all';
  path: string;
  /** Also every path below `path` (`${path}/…`). */
  below?: true;
  auth: Auth;
  /**
   * Where it is served: 'route' an express route; 'decision' the decision table, before express;
   * 'layer' an express mount (app.use: every method, `path` and below; what it does not answer goes on).
   */
  served: 'route' | 'decision' | 'layer';
  /** One line for docs/api.md's route list. */
  summary: string;
  /** What /api/openapi.json documents of it (none for the document itself and the dashboard). */
  openapi: DocRoute[];
  /** The caller whose route it is (hooks): hooks.allowFrom names callers. */
  caller?: string;
  /** What runs once the guard let the request in (body rules, then the handler). */
  handlers: RequestHandler[];
}

/**
 * What enforces each `auth` a declaration can name ('none' needs nothing): a handler run before the
 * endpoint's own, or null where the endpoint's decision is the guard (`streamToken`: the director
 * hands the Bearer token to the Enforcer, which refuses a missing or bad one; docs/api.md, Decision
 * table). A declaration naming an auth the map lacks is a programming error.
 */
export type Guards = Partial<Record<Exclude<Auth, 'none'>, RequestHandler | null>>;

/** The guard a declaration names, as the handlers to put before its own. */
export function guardOf(e: { method: string; path: string; auth: Auth }, guards: Guards): RequestHandler[] {
  if (e.auth === 'none') return [];
  const guard = Object.hasOwn(guards, e.auth) ? guards[e.auth] : undefined;
  if (guard === null) return [];
  if (typeof guard !== 'function') throw new TypeError(`${e.method.toUpperCase()} ${e.path}: no guard for auth '${String(e.auth)}'`);
  return [guard];
}

export interface Mounts {
  app: Express;
  /** Where 'decision' endpoints go (src/http/decision-routes.ts). */
  decisions?: DecisionRoutes;
}

/**
 * Mounts every endpoint behind the guard its declaration names, so whatever spelling of a path
 * the router accepts for it (any letter case, a trailing slash, HEAD for GET) meets that guard.
 */
export function mountEndpoints(target: Mounts, endpoints: readonly Endpoint[], guards: Guards): void {
  for (const e of endpoints) {
    const chain = [...guardOf(e, guards), ...e.handlers];
    if (e.served === 'decision') {
      const d = target.decisions;
      if (!d) throw new TypeError(`${e.method.toUpperCase()} ${e.path}: served by the decision table, and none was given`);
      if (e.method === 'get') d.get(e.path, ...chain);
      else if (e.method === 'post') d.post(e.path, ...chain);
      else if (e.method === 'all') d.all(e.path, ...chain);
      else throw new TypeError(`${e.method.toUpperCase()} ${e.path}: the decision table serves GET, POST or every method`);
      if (e.below) d.allUnder(e.path, ...chain);
    } else if (e.served === 'layer') {
      target.app.use(e.path, ...chain);
    } else {
      if (e.below) throw new TypeError(`${e.method.toUpperCase()} ${e.path}: an express route serves one path (a layer serves the paths below)`);
      target.app[e.method](e.path, ...chain);
    }
  }
}

/**
 * The auth guarding each namespace (NAMESPACES): the one its surface's endpoints declare. A
 * surface whose endpoints declare several has no single refusal for its unknown paths: an error.
 */
export function namespaceAuths(endpoints: readonly Endpoint[]): Array<{ surface: Surface; prefix: string; auth: Auth; served: Endpoint['served'] }> {
  const out: Array<{ surface: Surface; prefix: string; auth: Auth; served: Endpoint['served'] }> = [];
  for (const [surface, prefix] of Object.entries(NAMESPACES) as Array<[Surface, string]>) {
    const own = endpoints.filter((e) => e.surface === surface);
    if (own.length === 0) continue;
    const auths = new Set(own.map((e) => e.auth));
    const served = new Set(own.map((e) => (e.served === 'decision' ? 'decision' : 'route')));
    if (auths.size !== 1 || served.size !== 1) throw new TypeError(`surface ${surface}: its endpoints declare ${[...auths].join(', ')} served by ${[...served].join(', ')}; its namespace ${prefix} needs one`);
    out.push({ surface, prefix, auth: own[0].auth, served: own[0].served === 'decision' ? 'decision' : 'route' });
  }
  return out;
}

/**
 * The one mount of every surface: each endpoint behind the guard it declares (mountEndpoints), then
 * the guard of each namespace for requests no endpoint answers — on the decision table for the
 * hooks (as their routes are matched there), on express for /api and /admin, followed there by the
 * namespace's body rules (unroutedRequests). Mount after every other express layer but the 404.
 */
export function mountSurfaces(target: Mounts, endpoints: readonly Endpoint[], guards: Guards, unroutedBody: RequestHandler[]): void {
  mountEndpoints(target, endpoints, guards);
  const express: Record<string, RequestHandler> = {};
  for (const ns of namespaceAuths(endpoints)) {
    const [guard] = guardOf({ method: 'all', path: `${ns.prefix}/*`, auth: ns.auth }, guards);
    if (guard === undefined) continue;
    if (ns.served === 'decision') target.decisions?.unrouted(ns.prefix, guard);
    else express[ns.prefix] = guard;
  }
  if (Object.keys(express).length > 0) target.app.use(unroutedRequests(express, unroutedBody));
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
