// The callers' routes on the HTTP side: mounted on the decision routes with one handler shape for
// all of them (read the request, decide an admission through the Enforcer, start the session on
// allow, write the caller's answer), and described for the OpenAPI document.
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { ServerResponse } from 'node:http';
import type { Config } from '../config/schema.js';
import type { DecisionRoutes } from './decision-routes.js';
import { bodyParsers, FORM_PARAMETER_LIMIT } from './middleware.js';
import { fastFormBody, fastJsonBody } from './fast-body.js';
import { sendJson, sendText } from './answer.js';
import { peerAddress } from './client.js';
import type { BodyEncoding, Caller, CallerContext, CallerRoute, Outcome, Reply } from '../callers/caller.js';
import { CALLERS } from '../callers/registry.js';
import type { DocRoute } from './openapi.js';

/** Writes a described answer: its headers in order, then the body (the bytes of res.json / res.send). */
export function writeReply(res: ServerResponse, r: Reply): void {
  if (r.headers) for (const [k, v] of r.headers) res.setHeader(k, v);
  if (r.text !== undefined) sendText(res, r.status, r.text);
  else sendJson(res, r.status, r.json);
}

function parsers(body: BodyEncoding, config: Config): RequestHandler[] {
  const limit = config.server.bodyLimitBytes;
  switch (body) {
    case 'none':
      return [];
    case 'json':
      // The common shape (application/json, no encoding, within the limit) is read without
      // body-parser; anything else meets the same parser chain as before (src/http/fast-body.ts).
      return [fastJsonBody(limit, bodyParsers(body, limit))];
    case 'form':
      // likewise for form bodies (nginx-rtmp's notify calls)
      return [fastFormBody(limit, FORM_PARAMETER_LIMIT, bodyParsers(body, limit))];
    case 'json-or-form':
      return bodyParsers(body, limit);
    case 'raw':
      return [express.raw({ type: () => true, limit })];
    case 'image':
      return [express.raw({ type: () => true, limit: config.hooks.thumbnailMaxBytes })];
  }
}

function handler(caller: Caller, route: CallerRoute, ctx: CallerContext): RequestHandler {
  // Synchronous whenever the decision is (a cached token on the embedded store): no async frame.
  const settle = (res: Response, out: Outcome): void | Promise<void> => {
    if ('reply' in out) {
      if (out.signals) for (const s of out.signals) ctx.signal(s);
      writeReply(res, out.reply);
      return;
    }
    const answer = caller.answer;
    if (!answer) throw new TypeError(`caller ${caller.name} admits on ${route.path} but has no answer()`);
    const d = ctx.admit(caller.name, out.admit, peerAddress(res.req as Request));
    if (d instanceof Promise) return d.then((v) => writeReply(res, answer(v, out.admit)));
    writeReply(res, answer(d, out.admit));
  };
  return (req: Request, res: Response) => {
    const out = route.read(req, ctx);
    return out instanceof Promise ? out.then((o) => settle(res, o)) : settle(res, out);
  };
}

/** Mounts every route of every caller, each with its body parsers. */
export function mountCallers(routes: DecisionRoutes, callers: readonly Caller[], ctx: CallerContext): void {
  for (const caller of callers) {
    for (const route of caller.routes) {
      const chain = [...parsers(route.body, ctx.config), handler(caller, route, ctx)];
      if (route.method === 'GET') routes.get(route.path, ...chain);
      else if (route.method === 'POST') routes.post(route.path, ...chain);
      else routes.all(route.path, ...chain);
      if (route.below) routes.allUnder(route.path, ...chain);
    }
  }
}

/** The OpenAPI entries of every caller route (tag Hooks, hook secret). */
export function callerDocs(callers: readonly Caller[] = CALLERS): DocRoute[] {
  const out: DocRoute[] = [];
  for (const c of callers) {
    for (const r of c.routes) {
      for (const d of r.docs) {
        out.push({
          method: d.method ?? (r.method === 'GET' ? 'get' : r.method === 'POST' ? 'post' : 'get'),
          path: d.path ?? r.path,
          params: d.params,
          summary: d.summary,
          tag: 'Hooks',
          auth: 'hookSecret',
          body: d.body,
          bodyType: d.bodyType,
          status: d.status,
          answer: d.answer,
        });
      }
    }
  }
  return out;
}
