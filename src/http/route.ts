// A route table: each management endpoint is declared once, with its schemas. The same table
// mounts the express handlers (validating with the schemas) and generates the OpenAPI document.
import type { Express, Request, Response } from 'express';
import type { z } from 'zod';
import type { Account } from '../store/store.js';
import { ApiError } from '../errors.js';
import { parseOr400Async } from './validation.js';
import { Turns } from './turns.js';
import { ignoredFieldsHeader, prepareBody } from './body-fields.js';
import type { Logger } from '../observability/logger.js';

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
  handler: (ctx: HandlerContext<P, Q, B>) => Promise<unknown>;
}

export const route = <P, Q, B>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> => spec;

export interface BodyOptions {
  /** api.unknownFields: leave out (and name) fields the schema does not know, or refuse them (400). */
  unknownFields: 'ignore' | 'reject';
  logger?: Logger;
}

export function mountRoutes(router: Express, routes: RouteSpec[], opts: BodyOptions = { unknownFields: 'ignore' }): void {
  const turns = new Turns();
  const dropUnknown = opts.unknownFields === 'ignore';
  for (const r of routes) {
    router[r.method](r.path, async (req: Request, res: Response) => {
      let params, query, body;
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
