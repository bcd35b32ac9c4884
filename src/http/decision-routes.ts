// The decision endpoints' own router: one Map lookup instead of express's walk through every
// layer and route in order (path-to-regexp match, next() recursion, a route's inner stack). The
// director walked every hook route before its own, which kept it below its throughput target
// (docs/performance.md); on the other endpoints the table saves a little CPU per request (the
// larger gain was src/http/server.ts; docs/decision-path.md#what-the-decision-path-does-to-be-fast). The production server asks the table first, before
// any express machinery (dispatcher() below, called by src/http/server.ts); the table is also
// mounted as the first layer of the express app, for requests handed to the app directly
// (supertest). Either way a request keeps express's req/res objects, the same body parsers and
// error handler, and a path the table does not know goes down the express app untouched.
//
// Matching follows express's defaults so the move changes no answer: paths are matched
// case-insensitively, one trailing slash is ignored, a GET route also answers HEAD, the path is
// the raw (undecoded) one, and a handler's rejected promise goes to the error handler. One
// difference, chosen: OPTIONS on a hook path is a 404 (express answered it with its automatic
// Allow list); the director's CORS preflight is still answered by its own middleware.
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';

type Handler = RequestHandler;
type Method = 'GET' | 'POST' | '*';

interface Route {
  /** The pattern the request metrics and log label the request with (as express's req.route.path). */
  label: string;
  chains: Map<Method, Handler[]>;
}

interface Guard {
  /** Lower-cased, and the same with a trailing slash (what a path below it starts with). */
  prefix: string;
  below: string;
  /** The guard as a one-handler chain (made once, not per request). */
  chain: Handler[];
}

/** A path lower-cased, without one trailing slash (the query is already gone): how the table matches it. */
export function routeKey(path: string): string {
  let p = path;
  if (p.length > 1 && p.charCodeAt(p.length - 1) === 47 /* / */) p = p.slice(0, -1);
  return p.toLowerCase();
}

export class DecisionRoutes {
  private readonly exact = new Map<string, Route>();
  private readonly under: Array<{ prefix: string; route: Route }> = [];
  private readonly guards: Guard[] = [];
  private readonly unroutedGuards: Guard[] = [];

  get(path: string, ...handlers: Handler[]): this {
    return this.add(path, 'GET', handlers);
  }

  post(path: string, ...handlers: Handler[]): this {
    return this.add(path, 'POST', handlers);
  }

  /** Every method. */
  all(path: string, ...handlers: Handler[]): this {
    return this.add(path, '*', handlers);
  }

  /** Every method on every path below `prefix` (`${prefix}/anything`); labelled `${prefix}/*rest`. */
  allUnder(prefix: string, ...handlers: Handler[]): this {
    const route: Route = { label: `${prefix}/*rest`, chains: new Map([['*', handlers]]) };
    this.under.push({ prefix: `${prefix.toLowerCase()}/`, route });
    return this;
  }

  /**
   * Runs before any route at or below `prefix` is looked up, matched or not (the hook secret:
   * an unknown hook path without the secret is still 401, as when it was an express app.use).
   */
  guard(prefix: string, handler: Handler): this {
    const p = prefix.toLowerCase();
    this.guards.push({ prefix: p, below: `${p}/`, chain: [handler] });
    return this;
  }

  /**
   * Runs for a request at or below `prefix` that no route answers, before it goes on to the app
   * (the namespace guard of src/http/surfaces.ts: the routes carry their own guards, so an unknown
   * hook path is refused as the hook routes are, and one with the secret goes on to the 404).
   */
  unrouted(prefix: string, handler: Handler): this {
    const p = prefix.toLowerCase();
    this.unroutedGuards.push({ prefix: p, below: `${p}/`, chain: [handler] });
    return this;
  }

  /** Every route as "<method> <pattern>" (method in lower case, "all" for any): for tests and docs. */
  list(): string[] {
    const out: string[] = [];
    const routes = [...this.exact.values(), ...this.under.map((u) => u.route)];
    for (const r of routes) for (const m of r.chains.keys()) out.push(`${m === '*' ? 'all' : m.toLowerCase()} ${r.label}`);
    return out;
  }

  private add(path: string, method: Method, handlers: Handler[]): this {
    const key = routeKey(path);
    let route = this.exact.get(key);
    if (!route) {
      route = { label: path, chains: new Map() };
      this.exact.set(key, route);
    }
    if (route.chains.has(method)) throw new Error(`${method} ${path} is declared twice`);
    route.chains.set(method, handlers);
    return this;
  }

