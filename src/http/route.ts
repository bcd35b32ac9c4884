// A route table: each management endpoint is declared once, with its schemas. The same table
// mounts the express handlers (validating with the schemas) and generates the OpenAPI document.
import type { Express, Request, Response } from 'express';
import type { z } from 'zod';
import type { Account } from '../store/store.js';
import { parseOr400 } from './validation.js';

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

export function mountRoutes(router: Express, routes: RouteSpec[]): void {
  for (const r of routes) {
    router[r.method](r.path, async (req: Request, res: Response) => {
      const params = r.params ? parseOr400(r.params, req.params, 'path') : req.params;
      const query = r.query ? parseOr400(r.query, req.query, 'query') : req.query;
      const body = r.body ? parseOr400(r.body, req.body ?? {}, 'body') : req.body;
      const data = await r.handler({ params, query, body, account: res.locals.account as Account, req, res });
      res.status(r.status ?? 200).json({ status: 'success', data });
    });
  }
}