  private find(key: string, method: string): { route: Route; chain: Handler[] } | undefined {
    let route = this.exact.get(key);
    if (!route) {
      for (const u of this.under) {
        if (key.startsWith(u.prefix)) {
          route = u.route;
          break;
        }
      }
      if (!route) return undefined;
    }
    const chain =
      route.chains.get(method as Method) ??
      (method === 'HEAD' ? route.chains.get('GET') : undefined) ??
      route.chains.get('*');
    return chain ? { route, chain } : undefined;
  }

  /**
   * The server's own entry to the table (src/http/server.ts), before any express machinery: a
   * request whose path and method a route answers is handled here and true returned; any other
   * request is left untouched (false) for the express app. The request and response already have
   * express's prototypes (the server builds them so); what express's app.handle and router would
   * set is set here, `begin` gives the request its context as requestContext does, and an error
   * goes to the same error handler as in the app. The answer is the one the express middleware
   * below gives. One case differs: a chain that ends by calling next() without an error (no
   * handler in the table does) is answered the 404 of the app's notFound, not passed down the app.
   */
  dispatcher(begin: (req: Request, res: Response) => void, onError: ErrorRequestHandler): (req: IncomingMessage, res: ServerResponse) => boolean {
    const noop = () => {};
    return (request, response) => {
      const req = request as Request;
      const res = response as Response;
      // req.path: express's parse of the URL (as the middleware reads it).
      const key = routeKey(req.path);
      const found = this.find(key, req.method);
      if (!found) return false;
      // What express's app.handle and router.handle set before the first layer.
      req.res = res;
      res.req = req;
      if (!res.locals) res.locals = Object.create(null);
      req.originalUrl = req.url;
      req.baseUrl = '';
      req.params = {};
      const done = (err?: unknown) => {
        if (err !== undefined && err !== null && err !== 'route' && err !== 'router') {
          onError(err, req, res, noop);
          return;
        }
        onError(new ApiError(404, `Not found: ${req.method} ${req.path}`), req, res, noop);
      };
      req.next = done as NextFunction;
      begin(req, res);
      let guard: Guard | undefined;
      for (const g of this.guards) {
        if (key === g.prefix || key.startsWith(g.below)) {
          guard = g;
          break;
        }
      }
      if (guard === undefined) {
        // The common case (the routes carry their guards): no closure per request.
        (req as { route?: unknown }).route = { path: found.route.label };
        run(found.chain, 0, req, res, done);
        return true;
      }
      const dispatch = () => {
        (req as { route?: unknown }).route = { path: found.route.label };
        run(found.chain, 0, req, res, done);
      };
      run(guard.chain, 0, req, res, (err?: unknown) => (err === undefined ? dispatch() : done(err)));
      return true;
    };
  }

  /** The express middleware: handles the requests the table knows, passes on the rest. */
  middleware(): RequestHandler {
    return (req, res, next) => {
      // req.path: express's parse of the URL (cached for the request), which also reads the path
      // of an absolute-form request line (GET http://host/hooks/authorize).
      const key = routeKey(req.path);
      const guard = this.guards.find((g) => key === g.prefix || key.startsWith(g.below));
      const dispatch = () => {
        const found = this.find(key, req.method);
        if (!found) {
          const namespace = this.unroutedGuards.find((g) => key === g.prefix || key.startsWith(g.below));
          return namespace ? run(namespace.chain, 0, req, res, next) : next();
        }
        // What express's router sets: the request log and metrics label by the route pattern.
        (req as { route?: unknown }).route = { path: found.route.label };
        run(found.chain, 0, req, res, next);
      };
      if (!guard) return dispatch();
      run(guard.chain, 0, req, res, (err?: unknown) => (err === undefined ? dispatch() : next(err)));
    };
  }
}

/** Calls chain[i]; its next() calls the one after it, and the end of the chain (or an error) goes to `done`. */
function run(chain: Handler[], i: number, req: Request, res: Response, done: NextFunction): void {
  const step = (err?: unknown) => {
    if (err !== undefined && err !== null && err !== 'route') return done(err);
    if (err === 'route' || i + 1 >= chain.length) return done();
    run(chain, i + 1, req, res, done);
  };
  try {
    const ret = chain[i](req, res, step as NextFunction) as unknown;
    if (ret !== undefined && typeof (ret as Promise<unknown>).then === 'function') {
      (ret as Promise<unknown>).then(undefined, (e: unknown) => done(e ?? new Error('rejected without a reason')));
    }
  } catch (e) {
    done(e);
  }
}
